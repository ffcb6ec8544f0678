/**
 * `/tasks`: the live, unreachable and completed tasks of the registered and
 * the completed frameworks, sorted, then paged with `offset` and `limit`.
 */
import type { Task } from '../../core/master/framework.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { taskObject } from './objects.js';
import type { JsonObject } from './summary.js';

export const DEFAULT_TASKS_LIMIT = 100;

/** Checked by `tasksQuery` (query.ts). */
export interface TasksQuery {
  readonly limit?: number;
  readonly offset?: number;
  /** `asc` for oldest first; `des`, the default, for newest first. */
  readonly order?: 'asc' | 'des';
  readonly framework_id?: string;
  readonly task_id?: string;
}

/** Tasks of frameworks the reader may not view, and tasks it may not view, are left out before paging. */
export function renderTasks(view: ClusterView, query: TasksQuery, viewer: Viewer = SHOW_ALL): JsonObject {
  const limit = query.limit ?? DEFAULT_TASKS_LIMIT;
  const offset = query.offset ?? 0;
  const entries: { task: Task; user: string }[] = [];
  for (const fw of [...view.frameworks(), ...view.completedFrameworks()]) {
    const { user } = fw.info;
    if ((query.framework_id !== undefined && fw.id !== query.framework_id) || !viewer.framework(user)) continue;
    for (const task of tasksOf(fw)) {
      if ((query.task_id === undefined || task.spec.taskId === query.task_id) && viewer.task(task.spec, user)) entries.push({ task, user });
    }
  }
  entries.sort((a, b) => compareAscending(a.task, b.task));
  if (query.order !== 'asc') entries.reverse();
  return { tasks: entries.slice(offset, offset + limit).map((e) => taskObject(e.task, e.user)) };
}

function tasksOf(fw: FrameworkView): Task[] {
  return [...fw.tasks.values(), ...fw.completedTasks];
}

/**
 * Oldest first. The key is the task's *first* status, as upstream compares
 * (so a task does not move when it finishes); a task with no status yet
 * sorts before every other. Ties go by task id, then framework id, so the
 * order is total and the newest-first order is its exact reverse.
 */
function compareAscending(a: Task, b: Task): number {
  const ta = a.statuses[0]?.timestampMs ?? -Infinity;
  const tb = b.statuses[0]?.timestampMs ?? -Infinity;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return compareText(a.spec.taskId, b.spec.taskId) || compareText(a.frameworkId, b.frameworkId);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
