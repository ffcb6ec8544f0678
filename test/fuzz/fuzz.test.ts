/**
 * The HTTP edge under generated requests: every endpoint of the master and
 * its agents, valid calls made invalid in every way the generators know,
 * and valid calls aimed at live frameworks, offers and tasks. A few
 * thousand requests here; `npm run fuzz` sends a hundred thousand.
 *
 * A failure prints fast-check's seed, path and counterexample; the
 * counterexample holds the cluster's seed, and so does the error. Replay
 * with FUZZ_SEED=<seed> FUZZ_PATH=<path>; FUZZ_RUNS changes the number of runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { mutateJson, mutateProto } from './mutate.js';
import type { RequestSpec } from './requests.js';
import { fuzzParameters, runInput, runOnce, Stats, verdict } from './session.js';
import { send, type WireRequest } from './transport.js';
import { Watchdog } from './watchdog.js';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 200);
const MAX_STEPS = 40;

describe('fuzzing the master and its agents', () => {
  it(`answers ${RUNS} runs of up to ${MAX_STEPS} generated steps without a 5xx, a hang or a crash`, async () => {
    const stats = new Stats();
    const watchdog = new Watchdog(30_000);
    let reported = false;
    // Shrinking runs with hangs in them may take minutes: the failure as found is shown at once.
    const onFailure = (error: unknown) => {
      if (!reported) console.error(`fuzz: failure found, shrinking it now:\n${(error as Error)?.message ?? String(error)}`);
      reported = true;
    };
    try {
      await fc.assert(
        fc.asyncProperty(runInput(MAX_STEPS), (input) => runOnce(input, { timeoutMs: 5_000, stats, watchdog, onFailure })),
        fuzzParameters(RUNS),
      );
    } finally {
      await watchdog.stop();
    }
    const statuses = [...stats.byStatus].sort().map(([s, n]) => `${s}: ${n}`);
    console.log(`fuzz: ${stats.cases} cases in ${stats.runs} runs (${statuses.join(', ')})`);
    expect(stats.cases).toBeGreaterThan(RUNS);
  }, 600_000);
});

// The harness must see what it is there to see, or a quiet run proves nothing.
describe('the fuzz harness', () => {
  const SPEC: RequestSpec = {
    server: 0,
    method: 'GET',
    target: '/',
    version: 'HTTP/1.1',
    headers: [],
    host: 'normal',
    body: { kind: 'none' },
    framing: 'length',
    followUp: false,
    hold: false,
    abort: 'no',
  };

  it('reports a 5xx, a hang and a connection dropped without an answer, and passes a 4xx', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/500') res.writeHead(500).end('boom');
      else if (req.url === '/drop') req.socket.destroy();
      else if (req.url === '/404') res.writeHead(404).end('no');
      // Anything else is never answered.
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const wire = (target: string): WireRequest => ({
      port,
      method: 'GET',
      target,
      version: 'HTTP/1.1',
      headers: [['Host', 'x']],
      body: Buffer.alloc(0),
      framing: 'length',
      followUp: false,
      hold: false,
      abort: 'no',
      operator: false,
    });
    try {
      const judged = async (target: string) => verdict({ ...SPEC, target }, wire(target), await send(wire(target), 300));
      expect(await judged('/500')).toBe('answered 500');
      expect(await judged('/hang')).toMatch(/hang/);
      expect(await judged('/drop')).toMatch(/closed without an answer/);
      expect(await judged('/404')).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('mutates JSON into what a JS value cannot hold: repeated keys, bare NaN, deep nesting', () => {
    const repeated = mutateJson({ type: 'KILL', a: { b: 1 } }, [{ kind: 'repeat-key', at: 0, value: 'ACCEPT', before: false }]);
    expect(repeated).toBe('{"type":"KILL","a":{"b":1},"type":"ACCEPT"}');
    expect(mutateJson({ a: { b: 1 } }, [{ kind: 'literal', at: 0.9, text: 'NaN' }])).toBe('{"a":{"b":NaN}}');
    expect(mutateJson({ a: 1 }, [{ kind: 'nest', at: 0.9, depth: 3, bracket: '[' }])).toBe('{"a":[[[1]]]}');
  });

  it('gives a nested protobuf field a wrong wire type inside well-framed parents', () => {
    const call = Buffer.from(encodeProto('mesos.v1.scheduler.Call', { type: 'SUBSCRIBE', subscribe: { framework_info: { user: 'u', name: 'n' } } }));
    expect(decodeProto('mesos.v1.scheduler.Call', call).ok).toBe(true);
    // The last field in the tree is framework_info.name, two messages down.
    const bad = mutateProto(call, [{ kind: 'wire-type', at: 0.99, wireType: 0 }]);
    expect(bad.length).toBe(call.length);
    expect(bad.subarray(0, -3)).toEqual(call.subarray(0, -3));
    expect(decodeProto('mesos.v1.scheduler.Call', bad).ok).toBe(false);
  });
});
