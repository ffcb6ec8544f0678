/**
 * Every input of the cluster's port is in the trace (`input:<method>`), so
 * a trace alone re-runs the cluster: a replay of recorded runs (schedulers,
 * launches, acknowledgements, faults, crashes and restarts, messages with
 * bytes, quotas with maps) finds no divergence, and a tampered trace
 * diverges at the entry tampered with. The input record is deterministic,
 * and a cluster rebuilt from its first inputs goes on as the original did.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Cluster } from '../../src/core/cluster.js';
import { decodeArgs, encodeArgs, fromBase64, toBase64 } from '../../src/core/input-record.js';
import { applyInput, rebuildCluster } from '../../src/core/rebuild.js';
import type { TraceEntry } from '../../src/core/kernel/trace.js';
import { replay, type TraceLine } from '../../src/scenario/replay.js';
import { commandTask, connect, makeCluster, type TestCluster } from './helpers.js';

const lines = (entries: readonly TraceEntry[]): TraceLine[] =>
  entries.map((e) => ({ seq: e.seq, timeMs: e.timeMs, kind: e.kind, line: e.line }));

/** A run with a bit of everything: launches, acks, a message, a quota, faults, an agent crash and restart. */
function recordedRun(seed = 7): TestCluster {
  const cluster = makeCluster({ agents: 2, seed, networkLatencyMs: 2 });
  const s = connect(cluster, { checkpoint: true });
  cluster.advance(1_000);
  const offer = s.firstOffer();
  s.accept(offer.id, [
    commandTask('short', offer.agentId, 'sleep 5', 'cpus:0.5;mem:32'),
    commandTask('long', offer.agentId, 'sleep 600', 'cpus:0.5;mem:32'),
  ]);
  cluster.advance(100);
  s.acknowledgeAll();
  s.call({ type: 'MESSAGE', agentId: offer.agentId, executorId: 'long', data: new Uint8Array([0, 1, 2, 250, 255]) });
  cluster.updateQuota({
    force: true,
    configs: [{ role: 'r1', guarantees: new Map([['cpus', 1]]), limits: new Map([['cpus', 2]]) }],
  });
  cluster.inject({
    type: 'network_rule',
    rule: { action: 'drop', from: offer.agentId, to: 'master', types: ['STATUS_UPDATE'], probability: 0.5 },
  });
  cluster.advance(10_000);
  s.acknowledgeAll();
  cluster.inject({ type: 'crash_agent', agentId: offer.agentId });
  cluster.advance(5_000);
  cluster.inject({ type: 'restart_agent', agentId: offer.agentId, recover: 'reconnect' });
  cluster.inject({ type: 'partition', nodes: [cluster.agents[1]!.id, 'master'] });
  cluster.advance(100_000);
  cluster.inject({ type: 'heal', nodes: [cluster.agents[1]!.id, 'master'] });
  cluster.advance(20_000);
  s.acknowledgeAll();
  s.kill('long');
  cluster.advance(10_000);
  s.acknowledgeAll();
  s.disconnect();
  cluster.advance(1_000);
  return cluster;
}

describe('the input record', () => {
  it('puts every input of the port into the trace, with its arguments and time', () => {
    const cluster = recordedRun();
    const kinds = new Set(
      cluster.trace
        .entries()
        .filter((e) => e.kind.startsWith('input:'))
        .map((e) => e.kind),
    );
    for (const kind of ['addAgent', 'subscribe', 'call', 'advanceTo', 'operator', 'inject', 'disconnect'])
      expect(kinds).toContain(`input:${kind}`);
    expect(cluster.inputs().length).toBe(cluster.trace.entries().filter((e) => e.kind.startsWith('input:')).length);
    const start = cluster.trace.entries()[0]!;
    expect(start.kind).toBe('cluster:start');
    expect(JSON.parse(start.line.slice(start.line.indexOf('{')))).toMatchObject({
      seed: '7',
      networkLatencyMs: 2,
      master: { port: 5050 },
    });
  });

  it('is deterministic: the same seed and inputs give the same record, byte for byte', () => {
    const a = recordedRun(3).trace;
    const b = recordedRun(3).trace;
    expect(lines(b.entries())).toEqual(lines(a.entries()));
    expect(b.hash()).toBe(a.hash());
    expect(recordedRun(4).trace.hash()).not.toBe(a.hash());
  });

  it('costs nothing when off: no input entries, no record', () => {
    const cluster = new Cluster({ seed: 1, master: { hostname: 'h', ip: '127.0.0.1', port: 5050, version: '1.11.0' } });
    cluster.advance(1_000);
    expect(cluster.recordsInputs).toBe(false);
    expect(cluster.inputs()).toEqual([]);
    expect(cluster.trace.entries().some((e) => e.kind.startsWith('input:'))).toBe(false);
  });

  it('writes bytes as base64, maps, left-out arguments and executor checks as tagged JSON, and reads them back', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255, 7]);
    for (let n = 0; n <= bytes.length; n++)
      expect(fromBase64(toBase64(bytes.subarray(0, n)))).toEqual(bytes.subarray(0, n));
    expect(toBase64(Buffer.from('hello'))).toBe(Buffer.from('hello').toString('base64'));
    const check = Object.assign(() => 'no', { claims: { fid: 'f', eid: 'e', cid: 'c' } });
    const text = encodeArgs(['a', undefined, { data: Buffer.from([9, 8]), m: new Map([['cpus', 1]]) }, check]);
    expect(text).toBe(
      '["a",{"$undefined":true},{"data":{"$bytes":"CQg="},"m":{"$map":[["cpus",1]]}},{"$authorizer":{"fid":"f","eid":"e","cid":"c"}}]',
    );
    const seen: unknown[] = [];
    const args = decodeArgs(text, (claims) => (seen.push(claims), () => undefined));
    expect(args[1]).toBeUndefined();
    expect(args[2]).toEqual({ data: new Uint8Array([9, 8]), m: new Map([['cpus', 1]]) });
    expect(typeof args[3]).toBe('function');
    expect(seen).toEqual([{ fid: 'f', eid: 'e', cid: 'c' }]);
  });

  it('writes plain arguments as plain JSON, and finds a tagged form however deep it sits', () => {
    const plain = [{ tasks: [{ id: 't', resources: [{ name: 'cpus', milli: 10 }], labels: [] }], n: 1.5, s: null }];
    expect(encodeArgs(plain)).toBe(JSON.stringify(plain));
    const deep = (leaf: unknown) => [{ a: [{ b: { c: [leaf] } }] }];
    expect(encodeArgs(deep(new Uint8Array([1])))).toBe('[{"a":[{"b":{"c":[{"$bytes":"AQ=="}]}}]}]');
    expect(encodeArgs(deep(new Map([['k', 1]])))).toBe('[{"a":[{"b":{"c":[{"$map":[["k",1]]}]}}]}]');
    expect(encodeArgs(deep(new Set(['x'])))).toBe('[{"a":[{"b":{"c":[{"$set":["x"]}]}}]}]');
    expect(encodeArgs(deep(undefined))).toBe('[{"a":[{"b":{"c":[{"$undefined":true}]}}]}]');
    expect(encodeArgs([{ check: Object.assign(() => 'no', { claims: null }) }])).toBe(
      '[{"check":{"$authorizer":null}}]',
    );
  });
});

describe('replay', () => {
  it('re-runs a recorded run from its trace alone and finds no divergence', async () => {
    const cluster = recordedRun();
    const entries = cluster.trace.entries();
    expect(entries.some((e) => e.kind === 'agent:unreachable' || e.kind.startsWith('net:'))).toBe(true);
    const progress: number[] = [];
    const result = await replay(lines(entries), { onProgress: (n) => progress.push(n), progressEvery: 100 });
    expect(result.divergence).toBeUndefined();
    expect(result.entries).toBe(entries.length);
    expect(result.hash).toBe(cluster.trace.hash());
    expect(progress.length).toBe(Math.floor(entries.length / 100));
    expect(await replay(lines(entries), { checkInvariants: false })).toEqual({ ...result, divergence: undefined });
  });

  it('reports the first divergence of a tampered trace: its seq, time, the line expected and the line produced', async () => {
    const entries = lines(recordedRun().trace.entries());
    const at = entries.findIndex((e, i) => i > 50 && e.kind === 'task:status');
    const original = entries[at]!;
    const tampered = original.line.replace('TASK_', 'TASK_X');
    expect(tampered).not.toBe(original.line);
    entries[at] = { ...original, line: tampered };
    const result = await replay(entries);
    expect(result.divergence).toEqual({
      seq: original.seq,
      timeMs: original.timeMs,
      expected: tampered,
      produced: original.line,
    });
    expect(result.entries).toBe(at);
  });

  it('reports an input applied differently (another clock move) at the first entry that changes', async () => {
    const entries = lines(recordedRun().trace.entries());
    const at = entries.findIndex((e) => e.kind === 'input:advanceTo' && e.timeMs > 20_000);
    const next = entries[at + 1]!;
    // The clock stops earlier: the next entry the file has comes later than the replay gets to it.
    entries[at] = {
      ...entries[at]!,
      line: entries[at]!.line.replace(/\[(\d+)\]$/, (_m, t: string) => `[${Number(t) - 5_000}]`),
    };
    const result = await replay(entries);
    expect(result.divergence?.seq).toBeGreaterThan(entries[at]!.seq);
    expect(result.divergence?.seq).toBeLessThanOrEqual(next.seq + 1_000);
  });

  it('says so when the file ends before the run does, or starts elsewhere than at cluster:start', async () => {
    const entries = lines(recordedRun().trace.entries());
    const cut = entries.findIndex((e, i) => i > 20 && e.kind.startsWith('input:')) + 1;
    const result = await replay(entries.slice(0, cut));
    expect(result.divergence).toMatchObject({ seq: cut + 1, expected: undefined });
    await expect(replay(entries.slice(1))).rejects.toThrow(/cluster:start/);
  });

  it('replays random runs without divergence (fast-check)', async () => {
    const seed = Date.now() % 100_000;
    console.log(`replay property seed: ${seed}`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.constant('crash'),
            fc.constant('restart'),
            fc.constant('launch'),
            fc.constant('ack'),
            fc.integer({ min: 0, max: 40_000 }),
          ),
          { maxLength: 25 },
        ),
        async (steps) => {
          const cluster = makeCluster({ agents: 2, seed: steps.length });
          const s = connect(cluster, { checkpoint: true });
          let n = 0;
          for (const step of steps) {
            if (typeof step === 'number') cluster.advance(step);
            else if (step === 'crash') cluster.inject({ type: 'crash_agent', agentId: cluster.agents[0]!.id });
            else if (step === 'restart')
              cluster.inject({
                type: 'restart_agent',
                agentId: cluster.agents[0]!.id,
                recover: n % 2 === 0 ? 'reconnect' : 'cleanup',
              });
            else if (step === 'ack') s.acknowledgeAll();
            else {
              const offer = s.offers()[0];
              if (offer !== undefined)
                s.accept(offer.id, [commandTask(`t${n++}`, offer.agentId, `sleep ${n}`, 'cpus:0.1;mem:8')]);
            }
          }
          const result = await replay(lines(cluster.trace.entries()));
          expect(result.divergence).toBeUndefined();
          expect(result.hash).toBe(cluster.trace.hash());
        },
      ),
      { seed, numRuns: 25 },
    );
  });
});

describe('a cluster rebuilt from its first inputs', () => {
  it('has the same trace up to there, and the same from there on for the same later inputs', () => {
    const cluster = recordedRun();
    const inputs = cluster.inputs();
    const at = Math.floor(inputs.length / 2);
    const rebuilt = rebuildCluster(cluster.options, inputs, at);
    const upTo = rebuilt.trace.length;
    expect(lines(rebuilt.trace.entries())).toEqual(lines(cluster.trace.entries().slice(0, upTo)));
    for (const input of inputs.slice(at)) {
      applyInput(rebuilt, input.name, input.args);
      rebuilt.drainOutbox();
    }
    expect(lines(rebuilt.trace.entries())).toEqual(lines(cluster.trace.entries()));
    expect(() => applyInput(rebuilt, 'drainOutbox', [])).toThrow(/not an input/);
    expect(() => applyInput(rebuilt, 'nothing', [])).toThrow(/not an input/);
  });
});
