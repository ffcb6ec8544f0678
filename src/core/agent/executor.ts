/**
 * Simulated executors. Three kinds, as on a real agent:
 *
 *   command  one per command task (TaskInfo.command); exits when its task ends
 *   default  runs task groups (LAUNCH_GROUP); killing one task of a group
 *            kills the whole group; exits when it has no live task left
 *   custom   the framework's own ExecutorInfo; stays up until shut down
 *
 * Each task follows its plan (see behaviour.ts). Updates go to the agent,
 * which adds uuids and hands them to the status update manager. A simulated
 * process dies on SIGTERM at once, so a kill ends in TASK_KILLED right away,
 * after TASK_KILLING for frameworks with the TASK_KILLING_STATE capability.
 */
import { planFor, type TaskPlan } from '../behaviour.js';
import type { SimContext } from '../context.js';
import type { TimerId } from '../event-loop.js';
import { isTerminal, transition } from '../task-state.js';
import type { StatusReason, TaskSpec, TaskState } from '../types.js';

export type ExecutorKind = 'command' | 'default' | 'custom';

export interface ExecutorHost {
  /** An update produced by the executor for one of its tasks. */
  update(executor: SimExecutor, taskId: string, state: TaskState, message?: string, reason?: StatusReason): void;
  /** The executor process ended with a wait(2) status. */
  exited(executor: SimExecutor, waitStatus: number): void;
}

export interface SimTask {
  readonly spec: TaskSpec;
  readonly groupId: number;
  readonly plan: TaskPlan;
  state: TaskState;
  timer?: TimerId;
}

export class SimExecutor {
  readonly tasks = new Map<string, SimTask>();
  #alive = true;
  #lastExitCode = 0;
  #groups = 0;

  constructor(
    private readonly ctx: SimContext,
    private readonly host: ExecutorHost,
    readonly executorId: string,
    readonly frameworkId: string,
    readonly kind: ExecutorKind,
    readonly containerId: string,
    private readonly killingCapable: boolean,
  ) {}

  get alive(): boolean {
    return this.#alive;
  }

  liveTasks(): SimTask[] {
    return [...this.tasks.values()].filter((t) => !isTerminal(t.state));
  }

  /** Starts a group of tasks (a single task for LAUNCH). */
  launch(specs: readonly TaskSpec[]): void {
    const groupId = ++this.#groups;
    for (const spec of specs) {
      const plan = planFor(spec.command ?? (this.kind === 'custom' ? undefined : spec.executor?.command));
      const task: SimTask = { spec, groupId, plan, state: 'TASK_STAGING' };
      this.tasks.set(spec.taskId, task);
      this.#set(task, 'TASK_STARTING');
      this.#set(task, 'TASK_RUNNING');
      if (plan.kind === 'exits') {
        task.timer = this.ctx.loop.schedule(plan.runMs, 'task:exit', () => this.#finish(task, plan.exitCode));
      }
    }
  }

  /** Kills a task; for the default executor, its whole group. */
  kill(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (task === undefined || isTerminal(task.state)) return;
    const victims =
      this.kind === 'default' ? this.liveTasks().filter((t) => t.groupId === task.groupId) : [task];
    for (const victim of victims) this.#kill(victim, 'Command terminated with signal Terminated');
    this.#maybeExit();
  }

  /** Kills every task, then exits. */
  shutdown(): void {
    for (const task of this.liveTasks()) this.#kill(task, 'Command terminated with signal Terminated');
    this.#lastExitCode = 15;
    this.#exit();
  }

  #kill(task: SimTask, message: string): void {
    this.ctx.loop.cancel(task.timer);
    if (this.killingCapable && task.state !== 'TASK_KILLING') this.#set(task, 'TASK_KILLING');
    this.#set(task, 'TASK_KILLED', message);
  }

  #finish(task: SimTask, exitCode: number): void {
    if (isTerminal(task.state)) return;
    this.#lastExitCode = exitCode;
    if (exitCode === 0) this.#set(task, 'TASK_FINISHED', 'Command exited with status 0');
    else this.#set(task, 'TASK_FAILED', `Command exited with status ${exitCode}`);
    this.#maybeExit();
  }

  #set(task: SimTask, state: TaskState, message?: string, reason?: StatusReason): void {
    task.state = transition(task.spec.taskId, task.state, state);
    this.host.update(this, task.spec.taskId, state, message, reason);
  }

  #maybeExit(): void {
    if (this.kind !== 'custom' && this.liveTasks().length === 0) this.#exit();
  }

  #exit(): void {
    if (!this.#alive) return;
    this.#alive = false;
    // A wait(2) status: the exit code in the high byte, or the signal number.
    const status = this.#lastExitCode === 15 ? 15 : (this.#lastExitCode & 0xff) << 8;
    this.host.exited(this, status);
  }
}
