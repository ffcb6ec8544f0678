/**
 * Tasks as they were at one moment, for a read written after that moment
 * (a big `/state` or GET_STATE goes out in slices, and the cluster moves on
 * between them). Of a master's task only the state, the status list (which
 * only grows) and the last status update change in place; everything else
 * is fixed when the task is made. So a list keeps each task with those few
 * values as they were, and hands out the task itself when they have not
 * changed since (nearly always), else a copy with the old values: the read
 * is the state of its moment, whatever happened after.
 */
import type { Task } from '../core/model/records.js';
import type { TaskState } from '../core/model/types.js';
import { LiveList } from './live-list.js';

export class TasksAsOf {
  readonly #tasks: Task[] = [];
  readonly #states: TaskState[] = [];
  readonly #statusCounts: number[] = [];
  readonly #updateStates: (TaskState | undefined)[] = [];
  readonly #updateUuids: (string | undefined)[] = [];
  readonly #users: string[] = [];

  get length(): number {
    return this.#tasks.length;
  }

  /** `user` is the one the task is shown with (its framework's). */
  add(task: Task, user: string): void {
    this.#tasks.push(task);
    this.#users.push(user);
    this.#states.push(task.state);
    this.#statusCounts.push(task.statuses.length);
    this.#updateStates.push(task.statusUpdateState);
    this.#updateUuids.push(task.statusUpdateUuid);
  }

  userAt(i: number): string {
    return this.#users[i]!;
  }

  /** The i-th task as it was when added. */
  at(i: number): Task {
    const task = this.#tasks[i]!;
    const state = this.#states[i]!;
    const count = this.#statusCounts[i]!;
    const updateState = this.#updateStates[i];
    const updateUuid = this.#updateUuids[i];
    if (
      task.state === state &&
      task.statuses.length === count &&
      task.statusUpdateState === updateState &&
      task.statusUpdateUuid === updateUuid
    ) {
      return task;
    }
    const then: Task = { ...task, state, statuses: task.statuses.slice(0, count) };
    if (updateState === undefined) delete then.statusUpdateState;
    else then.statusUpdateState = updateState;
    if (updateUuid === undefined) delete then.statusUpdateUuid;
    else then.statusUpdateUuid = updateUuid;
    return then;
  }
}

/** Tasks read as they are written, and copied as of the moment before the cluster changes (live-list.ts). */
export function liveTasks(source: Iterable<Task>): LiveList<Task> {
  return new LiveList(source, (rest) => {
    const copies = new TasksAsOf();
    for (const task of rest) copies.add(task, '');
    let i = 0;
    return () => (i < copies.length ? copies.at(i++) : undefined);
  });
}
