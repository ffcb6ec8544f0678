/**
 * The agent a timeline fault is for. A file names it by index (`agent: 2`),
 * which holds only while the seed places the tasks where the author saw
 * them, or by what is true of it when the fault fires:
 *
 *   agent: { running: { framework: web, task_prefix: web-1, state: TASK_RUNNING } }
 *   agent: { attributes: "rack:r1" }
 *   agent: { task: web-3 }
 *   agent: { running: { framework: orch }, as: cut }     ... later: agent: cut
 *
 * `running`: an agent where the master books at least one task of that
 * framework (any, without one) in that state (default TASK_RUNNING) whose
 * id starts with the prefix (a task it still books: not one finished and
 * moved to its framework's history); the one with the most such tasks, the first
 * in the cluster's order (its index) among equals. `attributes`: an agent
 * with every attribute given (upstream's --attributes form). `task`: the
 * agent where the master books a live task of that id (of any framework;
 * the first in the cluster's order if two frameworks use the id). Any of
 * them may be given together: the agent satisfies all. `as` keeps the agent chosen under a name, for later faults: the
 * heal of a partition, the restart of a crash, whatever runs there by then.
 */
import { MASTER_NODE } from '../core/model/messages.js';
import { isTerminal } from '../core/model/task-state.js';
import type { Attribute, TaskState } from '../core/model/types.js';
import { parseAttributes } from '../wire/convert-common.js';

export interface RunningSelector {
  readonly framework?: string;
  readonly task_prefix?: string;
  readonly state?: string;
}

export interface AgentSelector {
  readonly running?: RunningSelector;
  readonly attributes?: string;
  /** The id of a task the master books on the agent, in a live state. */
  readonly task?: string;
  /** Keeps the agent chosen under this name. */
  readonly as?: string;
}

/** An agent as a fault names it: its index, the name an earlier fault chose it `as`, or a selector. */
export type AgentTarget = number | string | AgentSelector;

/** What a selector looks at of one agent, at the moment a fault fires. */
export interface AgentFacts {
  readonly id: string;
  readonly attributes: readonly Attribute[];
  /** The tasks the master books on the agent: framework name (undefined for one not of the file), id, latest state. */
  readonly tasks: readonly AgentTask[];
}

export interface AgentTask {
  readonly framework: string | undefined;
  readonly taskId: string;
  readonly state: string;
}

export function isSelector(target: unknown): target is AgentSelector {
  return typeof target === 'object' && target !== null && !Array.isArray(target);
}

/**
 * The agent a selector picks among `agents` (in the cluster's order), or
 * undefined when none matches.
 */
export function selectAgent(selector: AgentSelector, agents: readonly AgentFacts[]): string | undefined {
  const wanted = selector.attributes === undefined ? [] : attributesOf(selector.attributes);
  let best: { id: string; n: number } | undefined;
  for (const agent of agents) {
    // Both sides come from upstream's --attributes form through one parser: equal attributes are equal texts.
    const has = new Set(agent.attributes.map((a) => JSON.stringify(a)));
    if (!wanted.every((a) => has.has(JSON.stringify(a)))) continue;
    if (selector.task !== undefined && !agent.tasks.some((t) => t.taskId === selector.task && isLive(t))) continue;
    const n = selector.running === undefined ? 1 : matchingTasks(selector.running, agent);
    if (n > 0 && (best === undefined || n > best.n)) best = { id: agent.id, n };
  }
  return best?.id;
}

function matchingTasks(running: RunningSelector, agent: AgentFacts): number {
  const state = running.state ?? 'TASK_RUNNING';
  const prefix = running.task_prefix ?? '';
  let n = 0;
  for (const task of agent.tasks) {
    if (task.state !== state || !task.taskId.startsWith(prefix)) continue;
    if (running.framework !== undefined && task.framework !== running.framework) continue;
    n++;
  }
  return n;
}

function isLive(task: AgentTask): boolean {
  return !isTerminal(task.state as TaskState);
}

/** A selector's attributes, parsed; a text that does not parse is the loader's to refuse. */
export function attributesOf(text: string): readonly Attribute[] {
  const parsed = parseAttributes(text);
  return typeof parsed === 'string' ? [] : parsed;
}

/**
 * A selector in words, for a run's problems:
 * `an agent running TASK_RUNNING tasks of orch whose id starts with 'orch-datastore'`.
 */
export function describeSelector(selector: AgentSelector): string {
  const parts: string[] = [];
  const running = selector.running;
  if (running !== undefined) {
    const of = running.framework === undefined ? '' : ` of ${running.framework}`;
    const prefix = running.task_prefix === undefined ? '' : ` whose id starts with '${running.task_prefix}'`;
    parts.push(`running ${running.state ?? 'TASK_RUNNING'} tasks${of}${prefix}`);
  }
  if (selector.attributes !== undefined) parts.push(`with attributes '${selector.attributes}'`);
  if (selector.task !== undefined) parts.push(`running task '${selector.task}'`);
  return `an agent ${parts.join(' and ')}`;
}

/**
 * A timeline fault with its agents (`agent`, and `nodes` but 'master') as
 * `agent_id` and node ids, `framework: NAME` as `framework_id`, and
 * `ordinal: N` (with `framework`) as the `task_id` of that framework's
 * N-th running task, by the functions given (the runner's, once ids are known).
 */
export function resolveFault(
  fault: Readonly<Record<string, unknown>>,
  agentId: (target: AgentTarget) => string,
  frameworkId: (name: string) => string,
  taskId: (framework: string, ordinal: number) => string,
): Record<string, unknown> {
  const { agent, framework, ordinal, ...rest } = fault;
  const node = (n: unknown): unknown => (n === MASTER_NODE || !isTarget(n) ? n : agentId(n));
  const nodes = Array.isArray(rest['nodes']) ? { nodes: rest['nodes'].map(node) } : {};
  const byOrdinal = typeof framework === 'string' && typeof ordinal === 'number';
  return {
    ...rest,
    ...nodes,
    ...(isTarget(agent) ? { agent_id: agentId(agent) } : {}),
    ...(typeof framework === 'string' ? { framework_id: frameworkId(framework) } : {}),
    ...(byOrdinal ? { task_id: taskId(framework, ordinal) } : {}),
  };
}

function isTarget(value: unknown): value is AgentTarget {
  return typeof value === 'number' || typeof value === 'string' || isSelector(value);
}
