/**
 * Property test of masters with a leader: random leader crashes,
 * failovers, restarts and standby deaths among agent partitions, crashes
 * and restarts, launches, acknowledgements, re-subscriptions and long
 * stretches of time. After every step the books of whichever master leads
 * agree (`checkAllInvariants`); once every fault is repaired and every
 * master is up, a leader exists, every agent is registered with it, every
 * framework is subscribed again, and, every update acknowledged, each
 * task an agent confirmed and that has not ended runs on that agent, and
 * every task an agent runs is known to the leader.
 *
 * fast-check prints the seed and the shrunk steps on failure; pass them
 * back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../../src/core/model/task-state.js';
import type { FrameworkInfo } from '../../../src/core/model/types.js';
import {
  AGENT_RESOURCES,
  commandTask,
  connect,
  resources,
  TestCluster,
  traceKinds,
  type TestScheduler,
} from '../helpers.js';

type Step =
  | { readonly kind: 'crash_master' | 'restart_master' | 'master_failover'; readonly master: number }
  | { readonly kind: 'partition' | 'heal' | 'crash' | 'restart'; readonly agent: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'launch'; readonly fw: number; readonly n: number }
  | { readonly kind: 'ack' | 'resubscribe' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom('crash_master', 'restart_master', 'master_failover' as const), master: fc.nat(2) }),
  fc.record({ kind: fc.constantFrom('partition', 'heal', 'crash', 'restart' as const), agent: fc.nat(2) }),
  fc.record({
    kind: fc.constant('advance' as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 12_000 }), fc.integer({ min: 60_000, max: 700_000 })),
  }),
  fc.record({ kind: fc.constant('launch' as const), fw: fc.nat(1), n: fc.nat(5) }),
  fc.constantFrom({ kind: 'ack' as const }, { kind: 'resubscribe' as const }),
);

const INFOS: readonly Partial<FrameworkInfo>[] = [
  { name: 'aware', capabilities: ['PARTITION_AWARE'], failoverTimeoutMs: 86_400_000 },
  { name: 'plain', failoverTimeoutMs: 86_400_000 },
];

function makeWorld(seed: number): { cluster: TestCluster; schedulers: TestScheduler[] } {
  const cluster = new TestCluster({
    seed,
    recordTrace: true,
    masters: 3,
    master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0', taskLaunchDelayMs: 0 },
  });
  for (let i = 0; i < 3; i++)
    cluster.addAgent({
      hostname: `agent${i}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
  return { cluster, schedulers: INFOS.map((info) => connect(cluster, info)) };
}

class World {
  readonly crashed = new Set<string>();
  readonly cut = new Set<string>();
  launched = 0;

  constructor(
    readonly cluster: TestCluster,
    readonly schedulers: readonly TestScheduler[],
  ) {}

  run(s: Step): void {
    const c = this.cluster;
    switch (s.kind) {
      case 'crash_master':
      case 'restart_master':
      case 'master_failover':
        c.inject({ type: s.kind, master: s.master });
        return c.advance(0);
      case 'partition':
      case 'heal':
      case 'crash':
      case 'restart':
        return this.#agentFault(s.kind, c.agents[s.agent]!.id);
      case 'advance':
        return c.advance(s.ms);
      case 'ack':
        return this.acknowledge();
      case 'resubscribe':
        return this.resubscribe();
      case 'launch': {
        const sc = this.schedulers[s.fw]!;
        const offer = c.masters.leaderIndex() === undefined ? undefined : sc.offers()[0];
        if (offer === undefined) return;
        sc.accept(offer.id, [
          commandTask(
            `t${this.launched++}`,
            offer.agentId,
            s.n % 2 === 0 ? 'sleep 3600' : `sleep ${s.n * 30}`,
            'cpus:0.5;mem:64',
          ),
        ]);
        return;
      }
    }
  }

  #agentFault(kind: 'partition' | 'heal' | 'crash' | 'restart', id: string): void {
    const c = this.cluster;
    if (kind === 'partition') c.partition(id, 'master'), this.cut.add(id);
    else if (kind === 'heal') c.heal(id, 'master'), this.cut.delete(id);
    else if (kind === 'crash' && !this.crashed.has(id)) c.crashAgent(id), this.crashed.add(id);
    else if (kind === 'restart' && this.crashed.has(id)) c.restartAgent(id), this.crashed.delete(id);
  }

  /**
   * Every update with a uuid on each framework's current stream is
   * acknowledged, as often as it arrives: an acknowledgement the failover
   * lost is sent again when the agent retries the update to the new leader.
   */
  acknowledge(): void {
    if (this.cluster.masters.leaderIndex() === undefined) return;
    for (const sc of this.schedulers) {
      for (let done = 0; done < sc.sink.updates().length; done++) {
        const u = sc.sink.updates()[done]!;
        if (u.uuid !== undefined) sc.call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid });
      }
    }
  }

  /** Frameworks whose stream closed subscribe again, with their id, where a master leads. */
  resubscribe(): void {
    if (this.cluster.masters.leaderIndex() === undefined) return;
    this.schedulers.forEach((sc, i) => {
      if (sc.sink.closed || sc.framework?.state !== 'subscribed') sc.resubscribe(INFOS[i]);
    });
  }
}

/** Trace entries that a good share of the runs must reach. */
const REACHED = ['master:elected', 'agent:readmitted', 'task:status'] as const;

describe('masters with a leader under random master and agent faults', () => {
  it('keeps the books; once repaired, one leader knows every agent, framework and running task', () => {
    const reached = new Map<string, number>();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.array(step, { minLength: 1, maxLength: 30, size: 'medium' }),
        (seed, steps) => {
          const { cluster, schedulers } = makeWorld(seed);
          const world = new World(cluster, schedulers);
          for (const s of steps) {
            world.run(s);
            cluster.checkAllInvariants();
          }
          for (let i = 0; i < 3; i++) cluster.restartMaster(i);
          for (const id of world.cut) cluster.heal(id, 'master');
          for (const id of world.crashed) cluster.restartAgent(id);
          cluster.advance(15_000);
          expect(cluster.masters.leaderIndex()).toBeDefined();
          world.resubscribe();
          for (let i = 0; i < 12; i++) {
            world.acknowledge();
            cluster.advance(10_000);
          }
          for (const { id } of cluster.agents) expect(cluster.view.agent(id)?.state, id).toBe('active');
          for (const sc of schedulers) {
            expect(sc.framework?.state).toBe('subscribed');
            for (const task of sc.framework!.tasks.values()) {
              // A launch the partition swallowed stays staging until reconciled; only what an agent confirmed is checked.
              if (isTerminal(task.state) || task.state === 'TASK_UNREACHABLE' || task.state === 'TASK_STAGING')
                continue;
              // A task that ended while its updates wait for acknowledgements (the framework was away, the
              // agent retries with backoff) is still running as far as the master knows, as upstream's is.
              if (cluster.view.pendingUpdates(task.agentId) > 0) continue;
              const runs = (cluster.view.agentNode(task.agentId)?.executors() ?? []).some(
                (e) => e.alive && e.tasks.has(task.spec.taskId),
              );
              expect(runs, `${task.spec.taskId} ${task.state} on ${task.agentId}`).toBe(true);
            }
          }
          // And the converse: nothing runs on an agent that the leader does not know of.
          for (const { id } of cluster.agents) {
            for (const executor of cluster.view.agentNode(id)?.executors() ?? []) {
              if (!executor.alive) continue;
              for (const [taskId, task] of executor.tasks) {
                if (isTerminal(task.state)) continue;
                expect(cluster.view.framework(executor.frameworkId)?.tasks.has(taskId), `${taskId} runs on ${id}`).toBe(
                  true,
                );
              }
            }
          }
          cluster.checkAllInvariants();
          const kinds = new Set(traceKinds(cluster));
          for (const kind of REACHED) if (kinds.has(kind)) reached.set(kind, (reached.get(kind) ?? 0) + 1);
        },
      ),
      { numRuns: 150, ...(process.env['FC_SEED'] === undefined ? {} : { seed: Number(process.env['FC_SEED']) }) },
    );
    // The runs reach what they test: elections, agents taken in by a new leader, tasks launched.
    expect(Object.fromEntries(reached)).toEqual(
      Object.fromEntries(REACHED.map((k) => [k, expect.toSatisfy((n: number) => n > 20)])),
    );
  });
});
