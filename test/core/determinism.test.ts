/**
 * Same seed, same inputs: the same trace, entry for entry. A scripted day
 * of a small cluster runs twice on fresh clusters; on a mismatch the
 * assertion names the seed and the first diverging entry with its time.
 */
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../src/core/cluster.js';
import { firstDivergence, type TraceEntry } from '../../src/core/kernel/trace.js';
import { commandTask, connect, makeCluster, type TestScheduler } from './helpers.js';

/** Launches one task per command on the scheduler's first offer, if it holds one. */
function launch(s: TestScheduler, prefix: string, commands: readonly string[], refuseMs: number): void {
  const offer = s.offers()[0];
  if (offer === undefined) return;
  const tasks = commands.map((command, i) => commandTask(`${prefix}-${i}`, offer.agentId, command, 'cpus:0.5;mem:64'));
  s.accept(offer.id, tasks, refuseMs);
}

function declineAll(s: TestScheduler, refuseMs: number): void {
  const ids = s.offers().map((o) => o.id);
  if (ids.length > 0) s.decline(ids, refuseMs);
}

/** One scripted run; returns the cluster and every event the schedulers saw. */
function script(seed: number): { cluster: Cluster; events: string[] } {
  const cluster = makeCluster({ agents: 3, seed, taskLaunchDelayMs: 20, networkLatencyMs: 2 });
  // Faults are inputs like any other: random drops, delays and repeats come from the seed.
  cluster.addNetworkRule({
    action: 'delay',
    types: ['STATUS_UPDATE', 'RUN_TASK'],
    probability: 0.3,
    delayMs: 50,
    jitterMs: 400,
  });
  cluster.addNetworkRule({ action: 'duplicate', types: ['STATUS_UPDATE_ACK'], probability: 0.2, delayMs: 10 });
  cluster.advance(10); // the agents' registrations cross the network
  const a = connect(cluster, {
    name: 'a',
    capabilities: ['TASK_KILLING_STATE'],
    failoverTimeoutMs: 30_000,
    checkpoint: true,
  });
  const b = connect(cluster, { name: 'b', capabilities: ['PARTITION_AWARE'], failoverTimeoutMs: 5_000 });
  const c = connect(cluster, { name: 'c', capabilities: ['MULTI_ROLE'], roles: ['web', 'batch'] });
  const sinks = [a.sink, b.sink, c.sink];

  launch(a, 'a', ['sleep 3', 'exit 2', 'echo hi', './server --port 8080'], 60_000);
  declineAll(a, 2_000);
  cluster.advance(1_000);
  launch(b, 'b', ['true', 'false', 'unknown-command', 'sleep 0.5 && exit 3'], 0);
  declineAll(c, 3_000);
  cluster.advance(250);
  a.acknowledgeAll();
  b.acknowledgeAll();

  a.kill('a-3');
  b.kill('b-2');
  b.kill('never-launched', cluster.agents[0]!.id);
  a.call({ type: 'RECONCILE', tasks: [{ taskId: 'a-1' }, { taskId: 'unknown' }] });
  b.call({ type: 'RECONCILE', tasks: [] });
  cluster.advance(3_000);
  launch(c, 'c', ['sleep 20', 'sleep 1', 'false || echo x'], 5_000);
  a.acknowledgeAll();

  // b loses its connection for longer than its failover timeout; a comes back in time.
  b.disconnect();
  a.disconnect();
  cluster.advance(10_000);
  sinks.push(a.resubscribe());
  for (let i = 0; i < 12; i++) {
    cluster.advance(7_000 + i * 500);
    a.acknowledgeAll();
    if (i % 2 === 0) c.acknowledgeAll();
    if (i === 4) c.call({ type: 'SUPPRESS', roles: ['batch'] });
    if (i === 6) c.call({ type: 'REVIVE', roles: [] });
    if (i === 8) launch(a, 'a2', ['sleep 5', 'exit 0'], 1_000);
  }
  // An agent crashes and comes back, with tasks of a (which checkpoints) and c on it.
  cluster.crashAgent(cluster.agents[1]!.id);
  cluster.advance(500);
  cluster.restartAgent(cluster.agents[1]!.id);
  a.acknowledgeAll();
  c.call({ type: 'TEARDOWN' });
  cluster.advance(60_000);
  const events = sinks.flatMap((sink, i) => sink.events.map((e) => `${i} ${JSON.stringify(e, hex)}`));
  return { cluster, events };
}

function hex(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? [...value].map((b) => b.toString(16).padStart(2, '0')).join('') : value;
}

function divergence(seed: number, a: readonly TraceEntry[], b: readonly TraceEntry[]): string {
  const i = firstDivergence(a, b);
  if (i < 0) return `seed ${seed}: traces are identical`;
  return [
    `seed ${seed}: traces diverge at entry ${i} (of ${a.length} and ${b.length})`,
    `  first run:  ${a[i]?.line ?? '<end of trace>'}`,
    `  second run: ${b[i]?.line ?? '<end of trace>'}`,
  ].join('\n');
}

describe('determinism', () => {
  it.each([1, 2, 20231114])('seed %i: two runs give the same trace, hash and events', (seed) => {
    const first = script(seed);
    const second = script(seed);
    const a = first.cluster.trace.entries();
    const b = second.cluster.trace.entries();
    expect(firstDivergence(a, b), divergence(seed, a, b)).toBe(-1);
    expect(second.cluster.trace.hash(), `seed ${seed}`).toBe(first.cluster.trace.hash());
    expect(second.events, `seed ${seed}: the schedulers saw different events`).toEqual(first.events);

    // The script did reach the interesting paths.
    const kinds = new Set(a.map((e) => e.kind));
    const expected = [
      'task:launch',
      'task:status',
      'call:kill',
      'call:reconcile',
      'call:decline',
      'framework:failover-expired',
    ];
    for (const kind of [...expected, 'net:delay', 'net:duplicate', 'agent:crash', 'agent:reregistered']) {
      expect(kinds, `seed ${seed}: no '${kind}' entry`).toContain(kind);
    }
    const states = new Set(first.events.flatMap((e) => /"state":"(\w+)"/.exec(e)?.[1] ?? []));
    for (const state of ['TASK_FINISHED', 'TASK_FAILED', 'TASK_KILLING', 'TASK_KILLED', 'TASK_LOST', 'TASK_GONE']) {
      expect(states, `seed ${seed}: no ${state} seen`).toContain(state);
    }
  });

  it('a different seed gives a different trace, and the report names where', () => {
    const one = script(1).cluster.trace;
    const two = script(2).cluster.trace;
    expect(one.hash()).not.toBe(two.hash());
    const report = divergence(2, one.entries(), two.entries());
    expect(report).toMatch(/^seed 2: traces diverge at entry \d+/);
    expect(report).toContain('first run:');
  });
});
