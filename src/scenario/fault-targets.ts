/**
 * What a timeline fault names, found in the cluster at the instant it
 * fires: its agents (targets.ts: an index, a name chosen `as`, a
 * selector), its framework by name, and a task by its framework and
 * ordinal (`framework: web, ordinal: 1`: the second of web's tasks in
 * TASK_RUNNING, in the order the master booked them). The agents are the
 * file's, then those `add_agent` faults added, in order. What is not there
 * is listed, for the run's one-line problem.
 */
import type { ClusterDriver } from '../runtime/driver.js';
import {
  type AgentFacts,
  type AgentTarget,
  type AgentTask,
  describeSelector,
  resolveFault,
  selectAgent,
} from './targets.js';

export interface FaultTargetsHost {
  readonly driver: ClusterDriver;
  /** The agents of the cluster, in its order. */
  agentIds(): readonly string[];
  /** The id of a framework of the file, by its name, once subscribed. */
  frameworkId(name: string): string | undefined;
  /** The names of the file's frameworks, by id. */
  names(): ReadonlyMap<string | undefined, string>;
}

export type Resolved =
  | { readonly ok: true; readonly body: Record<string, unknown>; readonly chosen: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly missing: readonly string[] };

export class FaultTargets {
  /** Agents chosen by a selector's `as`, by that name. */
  readonly #chosen = new Map<string, string>();
  /** Agents that `add_agent` faults added, in order: after the file's in the cluster's order. */
  readonly #added: string[] = [];

  constructor(private readonly host: FaultTargetsHost) {}

  /** The fault with ids for the names it gives, or what it names that is not there now. */
  resolve(raw: Readonly<Record<string, unknown>>): Resolved {
    const missing: string[] = [];
    const chosen = new Map<string, string>();
    const body = resolveFault(
      raw,
      (target) => this.#agentOf(target, chosen) ?? (missing.push(missingAgent(target)), ''),
      (name) => this.host.frameworkId(name) ?? (missing.push(`framework ${name} (not subscribed yet)`), ''),
      // A framework not subscribed yet is missing already.
      (name, ordinal) =>
        this.host.frameworkId(name) === undefined
          ? ''
          : (this.#taskOf(name, ordinal) ?? (missing.push(missingTask(name, ordinal)), '')),
    );
    if (missing.length > 0) return { ok: false, missing };
    return { ok: true, body, chosen };
  }

  /** Keeps the agents a fault that applied chose `as` a name. */
  keep(chosen: ReadonlyMap<string, string>): void {
    for (const [name, id] of chosen) this.#chosen.set(name, id);
  }

  /** An agent an `add_agent` fault added: the next index. */
  added(agentId: string): void {
    this.#added.push(agentId);
  }

  #agentIds(): readonly string[] {
    return [...this.host.agentIds(), ...this.#added];
  }

  /** The id of the agent a fault names, now; a selector's choice `as` a name goes into `chosen`. */
  #agentOf(target: AgentTarget, chosen: Map<string, string>): string | undefined {
    if (typeof target === 'number') return this.#agentIds()[target];
    if (typeof target === 'string') return chosen.get(target) ?? this.#chosen.get(target);
    const id = selectAgent(target, this.#agentFacts());
    if (id !== undefined && target.as !== undefined) chosen.set(target.as, id);
    return id;
  }

  /** The id of the framework's `ordinal`-th task in TASK_RUNNING, in the order the master booked them. */
  #taskOf(name: string, ordinal: number): string | undefined {
    const id = this.host.frameworkId(name);
    if (id === undefined) return undefined;
    return this.host.driver.read((view) => {
      const fw = view.framework(id);
      if (fw === undefined) return undefined;
      let n = 0;
      for (const task of fw.tasks.values()) {
        if (task.state !== 'TASK_RUNNING') continue;
        if (n++ === ordinal) return task.spec.taskId;
      }
      return undefined;
    });
  }

  /** The agents as selectors see them, in the cluster's order, but those gone: attributes, and the tasks the master books there. */
  #agentFacts(): AgentFacts[] {
    const names = this.host.names();
    return this.host.driver.read((view) => {
      const tasks = new Map<string, AgentTask[]>();
      for (const fw of view.frameworks()) {
        for (const task of fw.tasks.values()) {
          const list = tasks.get(task.agentId) ?? [];
          list.push({ framework: names.get(fw.id), taskId: task.spec.taskId, state: task.state });
          tasks.set(task.agentId, list);
        }
      }
      // An agent marked gone has left the cluster: no selector picks it.
      const gone = new Set([...view.allAgents()].filter((a) => a.state === 'gone').map((a) => a.id));
      return this.#agentIds()
        .filter((id) => !gone.has(id))
        .map((id) => ({
          id,
          attributes: view.agentNode(id)?.config.attributes ?? [],
          tasks: tasks.get(id) ?? [],
        }));
    });
  }
}

/** What a fault names that the cluster has not got: `agent 5`, `agent chosen as 'cut' (...)`, `agent running ...`. */
function missingAgent(target: AgentTarget): string {
  if (typeof target === 'number') return `agent ${target}`;
  if (typeof target === 'string') {
    return `agent chosen as '${target}' (the fault that chooses it has not fired, or found none)`;
  }
  return describeSelector(target).replace(/^an /, '');
}

function missingTask(name: string, ordinal: number): string {
  return `task of ${name} at ordinal ${ordinal} (it has fewer tasks in TASK_RUNNING)`;
}
