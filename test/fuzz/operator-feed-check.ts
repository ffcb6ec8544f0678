/**
 * The operator event stream as a story that must hold together: SUBSCRIBED
 * tells what exists (agents, frameworks, tasks), and every later event
 * adds what was not there or speaks of what is:
 *
 *   TASK_ADDED        a task not yet known
 *   TASK_UPDATED      a known task
 *   AGENT_ADDED       an agent not yet known; AGENT_REMOVED a known one, once
 *   FRAMEWORK_ADDED   a framework not yet known; FRAMEWORK_UPDATED and
 *                     FRAMEWORK_REMOVED a known one, removed once
 */
type Id = { value?: string } | undefined;
type Task = { task_id?: Id; framework_id?: Id };
type Framework = { framework_info?: { id?: Id } };
type Agent = { agent_info?: { id?: Id } };

export interface OperatorEventValue {
  type?: string;
  subscribed?: {
    get_state?: {
      get_tasks?: Record<string, Task[] | undefined>;
      get_frameworks?: { frameworks?: Framework[]; completed_frameworks?: Framework[] };
      get_agents?: { agents?: Agent[] };
    };
  };
  task_added?: { task?: Task };
  task_updated?: { framework_id?: Id; status?: { task_id?: Id } };
  agent_added?: { agent?: Agent };
  agent_removed?: { agent_id?: Id };
  framework_added?: { framework?: Framework };
  framework_updated?: { framework?: Framework };
  framework_removed?: { framework_info?: { id?: Id } };
}

const taskKey = (framework: Id, task: Id) => `${framework?.value ?? '?'} ${task?.value ?? '?'}`;

export class OperatorFeedCheck {
  readonly #tasks = new Set<string>();
  readonly #agents = new Set<string>();
  readonly #frameworks = new Set<string>();

  /** What is wrong with this event, given the ones before it. */
  see(event: OperatorEventValue): string | undefined {
    switch (event.type) {
      case 'SUBSCRIBED':
        this.#subscribed(event.subscribed?.get_state);
        return undefined;
      case 'TASK_ADDED': {
        const task = event.task_added?.task;
        return this.#add(this.#tasks, taskKey(task?.framework_id, task?.task_id), 'task');
      }
      case 'TASK_UPDATED':
        return this.#known(
          this.#tasks,
          taskKey(event.task_updated?.framework_id, event.task_updated?.status?.task_id),
          'task',
          false,
        );
      case 'AGENT_ADDED':
        return this.#add(this.#agents, event.agent_added?.agent?.agent_info?.id?.value, 'agent');
      case 'AGENT_REMOVED':
        return this.#known(this.#agents, event.agent_removed?.agent_id?.value, 'agent', true);
      case 'FRAMEWORK_ADDED':
        return this.#add(this.#frameworks, event.framework_added?.framework?.framework_info?.id?.value, 'framework');
      case 'FRAMEWORK_UPDATED':
        return this.#known(
          this.#frameworks,
          event.framework_updated?.framework?.framework_info?.id?.value,
          'framework',
          false,
        );
      case 'FRAMEWORK_REMOVED':
        return this.#known(this.#frameworks, event.framework_removed?.framework_info?.id?.value, 'framework', true);
      default:
        return undefined;
    }
  }

  #subscribed(state: NonNullable<OperatorEventValue['subscribed']>['get_state']): void {
    for (const list of Object.values(state?.get_tasks ?? {}))
      for (const t of list ?? []) this.#tasks.add(taskKey(t.framework_id, t.task_id));
    for (const f of state?.get_frameworks?.frameworks ?? []) this.#frameworks.add(f.framework_info?.id?.value ?? '?');
    for (const a of state?.get_agents?.agents ?? []) this.#agents.add(a.agent_info?.id?.value ?? '?');
  }

  #add(known: Set<string>, id: string | undefined, what: string): string | undefined {
    if (id === undefined) return `a ${what} added without an id`;
    if (known.has(id)) return `the ${what} ${id} added twice`;
    known.add(id);
    return undefined;
  }

  #known(known: Set<string>, id: string | undefined, what: string, remove: boolean): string | undefined {
    if (id === undefined || !known.has(id))
      return `an event about the ${what} ${String(id)}, which the stream never added`;
    if (remove) known.delete(id);
    return undefined;
  }
}
