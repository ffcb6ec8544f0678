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
import { describe, expect, it } from 'vitest';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { mutateJson, mutateProto } from './mutate.js';
import { operatorVerdict } from './operator-judge.js';
import { StreamCheck } from './stream-check.js';
import type { RequestSpec } from './requests.js';
import { assertRuns, runInput, runOnce, verdict } from './session.js';
import { send, type WireRequest, type WireResponse } from './transport.js';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 200);
const MAX_STEPS = 40;

describe('fuzzing the master and its agents', () => {
  it(`answers ${RUNS} runs of up to ${MAX_STEPS} generated steps without a 5xx, a hang or a crash`, async () => {
    const stats = await assertRuns(runInput(MAX_STEPS), runOnce, RUNS);
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
      const judged = async (target: string) =>
        verdict({ ...SPEC, target }, wire(target), await send(wire(target), 300));
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
    const repeated = mutateJson({ type: 'KILL', a: { b: 1 } }, [
      { kind: 'repeat-key', at: 0, value: 'ACCEPT', before: false },
    ]);
    expect(repeated).toBe('{"type":"KILL","a":{"b":1},"type":"ACCEPT"}');
    expect(mutateJson({ a: { b: 1 } }, [{ kind: 'literal', at: 0.9, text: 'NaN' }])).toBe('{"a":{"b":NaN}}');
    expect(mutateJson({ a: 1 }, [{ kind: 'nest', at: 0.9, depth: 3, bracket: '[' }])).toBe('{"a":[[[1]]]}');
  });

  it('gives a nested protobuf field a wrong wire type inside well-framed parents', () => {
    const call = Buffer.from(
      encodeProto('mesos.v1.scheduler.Call', {
        type: 'SUBSCRIBE',
        subscribe: { framework_info: { user: 'u', name: 'n' } },
      }),
    );
    expect(decodeProto('mesos.v1.scheduler.Call', call).ok).toBe(true);
    // The last field in the tree is framework_info.name, two messages down.
    const bad = mutateProto(call, [{ kind: 'wire-type', at: 0.99, wireType: 0 }]);
    expect(bad.length).toBe(call.length);
    expect(bad.subarray(0, -3)).toEqual(call.subarray(0, -3));
    expect(decodeProto('mesos.v1.scheduler.Call', bad).ok).toBe(false);
  });
});

describe('the operator API verdict', () => {
  const request = (call: object): WireRequest => ({
    port: 1,
    method: 'POST',
    target: '/api/v1',
    version: 'HTTP/1.1',
    headers: [
      ['Host', 'x'],
      ['Content-Type', 'application/json'],
    ],
    body: Buffer.from(JSON.stringify(call)),
    framing: 'length',
    followUp: false,
    hold: false,
    abort: 'no',
    operator: true,
  });
  const answer = (status: number, body: string | Buffer, headers: Record<string, string> = {}): WireResponse => ({
    outcome: 'response',
    status,
    headers,
    body: Buffer.from(body),
    stream: false,
    followUp: undefined,
    ms: 1,
  });
  const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

  it('passes the answers upstream gives and flags the others', () => {
    const quota = request({ type: 'UPDATE_QUOTA', update_quota: { quota_configs: [] } });
    expect(operatorVerdict(quota, answer(200, ''))).toBeUndefined();
    expect(operatorVerdict(quota, answer(200, '{}'))).toMatch(/a 200 to UPDATE_QUOTA with a body/);
    expect(operatorVerdict(quota, answer(400, 'Invalid QuotaConfig: x', TEXT))).toBeUndefined();
    expect(operatorVerdict(quota, answer(400, 'two\nlines', TEXT))).toMatch(/more than one line/);
    expect(operatorVerdict(quota, answer(400, '', TEXT))).toMatch(/no reason/);
    expect(operatorVerdict(quota, answer(409, 'busy', { 'content-type': 'application/json' }))).toMatch(/Content-Type/);
    expect(operatorVerdict(quota, answer(500, '500 Internal Server Error.', TEXT))).toMatch(/answered 500/);
    expect(operatorVerdict(quota, answer(503, 'Service Unavailable', TEXT))).toMatch(/not at the master's capacity/);
    expect(operatorVerdict(quota, answer(202, ''))).toMatch(/answered 202/);
  });

  it('wants a Response of the type called to a read, and a stream to a SUBSCRIBE', () => {
    const health = request({ type: 'GET_HEALTH' });
    const json = { 'content-type': 'application/json' };
    expect(
      operatorVerdict(health, answer(200, '{"type":"GET_HEALTH","get_health":{"healthy":true}}', json)),
    ).toBeUndefined();
    expect(operatorVerdict(health, answer(200, '{"type":"GET_STATE"}', json))).toMatch(/Response of type GET_STATE/);
    expect(operatorVerdict(health, answer(200, ''))).toMatch(/Content-Type/);
    expect(operatorVerdict(request({ type: 'SUBSCRIBE' }), answer(200, '', json))).toMatch(/without an event stream/);
    const protobufOnly = { ...health, headers: [...health.headers, ['Accept', 'application/x-protobuf']] as const };
    expect(
      operatorVerdict(protobufOnly, answer(200, '{"type":"GET_HEALTH","get_health":{"healthy":true}}', json)),
    ).toMatch(/asked for application\/x-protobuf alone/);
  });

  it('reads an event stream chunk by chunk and record by record, and reports the first break', () => {
    const record = (event: object) => {
      const text = JSON.stringify(event);
      return `${Buffer.byteLength(text)}\n${text}`;
    };
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const good = new StreamCheck('operator', 'application/json');
    const bytes = Buffer.from(
      chunk(record({ type: 'SUBSCRIBED', subscribed: {} })) + chunk(record({ type: 'HEARTBEAT' })),
    );
    // Byte by byte: a record or a chunk cut anywhere is only incomplete.
    for (const byte of bytes) good.push(Buffer.from([byte]));
    expect([good.records, good.types, good.problem]).toEqual([2, ['SUBSCRIBED', 'HEARTBEAT'], undefined]);
    const badLength = new StreamCheck('operator', 'application/json');
    badLength.push(Buffer.from(chunk('x\n{}')));
    expect(badLength.problem).toMatch(/bad length prefix/);
    const notFirst = new StreamCheck('operator', 'application/json');
    notFirst.push(Buffer.from(chunk(record({ type: 'HEARTBEAT' }))));
    expect(notFirst.problem).toMatch(/first event is HEARTBEAT/);
    const cut = new StreamCheck('scheduler', 'application/json');
    cut.push(Buffer.from(`${chunk('40\n{"type":')}0\r\n\r\n`));
    expect(cut.problem).toMatch(/ended inside a record/);
  });
});
