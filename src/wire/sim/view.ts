/**
 * What one reader of the control API's reads (`/sim/v1/trace`,
 * `/sim/v1/events`, `/sim/v1/misuse`) is shown, by the `view_*` ACLs as
 * /state applies them (the same `Viewer`, wire/view-filter.ts), asked with
 * the reader's principal (none, ANY, when authentication is off). Without
 * ACLs, or for a reader they let see every user's frameworks, tasks and
 * executors, everything is shown and nothing is asked.
 *
 * Otherwise each trace entry is shown by what it names:
 *
 *   1. an input (`input:*`, the arguments of a recorded input in full: a
 *      FrameworkInfo, a call's TaskInfos): only those of the clock, the
 *      agents, the masters and the network are shown;
 *   2. an entry naming frameworks (`"frameworkId"`, or the framework an
 *      `event:*` went to) is shown if the reader may view each of them
 *      (`view_frameworks`, by FrameworkInfo.user), and the task
 *      (`view_tasks`) and executor (`view_executors`; a command executor,
 *      which has no ExecutorInfo, is its task's) it names, if any;
 *   3. an entry of the cluster's own (`cluster:`, `master:`, `agent:`,
 *      `allocator:`, `net:`, `fault:`, `operator:`, `weights:`, `quota:`)
 *      that names no task, executor, container, offer, stream or operation
 *      is shown;
 *   4. every other entry (a scheduler call as received, `call:*`, which
 *      names no framework; an offer, a status retry or an executor named
 *      by its id alone) is shown only to a reader who may view every user's.
 *
 * A framework, task or executor the master no longer knows (removed and
 * forgotten) counts as one the reader may not view, unless it may view
 * every user's. Roles are not hidden (an offer's, a quota's): `view_roles`
 * is not asked. The misuse report lists the frameworks the reader may
 * view, and of their examples those whose task it may view.
 */
import type { MisuseReport } from '../../core/master/misuse-report.js';
import type { TraceEntry } from '../../core/kernel/trace.js';
import type { ExecutorSpec } from '../../core/model/types.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { viewerOf, type Viewer } from '../view-filter.js';

export interface SimReader {
  /** Whether the reader may see this entry of the trace. */
  entry(entry: TraceEntry): boolean;
  /** The report, without what the reader may not see. */
  misuse(report: MisuseReport): MisuseReport;
}

/** The inputs that name no framework, task or executor: the clock's, the agents', the masters', the network's. */
const FREE_INPUTS = new Set(
  [
    'advanceTo',
    'runUntilIdle',
    'bindMasterPort',
    'addAgent',
    'crashAgent',
    'restartAgent',
    'crashMaster',
    'restartMaster',
  ]
    .concat(['addNetworkRule', 'removeNetworkRule', 'partition', 'heal', 'subscribeOperator'])
    .map((name) => `input:${name}`),
);
const CLUSTER_KINDS = /^(?:cluster|master|agent|allocator|net|fault|operator|weights|quota):/;
const NAMES_SCOPED_ID = /"(?:taskId|executorId|containerId|offerId|streamId|operationUuid|operationId|uuid)":/;
const FIELD = (name: string): RegExp => new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*")`, 'g');
const FRAMEWORK_ID = FIELD('frameworkId');
const TASK_ID = FIELD('taskId');
const EXECUTOR_ID = FIELD('executorId');

/** The reader with this principal; undefined when it sees everything. */
export function simReaderOf(view: ClusterView, principal: string | undefined): SimReader | undefined {
  const authorizer = view.authorizer;
  if (authorizer.mayViewEveryUser(principal)) return undefined;
  return new FilteredReader(view, viewerOf(authorizer, principal));
}

class FilteredReader implements SimReader {
  constructor(
    private readonly view: ClusterView,
    private readonly viewer: Viewer,
  ) {}

  entry(entry: TraceEntry): boolean {
    const { kind } = entry;
    if (kind.startsWith('input:')) return FREE_INPUTS.has(kind);
    const text = entry.line.slice(`${entry.timeMs} ${kind} `.length);
    if (kind.startsWith('event:')) {
      const [frameworkId = '', first] = text.split(' ', 2);
      return this.#framework(frameworkId, kind === 'event:update' ? first : undefined, undefined);
    }
    const frameworkIds = values(text, FRAMEWORK_ID);
    if (frameworkIds.length > 0) {
      const [taskId] = values(text, TASK_ID);
      const [executorId] = values(text, EXECUTOR_ID);
      return frameworkIds.every((id) => this.#framework(id, taskId, executorId));
    }
    return CLUSTER_KINDS.test(kind) && !NAMES_SCOPED_ID.test(text);
  }

  misuse(report: MisuseReport): MisuseReport {
    const frameworks = report.frameworks
      .filter((fw) => this.#framework(fw.frameworkId, undefined, undefined))
      .map((fw) => ({
        ...fw,
        misuses: fw.misuses.map((m) => ({
          ...m,
          examples: m.examples.filter((e) => this.#framework(fw.frameworkId, e.ids.taskId, undefined)),
        })),
      }));
    return { ...report, frameworks };
  }

  /** Whether the reader may view the framework, and the task and executor of it named. */
  #framework(frameworkId: string, taskId: string | undefined, executorId: string | undefined): boolean {
    // Asked each time: after a master failover the leader's records are others.
    const fw = this.view.framework(frameworkId) ?? this.view.completedFrameworks().find((f) => f.id === frameworkId);
    if (fw === undefined) return false;
    const user = fw.info.user;
    if (!this.viewer.framework(user)) return false;
    if (taskId !== undefined) {
      const task = taskOf(fw, taskId);
      if (task === undefined || !this.viewer.task(task.spec, user)) return false;
    }
    if (executorId === undefined) return true;
    const spec = executorSpec(fw, executorId);
    if (spec !== undefined) return this.viewer.executor(spec, user);
    // A command executor has no ExecutorInfo (/state lists none): it is its task's, whose id it has.
    const task = taskOf(fw, executorId);
    return task !== undefined && task.spec.executor === undefined && this.viewer.task(task.spec, user);
  }
}

function taskOf(fw: FrameworkView, taskId: string): FrameworkView['completedTasks'][number] | undefined {
  return fw.tasks.get(taskId) ?? fw.completedTasks.find((t) => t.spec.taskId === taskId);
}

/** The ExecutorInfo of a framework's executor, from a task it runs (or ran); none for a command executor. */
function executorSpec(fw: FrameworkView, executorId: string): ExecutorSpec | undefined {
  for (const task of fw.tasks.values()) if (task.spec.executor?.executorId === executorId) return task.spec.executor;
  return fw.completedTasks.find((t) => t.spec.executor?.executorId === executorId)?.spec.executor;
}

/**
 * The JSON strings a field holds in an entry's text. Asked while the core
 * appends the entry, so it must not throw: a string JSON cannot read stays
 * as written, an id nothing is known by (and so not shown).
 */
function values(text: string, field: RegExp): string[] {
  return [...text.matchAll(field)].map((m) => {
    try {
      return JSON.parse(m[1]!) as string;
    } catch {
      return m[1]!;
    }
  });
}
