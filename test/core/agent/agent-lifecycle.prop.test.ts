/**
 * Property test of the agent lifecycle: random partitions, heals, crashes,
 * restarts, launches, kills and long stretches of time for a
 * PARTITION_AWARE framework and a plain one. After every step the books
 * agree (`checkAllInvariants`) and every task's states, as its framework
 * saw them, follow the task state table; once every fault is repaired,
 * every agent is registered again and none is unreachable.
 *
 * fast-check prints the seed and the shrunk steps on failure; pass them
 * back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  commandTask,
  connect,
  expectLegalTransitions,
  makeCluster,
  traceKinds,
  type TestCluster,
  type TestScheduler,
} from '../helpers.js';

type Step =
  | { readonly kind: 'partition' | 'heal' | 'crash' | 'restart'; readonly agent: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'launch' | 'kill'; readonly fw: number; readonly n: number }
  | { readonly kind: 'ack' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom('partition', 'heal', 'crash', 'restart' as const), agent: fc.nat(1) }),
  fc.record({
    kind: fc.constant('advance' as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 15_000, max: 100_000 })),
  }),
  fc.record({ kind: fc.constantFrom('launch', 'kill' as const), fw: fc.nat(1), n: fc.nat(5) }),
  fc.constant({ kind: 'ack' as const }),
);

class World {
  readonly crashed = new Set<string>();
  readonly cut = new Set<string>();
  launched = 0;

  constructor(
    readonly cluster: TestCluster,
    readonly schedulers: readonly TestScheduler[],
  ) {}

  agentId(i: number): string {
    return this.cluster.agents[i % this.cluster.agents.length]!.id;
  }

  run(s: Step): void {
    const c = this.cluster;
    switch (s.kind) {
      case 'partition':
      case 'heal': {
        const id = this.agentId(s.agent);
        if (s.kind === 'partition') c.partition(id, 'master');
        else c.heal(id, 'master');
        if (s.kind === 'partition') this.cut.add(id);
        else this.cut.delete(id);
        return;
      }
      case 'crash':
      case 'restart': {
        const id = this.agentId(s.agent);
        if (s.kind === 'crash' && !this.crashed.has(id)) {
          c.crashAgent(id);
          this.crashed.add(id);
        } else if (s.kind === 'restart' && this.crashed.has(id)) {
          c.restartAgent(id);
          this.crashed.delete(id);
        }
        return;
      }
      case 'advance':
        return c.advance(s.ms);
      case 'ack':
        for (const sc of this.schedulers) sc.acknowledgeAll();
        return;
      case 'launch': {
        const sc = this.schedulers[s.fw]!;
        const offer = sc.offers()[0];
        if (offer === undefined) return;
        const id = `t${this.launched++}`;
        sc.accept(offer.id, [
          commandTask(id, offer.agentId, s.n % 2 === 0 ? 'sleep 3600' : `sleep ${s.n * 20}`, 'cpus:0.5;mem:64'),
        ]);
        return;
      }
      case 'kill':
        this.schedulers[s.fw]!.kill(`t${s.n}`);
        return;
    }
  }

  /** Every task's states, as its framework saw them, follow the table; nothing follows a terminal state. */
  checkTransitions(): void {
    for (const sc of this.schedulers) expectLegalTransitions(sc.sink.updates());
  }
}

describe('agent lifecycle under random partitions, crashes and time', () => {
  it('keeps the books and the task state table, and every agent comes back once faults are repaired', () => {
    const seen = { unreachable: 0, reachable: 0, launched: 0 };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.array(step, { minLength: 1, maxLength: 40, size: 'medium' }),
        (seed, steps) => {
          const cluster = makeCluster({ agents: 2, seed });
          const schedulers = [
            connect(cluster, { name: 'aware', capabilities: ['PARTITION_AWARE'] }),
            connect(cluster, { name: 'plain' }),
          ];
          const world = new World(cluster, schedulers);
          for (const s of steps) {
            world.run(s);
            cluster.checkAllInvariants();
          }
          world.checkTransitions();
          for (const id of world.cut) cluster.heal(id, 'master');
          for (const id of world.crashed) cluster.restartAgent(id);
          cluster.advance(100_000);
          for (const { id } of cluster.agents) expect(cluster.view.agent(id)?.state).toBe('active');
          cluster.checkAllInvariants();
          const kinds = new Set(traceKinds(cluster));
          if (kinds.has('agent:unreachable')) seen.unreachable++;
          if (kinds.has('agent:reachable')) seen.reachable++;
          if (world.launched > 0) seen.launched++;
        },
      ),
      { numRuns: 150 },
    );
    // The runs reach what they test.
    expect(seen.unreachable).toBeGreaterThan(20);
    expect(seen.reachable).toBeGreaterThan(20);
    expect(seen.launched).toBeGreaterThan(20);
  });
});
