/**
 * The master's record of a framework: its registration state machine, the
 * connection its events go to, and the offers, tasks and executors it holds.
 *
 *   none ---SUBSCRIBE---> subscribed ---connection breaks---> disconnected
 *   subscribed/disconnected ---SUBSCRIBE (same id)---> subscribed
 *   subscribed ---TEARDOWN---> removed
 *   disconnected ---failover timeout---> removed
 */
import type { TimerId } from '../kernel/event-loop.js';
import type { ExecutorRecord, FrameworkState, Offer, Task } from '../model/records.js';
import type { Capability, FrameworkInfo, OfferConstraints, SchedulerEvent } from '../model/types.js';

const FRAMEWORK_NEXT: Readonly<Record<FrameworkState, readonly FrameworkState[]>> = {
  subscribed: ['subscribed', 'disconnected', 'removed'],
  disconnected: ['subscribed', 'removed'],
  removed: [],
};

export const MAX_COMPLETED_TASKS_PER_FRAMEWORK = 1000;

export class Framework {
  state: FrameworkState = 'subscribed';
  /** The subscriber's connection, while subscribed; events are addressed to it. */
  connectionId: string | undefined;
  streamId: string | undefined;
  suppressedRoles = new Set<string>();
  constraints: OfferConstraints | undefined;
  readonly offers = new Map<string, Offer>();
  readonly tasks = new Map<string, Task>();
  readonly completedTasks: Task[] = [];
  /** Executors other than command executors, keyed `agentId/executorId`. */
  readonly executors = new Map<string, ExecutorRecord>();
  heartbeatTimer: TimerId | undefined;
  failoverTimer: TimerId | undefined;
  reregisteredTimeMs: number | undefined;
  unregisteredTimeMs: number | undefined;
  /** Learnt from an agent after a master failover and not re-subscribed since (upstream's recovered framework). */
  recovered = false;
  /** How many finished tasks `completedTasks` keeps (`--max_completed_tasks_per_framework`). */
  maxCompletedTasks = MAX_COMPLETED_TASKS_PER_FRAMEWORK;
  /** Where the tasks that end are counted by their last state: the master's, shared by its frameworks. */
  endedTasks: Map<string, number> = new Map();

  constructor(
    readonly id: string,
    public info: FrameworkInfo & { readonly id: string },
    readonly registeredTimeMs: number,
    /** Puts an event in the outbox for a connection (and in the trace). */
    private readonly emit: (connectionId: string, frameworkId: string, event: SchedulerEvent) => void,
  ) {}

  /** The roles offers go to: `roles` with MULTI_ROLE, else the single `role`. */
  roles(): string[] {
    return this.has('MULTI_ROLE') ? [...this.info.roles] : [this.info.role ?? '*'];
  }

  has(capability: Capability): boolean {
    return this.info.capabilities.includes(capability);
  }

  moveTo(next: FrameworkState): void {
    if (!FRAMEWORK_NEXT[this.state].includes(next)) {
      throw new Error(`framework '${this.id}': illegal transition ${this.state} -> ${next}`);
    }
    this.state = next;
  }

  /** Sends to the subscriber if connected; events for a disconnected framework are dropped. */
  send(event: SchedulerEvent): void {
    if (this.state !== 'subscribed' || this.connectionId === undefined) return;
    this.emit(this.connectionId, this.id, event);
  }

  completeTask(task: Task): void {
    this.tasks.delete(task.spec.taskId);
    this.endedTasks.set(task.state, (this.endedTasks.get(task.state) ?? 0) + 1);
    keepLatest(this.completedTasks, task, this.maxCompletedTasks);
  }
}

/** Appends to a bounded history (upstream's circular buffers): past `max`, the oldest go first. */
export function keepLatest<T>(history: T[], item: T, max: number): void {
  history.push(item);
  if (history.length > max) history.splice(0, history.length - max);
}

/** What a master-made status needs to know about its task. */
export interface TaskRef {
  readonly taskId: string;
  readonly agentId?: string | undefined;
  readonly executorId?: string | undefined;
}

export function refOf(task: Task): TaskRef {
  return { taskId: task.spec.taskId, agentId: task.agentId, executorId: task.executorId };
}
