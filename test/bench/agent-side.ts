/**
 * What a launched task costs, in the core alone (no HTTP): a cluster of
 * `agents` agents takes `tasksPerAgent` long command tasks into each
 * agent's first offer (one ACCEPT per offer) and runs until every task is
 * running. Measured: the process CPU time of the launch phase (the ACCEPTs
 * and the virtual time until every task runs, so the master's accept, the
 * agents' executors and containers, the status updates and their
 * acknowledgements), and the heap the tasks hold after full collections,
 * over that of the same cluster before the launch.
 *
 * Run alone: `npx tsx test/bench/agent-side.ts AGENTS TASKS_PER_AGENT [INVARIANTS(0|1)] [ACKNOWLEDGE(0|1)]`
 * (add `--expose-gc` through NODE_OPTIONS for exact heap figures) prints
 * one JSON row.
 */
import type { Cluster } from '../../src/core/cluster.js';
import type { OfferView, TaskSpec, TaskStatus } from '../../src/core/model/types.js';
import { CoreBench, FRAMEWORK_INFO, ROOMY_AGENT_RESOURCES, TINY_TASK_RESOURCES, LONG_COMMAND } from './core-harness.js';

export interface AgentSideRow {
  readonly agents: number;
  readonly tasks: number;
  readonly running: number;
  /** Process CPU time (user and system) of the launch phase. */
  readonly launchCpuMs: number;
  readonly tasksPerCpuSecond: number;
  /** Heap held per task after full collections, over the cluster before the launch. */
  readonly heapBytesPerTask: number;
  readonly heapMB: number;
}

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) gc?.();
}

function runningTasks(bench: CoreBench): number {
  let n = 0;
  for (const fw of bench.cluster.view.frameworks())
    for (const task of fw.tasks.values()) n += task.state === 'TASK_RUNNING' ? 1 : 0;
  return n;
}

/** The long tasks of one offer, `perAgent` of them. */
function tasksOf(offer: OfferView, perAgent: number): TaskSpec[] {
  const tasks: TaskSpec[] = [];
  for (let i = 0; i < perAgent; i++) {
    tasks.push({
      taskId: `${offer.id}-${i}`,
      name: 'long',
      agentId: offer.agentId,
      resources: TINY_TASK_RESOURCES,
      command: LONG_COMMAND,
      labels: [],
    });
  }
  return tasks;
}

export interface AgentSideOptions {
  readonly checkInvariants?: boolean;
  /** The framework acknowledges every update, as a real one does (else they stay unacknowledged, as in the scale bench). */
  readonly acknowledge?: boolean;
  /** Receives the cluster, for a heap snapshot of it. */
  readonly keep?: (cluster: Cluster) => void;
}

/** Sends the ACKNOWLEDGE of every update taken since the last call. */
function acknowledgeAll(bench: CoreBench, updates: TaskStatus[]): void {
  for (const status of updates.splice(0)) {
    if (status.uuid !== undefined && status.agentId !== undefined)
      bench.call({ type: 'ACKNOWLEDGE', agentId: status.agentId, taskId: status.taskId, uuid: status.uuid });
  }
}

export function measureAgentSide(agents: number, tasksPerAgent: number, o: AgentSideOptions = {}): AgentSideRow {
  const bench = new CoreBench({
    agents,
    agentResources: ROOMY_AGENT_RESOURCES,
    checkInvariants: o.checkInvariants ?? false,
  });
  const offers: OfferView[] = [];
  const updates: TaskStatus[] = [];
  const info = {
    ...FRAMEWORK_INFO,
    failoverTimeoutMs: 7 * 86_400_000,
    roles: ['*'],
    capabilities: ['MULTI_ROLE' as const],
  };
  bench.subscribe((event) => {
    if (event.type === 'OFFERS') offers.push(...event.offers);
    if (event.type === 'UPDATE' && o.acknowledge === true) updates.push(event.status);
  }, info);
  for (let moved = 0; offers.length < agents && moved < 10_000; moved += 1_000) bench.input((c) => c.advance(1_000));
  fullGc();
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  for (const offer of offers.splice(0)) {
    bench.call({
      type: 'ACCEPT',
      offerIds: [offer.id],
      operations: [{ type: 'LAUNCH', tasks: tasksOf(offer, tasksPerAgent) }],
      filters: { refuseMs: 5_000 },
    });
  }
  const tasks = agents * tasksPerAgent;
  let running = runningTasks(bench);
  for (let i = 0; i < 10 && (running < tasks || updates.length > 0); i++) {
    acknowledgeAll(bench, updates);
    bench.input((c) => c.advance(1_000));
    running = runningTasks(bench);
  }
  const cpu = process.cpuUsage(cpu0);
  const launchCpuMs = (cpu.user + cpu.system) / 1000;
  fullGc();
  const heap = process.memoryUsage().heapUsed;
  o.keep?.(bench.cluster);
  return {
    agents,
    tasks,
    running,
    launchCpuMs: Math.round(launchCpuMs),
    tasksPerCpuSecond: Math.round(tasks / (launchCpuMs / 1000)),
    heapBytesPerTask: Math.round((heap - heap0) / Math.max(1, tasks)),
    heapMB: Math.round(heap / 1e6),
  };
}

if (process.argv[1]?.endsWith('agent-side.ts')) {
  const [agents, tasksPerAgent, invariants, acknowledge] = process.argv.slice(2).map(Number);
  const row = measureAgentSide(agents ?? 1000, tasksPerAgent ?? 20, {
    checkInvariants: invariants === 1,
    acknowledge: acknowledge === 1,
  });
  process.stdout.write(`${JSON.stringify(row)}\n`);
}
