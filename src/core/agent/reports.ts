/**
 * What a re-registering agent tells the master it runs: the tasks of its
 * live executors, the tasks whose updates it still holds (their executor
 * may be gone), and its executors other than command executors.
 */
import type {
  AgentDescription,
  AgentToMaster,
  FrameworkRef,
  ReportedExecutor,
  ReportedTask,
} from '../model/messages.js';
import type { AgentExecutor } from './frameworks.js';
import type { StreamHead } from './status-update-manager.js';

export function reportedTasks(executors: readonly AgentExecutor[], heads: readonly StreamHead[]): ReportedTask[] {
  const reported: ReportedTask[] = [];
  // Per framework, the tasks its live executors report (an agent reports thousands after a failover: no key strings).
  const listed = new Map<string, Set<string>>();
  for (const e of executors) {
    let ids = listed.get(e.frameworkId);
    if (ids === undefined) listed.set(e.frameworkId, (ids = new Set()));
    const command = e.kind === 'command';
    for (const t of e.tasks.values()) {
      ids.add(t.spec.taskId);
      reported.push({
        frameworkId: e.frameworkId,
        taskId: t.spec.taskId,
        executorId: e.executorId,
        state: t.state,
        spec: t.spec,
        command,
      });
    }
  }
  for (const { frameworkId, status, latest: state, ended } of heads) {
    if (listed.get(frameworkId)?.has(status.taskId) === true) continue;
    // A task whose executor exited, its updates unacknowledged: reported whole, as upstream's agent reports its terminated tasks.
    const known = ended === undefined ? {} : { spec: ended.spec, command: ended.command };
    reported.push({
      frameworkId,
      taskId: status.taskId,
      executorId: ended?.executorId ?? status.executorId ?? status.taskId,
      state,
      ...known,
    });
  }
  return reported;
}

export function reportedExecutors(executors: readonly AgentExecutor[]): ReportedExecutor[] {
  return executors
    .filter((e) => e.alive && e.kind !== 'command')
    .map((e) => {
      // The executor's own resources travel with each task launched on it.
      const spec = [...e.tasks.values()].find((t) => t.spec.executor !== undefined)?.spec.executor;
      return {
        frameworkId: e.frameworkId,
        executorId: e.executorId,
        ...(spec === undefined ? {} : { resources: spec.resources }),
      };
    });
}

/** What the agent still holds besides its executors, for its re-registration. */
export interface HeldState {
  readonly heads: readonly StreamHead[];
  readonly resourceVersion: number;
  readonly frameworks: readonly FrameworkRef[];
}

/** REREGISTER_AGENT: the agent, what it runs, and its frameworks (which a master that failed over does not know). */
export function reregistration(
  agent: AgentDescription,
  executors: readonly AgentExecutor[],
  held: HeldState,
): AgentToMaster {
  const tasks = reportedTasks(executors, held.heads);
  // As upstream's agent: the frameworks it still runs something of (one whose executors have all exited is forgotten).
  const running = new Set<string>();
  for (const t of tasks) running.add(t.frameworkId);
  for (const e of executors) if (e.alive) running.add(e.frameworkId);
  return {
    type: 'REREGISTER_AGENT',
    agent,
    tasks,
    executors: reportedExecutors(executors),
    resourceVersion: held.resourceVersion,
    frameworks: held.frameworks.filter((f) => running.has(f.id)),
  };
}
