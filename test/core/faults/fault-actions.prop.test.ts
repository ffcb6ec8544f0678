/**
 * Property test of faults as inputs: random sequences of every fault type
 * (framework connections dropped and stalled, executors crashed, tasks
 * failed, hung and spiked past their memory limit, memory limits changed,
 * wall clock jumps, agents crashed, restarted, added and removed) among launches, kills,
 * acknowledgements, re-subscriptions and time, on a small cluster. After
 * every step the books agree (`checkAllInvariants`: resources conserved),
 * a refused fault has left the trace as it was, and in the end every
 * task's states, as its framework saw them over all its streams, follow
 * the task state table.
 *
 * It prints its fast-check seed (FC_SEED replays it); on failure fast-check
 * prints the shrunk steps too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../../src/core/faults/vocabulary.js';
import { FAULT_TYPES as ALL_FAULT_TYPES } from '../../../src/wire/sim/faults.js';
import type { TaskSpec } from '../../../src/core/model/types.js';
import {
  commandTask,
  connect,
  customExecutor,
  executorTask,
  expectLegalTransitions,
  makeCluster,
  resources,
  traceKinds,
  type RecordingSink,
  type TestCluster,
  type TestScheduler,
} from '../helpers.js';

type Step =
  | { readonly kind: 'fault'; readonly fault: FaultPick }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'launch'; readonly fw: number; readonly n: number }
  | { readonly kind: 'kill'; readonly fw: number; readonly n: number }
  | { readonly kind: 'ack' | 'resubscribe' };

/** A fault with its targets as indexes, turned into ids when it runs. */
interface FaultPick {
  readonly type: Fault['type'];
  readonly fw: number;
  readonly task: number;
  readonly agent: number;
  readonly amount: number;
}

/** Every fault type but those of the network and the masters, which the other property tests draw. */
const FAULT_TYPES = ALL_FAULT_TYPES.filter(
  (t) =>
    ![
      'partition',
      'heal',
      'network_rule',
      'remove_network_rule',
      'crash_master',
      'restart_master',
      'master_failover',
    ].includes(t),
);

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('fault' as const),
      fault: fc.record({
        type: fc.constantFrom(...FAULT_TYPES),
        fw: fc.nat(1),
        task: fc.nat(5),
        agent: fc.nat(1),
        amount: fc.integer({ min: 1, max: 200 }),
      }),
    }),
    weight: 3,
  },
  fc.record({
    kind: fc.constant('advance' as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 15_000, max: 60_000 })),
  }),
  {
    arbitrary: fc.record({ kind: fc.constantFrom('launch', 'kill' as const), fw: fc.nat(1), n: fc.nat(6) }),
    weight: 2,
  },
  fc.constantFrom({ kind: 'ack' as const }, { kind: 'resubscribe' as const }),
);

class World {
  /** Every stream each framework has had, oldest first. */
  readonly sinks: RecordingSink[][];
  launched = 0;
  refused = 0;
  applied = new Set<string>();

  constructor(
    readonly cluster: TestCluster,
    readonly schedulers: readonly TestScheduler[],
  ) {
    this.sinks = schedulers.map((s) => [s.sink]);
  }

  run(s: Step): void {
    const c = this.cluster;
    switch (s.kind) {
      case 'fault':
        return this.#inject(s.fault);
      case 'advance':
        return c.advance(s.ms);
      case 'ack':
        for (const sc of this.schedulers) sc.acknowledgeAll();
        return;
      case 'resubscribe':
        this.schedulers.forEach((sc, i) => {
          if (sc.framework?.state === 'disconnected') this.sinks[i]!.push(sc.resubscribe());
        });
        return;
      case 'launch':
        return this.#launch(s.fw, s.n);
      case 'kill':
        this.schedulers[s.fw]!.kill(`t${s.n}`);
        return;
    }
  }

  #launch(fw: number, n: number): void {
    const sc = this.schedulers[fw]!;
    const offer = sc.framework?.state === 'subscribed' ? sc.offers()[0] : undefined;
    if (offer === undefined) return;
    const id = `t${this.launched++}`;
    const labels = [{ key: 'memory', value: 'constant:24' }];
    const task: TaskSpec =
      n % 3 === 0
        ? executorTask(id, offer.agentId, customExecutor(`exec-${fw}-${n}`), 'cpus:0.25;mem:64')
        : commandTask(id, offer.agentId, n % 3 === 1 ? 'sleep 3600' : `sleep ${n * 10}`, 'cpus:0.25;mem:64');
    sc.accept(offer.id, [{ ...task, labels }]);
  }

  #inject(pick: FaultPick): void {
    const fault = this.#fault(pick);
    const before = this.cluster.trace.entries().length;
    const outcome = this.cluster.inject(fault);
    if (outcome.ok) this.applied.add(fault.type);
    else {
      this.refused++;
      // The input is recorded (a replay takes it again); nothing else may follow it.
      const added = this.cluster.trace
        .entries()
        .slice(before)
        .map((e) => e.kind)
        .filter((k) => k !== 'input:inject');
      expect(added, `${fault.type} refused (${outcome.error.message}) but changed the trace`).toEqual([]);
    }
  }

  #fault(p: FaultPick): Fault {
    const frameworkId = this.schedulers[p.fw]!.frameworkId;
    const agentId = this.cluster.agents[p.agent]!.id;
    const taskId = `t${p.task}`;
    switch (p.type) {
      case 'drop_framework_connection':
      case 'resume_heartbeats':
        return { type: p.type, frameworkId };
      case 'stall_heartbeats':
        return { type: p.type, frameworkId, ...(p.amount % 2 === 0 ? { durationMs: p.amount * 500 } : {}) };
      case 'crash_executor':
      case 'hang_task':
        return { type: p.type, taskId };
      case 'fail_task':
        return { type: p.type, taskId, exitCode: p.amount };
      case 'memory_spike':
        return { type: p.type, taskId, mib: p.amount, ...(p.amount % 2 === 0 ? { durationMs: p.amount * 100 } : {}) };
      case 'set_memory_limit':
        return { type: p.type, agentId, taskId, mib: p.amount };
      case 'clock_jump':
        return { type: p.type, ms: p.amount * 60_000 };
      case 'crash_agent':
      case 'remove_agent':
        return { type: p.type, agentId };
      case 'schedule_maintenance':
        return { type: p.type, agentId, startInMs: p.amount * 1_000, durationMs: 60_000 };
      case 'add_agent':
        return { type: p.type, resources: resources(`cpus:${p.amount % 4 || 1};mem:256`), attributes: [] };
      default:
        return { type: 'restart_agent', agentId, recover: 'reconnect' };
    }
  }

  /** Every task's states, as its framework saw them over all its streams, follow the table; nothing follows a terminal state. */
  checkTransitions(): void {
    for (const sinks of this.sinks) expectLegalTransitions(sinks.flatMap((sink) => sink.updates()));
  }
}

describe('faults as inputs, in any order', () => {
  it('keep the books and the task state table; a refused fault changes nothing', () => {
    const applied = new Set<string>();
    const seen = { oom: 0, refused: 0 };
    const fcSeed = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
    console.log(`fault property test: fast-check seed ${fcSeed} (FC_SEED replays it)`);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.array(step, { minLength: 1, maxLength: 50, size: 'medium' }),
        (seed, steps) => {
          const cluster = makeCluster({ agents: 2, seed });
          const schedulers = [
            connect(cluster, { name: 'keeps', checkpoint: true, failoverTimeoutMs: 3_600_000 }),
            connect(cluster, { name: 'plain', failoverTimeoutMs: 3_600_000 }),
          ];
          const world = new World(cluster, schedulers);
          // Tasks to aim at from the start: t0 to t5, of both frameworks and all three kinds.
          for (let n = 0; n < 6; n++) {
            world.run({ kind: 'launch', fw: n % 2, n: Math.floor(n / 2) });
            cluster.advance(1_000);
          }
          world.run({ kind: 'ack' });
          for (const s of steps) {
            world.run(s);
            cluster.checkAllInvariants();
          }
          for (const sc of schedulers) cluster.inject({ type: 'resume_heartbeats', frameworkId: sc.frameworkId });
          for (const { id } of cluster.agents)
            cluster.inject({ type: 'restart_agent', agentId: id, recover: 'reconnect' });
          world.run({ kind: 'resubscribe' });
          world.run({ kind: 'ack' });
          cluster.advance(120_000);
          world.run({ kind: 'ack' });
          cluster.checkAllInvariants();
          world.checkTransitions();
          for (const type of world.applied) applied.add(type);
          if (traceKinds(cluster).includes('container:oom')) seen.oom++;
          seen.refused += world.refused;
        },
      ),
      { seed: fcSeed, numRuns: 120 },
    );
    // The runs reach what they test: every fault type applied at least once, OOM kills, refusals.
    expect([...applied].sort()).toEqual([...FAULT_TYPES].sort());
    expect(seen.oom).toBeGreaterThan(10);
    expect(seen.refused).toBeGreaterThan(20);
  });
});
