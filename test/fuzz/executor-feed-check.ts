/**
 * An executor's event stream as a story that must hold together: SUBSCRIBED
 * names the executor, and what follows is for it:
 *
 *   LAUNCH     a task of this executor (its ExecutorInfo names it), never
 *              one launched on this stream before, never after SHUTDOWN
 *   SHUTDOWN   once
 */
type Id = { value?: string } | undefined;

export interface ExecutorEventValue {
  type?: string;
  subscribed?: { executor_info?: { executor_id?: Id } };
  launch?: { task?: { task_id?: Id; executor?: { executor_id?: Id } } };
}

export class ExecutorFeedCheck {
  #executorId: string | undefined;
  readonly #launched = new Set<string>();
  #shutdown = false;

  /** What is wrong with this event after the ones before it, if anything. */
  see(event: ExecutorEventValue): string | undefined {
    switch (event.type) {
      case 'SUBSCRIBED':
        this.#executorId = event.subscribed?.executor_info?.executor_id?.value;
        return undefined;
      case 'LAUNCH': {
        const task = event.launch?.task;
        const taskId = task?.task_id?.value ?? '?';
        const executorId = task?.executor?.executor_id?.value;
        if (this.#shutdown) return `task ${taskId} launched after SHUTDOWN`;
        if (this.#launched.has(taskId)) return `task ${taskId} launched twice`;
        this.#launched.add(taskId);
        if (this.#executorId !== undefined && executorId !== this.#executorId)
          return `task ${taskId} of executor ${executorId} launched on the stream of ${this.#executorId}`;
        return undefined;
      }
      case 'SHUTDOWN':
        if (this.#shutdown) return 'SHUTDOWN twice';
        this.#shutdown = true;
        return undefined;
      default:
        return undefined;
    }
  }
}
