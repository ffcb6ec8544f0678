/**
 * `/tasks`: the live, unreachable and completed tasks of the registered and
 * the completed frameworks, sorted, then paged with `offset` and `limit`.
 */
import type { Task } from '../../core/model/records.js';
import type { ClusterView } from '../../core/view.js';
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

/**
 * Tasks of frameworks the reader may not view, and tasks it may not view,
 * are left out before paging. Only the page is sorted: a walk over the
 * tasks keeps the first `offset + limit` in the requested order (a heap),
 * so a page of a hundred costs a comparison per task, not a sort of all.
 */
export function renderTasks(view: ClusterView, query: TasksQuery, viewer: Viewer = SHOW_ALL): JsonObject {
  const limit = query.limit ?? DEFAULT_TASKS_LIMIT;
  const offset = query.offset ?? 0;
  const sign = query.order === 'asc' ? 1 : -1;
  const page = new FirstOf(offset + limit, (a, b) => sign * compareAscending(a, b));
  for (const fw of [...view.frameworks(), ...view.completedFrameworks()]) {
    const { user } = fw.info;
    if ((query.framework_id !== undefined && fw.id !== query.framework_id) || !viewer.framework(user)) continue;
    const consider = (task: Task) => {
      if ((query.task_id === undefined || task.spec.taskId === query.task_id) && viewer.task(task.spec, user))
        page.offer(task, user);
    };
    for (const task of fw.tasks.values()) consider(task);
    for (const task of fw.completedTasks) consider(task);
  }
  return {
    tasks: page
      .sorted()
      .slice(offset)
      .map((e) => taskObject(e.task, e.user)),
  };
}

interface Entry {
  readonly task: Task;
  readonly user: string;
}

/**
 * The first `size` items in an order: a max-heap of them (its root the
 * last of those kept), which a newcomer enters only when it comes before
 * the root. The order is total, so the result is the sort's prefix.
 */
class FirstOf {
  readonly #heap: Entry[] = [];
  readonly compare: (a: Entry, b: Entry) => number;

  constructor(
    private readonly size: number,
    private readonly compareTasks: (a: Task, b: Task) => number,
  ) {
    this.compare = (a, b) => compareTasks(a.task, b.task);
  }

  offer(task: Task, user: string): void {
    const heap = this.#heap;
    if (this.size === 0) return;
    if (heap.length < this.size) {
      heap.push({ task, user });
      this.#up(heap.length - 1);
    } else if (this.compareTasks(task, heap[0]!.task) < 0) {
      heap[0] = { task, user };
      this.#down(0);
    }
  }

  sorted(): Entry[] {
    return [...this.#heap].sort(this.compare);
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(heap[i]!, heap[parent]!) <= 0) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && this.compare(heap[left]!, heap[largest]!) > 0) largest = left;
      if (right < heap.length && this.compare(heap[right]!, heap[largest]!) > 0) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
      i = largest;
    }
  }
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
