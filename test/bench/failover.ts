/**
 * Master failover at scale, in the core alone (no HTTP): a cluster of two
 * masters with `agents` agents, `tasksPerAgent` long tasks launched into
 * each agent's first offer and running, then the leader crashes. Timed:
 * the wall time from the crash until the other master leads with every
 * agent re-registered and every task known again (the election delay and
 * the agents' re-registration pass in virtual time), and its parts (the
 * virtual time it took, the inputs it ran).
 *
 * Building the cluster through HTTP is what the scale part measures; this
 * one builds it with `Cluster` inputs, so that large sizes (40,000 agents
 * and 400,000 tasks) are quick to set up and the failover alone is timed.
 */
import { Cluster } from '../../src/core/cluster.js';
import type { OfferView, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';
import {
  FRAMEWORK_INFO,
  MASTER,
  parsed,
  ROOMY_AGENT_RESOURCES,
  TINY_TASK_RESOURCES,
  LONG_COMMAND,
} from './core-harness.js';
import { progress } from './stats.js';

export interface FailoverOptions {
  readonly agents: number;
  readonly tasksPerAgent: number;
  /** Check the invariants after every input, as the cluster does by default. */
  readonly checkInvariants?: boolean;
}

export interface FailoverRow {
  readonly agents: number;
  readonly tasks: number;
  /** Wall time to build the cluster (agents, launches, tasks running). */
  readonly buildMs: number;
  /** Wall time from the crash to every agent and task back under the new leader. */
  readonly failoverMs: number;
  /** Virtual time the same took (the election delay included). */
  readonly virtualMs: number;
  readonly reregistered: number;
  readonly tasksBack: number;
  readonly heapMB: number;
}

/** The core, its framework subscribed, and the first offer of each agent. */
function build(o: FailoverOptions): { cluster: Cluster; frameworkId: string; streamId: string; offers: OfferView[] } {
  const cluster = new Cluster({ seed: 1, masters: 2, checkInvariants: o.checkInvariants ?? true, master: MASTER });
  const resources = parsed(ROOMY_AGENT_RESOURCES);
  for (let i = 0; i < o.agents; i++) {
    cluster.addAgent({ hostname: `agent${i + 1}`, ip: '127.0.0.1', port: 5051 + i, resources, attributes: [] });
    cluster.drainOutbox();
  }
  const offers: OfferView[] = [];
  const take = (): void => {
    for (const record of cluster.drainOutbox()) {
      const event = record.kind === 'event' ? (record.event as SchedulerEvent) : undefined;
      if (event?.type === 'OFFERS') offers.push(...event.offers);
    }
  };
  const info = {
    ...FRAMEWORK_INFO,
    failoverTimeoutMs: 7 * 86_400_000,
    roles: ['*'],
    capabilities: ['MULTI_ROLE' as const],
  };
  const { frameworkId, streamId } = cluster.subscribe('bench-1', { info, suppressedRoles: [] });
  take();
  for (let moved = 0; offers.length < o.agents && moved < 10_000; moved += 1_000) {
    cluster.advance(1_000);
    take();
  }
  return { cluster, frameworkId, streamId, offers };
}

function launchAll(
  cluster: Cluster,
  frameworkId: string,
  streamId: string,
  offers: readonly OfferView[],
  perAgent: number,
): number {
  let launched = 0;
  for (const offer of offers) {
    const tasks: TaskSpec[] = Array.from({ length: perAgent }, (_, i) => ({
      taskId: `${offer.id}-${i}`,
      name: 'long',
      agentId: offer.agentId,
      resources: TINY_TASK_RESOURCES,
      command: LONG_COMMAND,
      labels: [],
    }));
    const outcome = cluster.call(frameworkId, streamId, {
      type: 'ACCEPT',
      offerIds: [offer.id],
      operations: [{ type: 'LAUNCH', tasks }],
      filters: { refuseMs: 5_000 },
    });
    cluster.drainOutbox();
    if (outcome.ok) launched += perAgent;
  }
  return launched;
}

/** Active agents and known tasks under the leader (none while an election is on). */
function back(cluster: Cluster): { agents: number; tasks: number } {
  if (cluster.view.leaderIndex() === undefined) return { agents: 0, tasks: 0 };
  let agents = 0;
  for (const agent of cluster.view.agents()) if (agent.state === 'active') agents++;
  let tasks = 0;
  for (const fw of cluster.view.frameworks()) tasks += fw.tasks.size;
  return { agents, tasks };
}

export interface BuiltCluster {
  readonly cluster: Cluster;
  readonly tasks: number;
  readonly buildMs: number;
}

/** The cluster of `o`, every task running. */
export function buildFailover(o: FailoverOptions): BuiltCluster {
  const t0 = performance.now();
  progress(`failover: building ${o.agents} agents with ${o.tasksPerAgent} tasks each in the core`);
  const { cluster, frameworkId, streamId, offers } = build(o);
  const tasks = launchAll(cluster, frameworkId, streamId, offers, o.tasksPerAgent);
  // The tasks start (and their updates flow) as virtual time moves.
  for (let i = 0; i < 10 && back(cluster).tasks < tasks; i++) {
    cluster.advance(1_000);
    cluster.drainOutbox();
  }
  const buildMs = performance.now() - t0;
  progress(`failover: ${tasks} tasks on ${o.agents} agents built in ${Math.round(buildMs)} ms; the leader crashes`);
  return { cluster, tasks, buildMs };
}

/** The leader crashes; timed until every agent and task is back under the new leader. */
export function timeFailover(o: FailoverOptions, { cluster, tasks, buildMs }: BuiltCluster): FailoverRow {
  const v0 = cluster.now();
  const t0 = performance.now();
  cluster.inject({ type: 'crash_master' });
  cluster.drainOutbox();
  let done = back(cluster);
  for (let moved = 0; (done.agents < o.agents || done.tasks < tasks) && moved < 15 * 60_000; moved += 1_000) {
    cluster.advance(1_000);
    cluster.drainOutbox();
    done = back(cluster);
  }
  const failoverMs = performance.now() - t0;
  return {
    agents: o.agents,
    tasks,
    buildMs,
    failoverMs,
    virtualMs: cluster.now() - v0,
    reregistered: done.agents,
    tasksBack: done.tasks,
    heapMB: Math.round(process.memoryUsage().heapUsed / 1e6),
  };
}

/** Run alone: `failover.ts --one AGENTS TASKS_PER_AGENT [INVARIANTS(0|1)]` prints one JSON row. */
if (process.argv[1]?.endsWith('failover.ts') && process.argv[2] === '--one') {
  const [agents, tasksPerAgent, invariants] = process.argv.slice(3).map(Number);
  const o = { agents: agents!, tasksPerAgent: tasksPerAgent!, checkInvariants: invariants !== 0 };
  const row = timeFailover(o, buildFailover(o));
  process.stdout.write(`${JSON.stringify(row)}\n`);
}
