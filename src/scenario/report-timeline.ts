/**
 * What the HTML report draws, gathered from a run's trace as it is written
 * (the run's trace sink), so that a run longer than the trace's window is
 * drawn whole: the agents in the order they joined, each task's states as
 * intervals on its agent, the faults (a band when they last: a duration,
 * a partition until its heal, a network rule until its removal), the
 * frameworks' subscriptions and disconnections, the masters' crashes and
 * elections, and the resources the live tasks hold over time.
 *
 * The resources are those of the tasks the frameworks launched (the
 * LAUNCH and LAUNCH_GROUP operations of their ACCEPT calls, recorded as
 * inputs), counted from the task's launch to its terminal state: the
 * resources in use by tasks, not those offered, and not the executors'.
 * Memory kept is one record per task, fault and mark; entries of other
 * kinds are skipped without parsing.
 */
import type { TraceEntry } from '../core/kernel/trace.js';
import { isTerminal } from '../core/model/task-state.js';
import type { TaskState } from '../core/model/types.js';

export interface TaskSegment {
  readonly state: string;
  readonly fromMs: number;
  /** Undefined while the state lasts to the end of the run. */
  toMs: number | undefined;
}

export interface TaskBar {
  readonly frameworkId: string;
  readonly taskId: string;
  readonly agentId: string;
  readonly segments: TaskSegment[];
}

export interface FaultBand {
  readonly type: string;
  readonly atMs: number;
  /** Undefined for a fault of an instant, or one never undone before the end. */
  endMs: number | undefined;
  /** Whether it lasts until undone (a partition, a network rule): drawn to the end when never undone. */
  readonly lasting: boolean;
  readonly detail: string;
  /** The agent it concerns, when it names one. */
  readonly agentId: string | undefined;
}

export interface Mark {
  readonly atMs: number;
  readonly kind: string;
  readonly text: string;
}

export interface ResourceSample {
  readonly atMs: number;
  readonly cpusMilli: number;
  readonly memMib: number;
}

export interface ReportTimeline {
  readonly agents: readonly string[];
  readonly tasks: readonly TaskBar[];
  readonly faults: readonly FaultBand[];
  readonly frameworkMarks: readonly Mark[];
  readonly masterMarks: readonly Mark[];
  readonly agentMarks: readonly (Mark & { readonly agentId: string })[];
  readonly resources: readonly ResourceSample[];
  /** The agents' total cpus (milli) and mem (MiB), as they were added. */
  readonly capacity: { readonly cpusMilli: number; readonly memMib: number };
  /** A framework's name by its id, as it subscribed. */
  readonly frameworkNames: ReadonlyMap<string, string>;
}

type Data = Record<string, unknown>;

/** The kinds read; the rest are passed over before their JSON is parsed. */
const READ =
  /^(task:|fault:|framework:|master:|agent:(add|crash|unreachable|reachable|reregistered|restart)$|input:(addAgent|subscribe|call)$|net:rule-add$|event:update$)/;

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/** Collects a run's report timeline from its trace entries, given in order. */
export class TimelineRecorder {
  readonly #agents: string[] = [];
  readonly #bars: TaskBar[] = [];
  /** The latest bar of each task, by framework and task id. */
  readonly #tasks = new Map<string, TaskBar>();
  readonly #faults: FaultBand[] = [];
  readonly #frameworkMarks: Mark[] = [];
  readonly #masterMarks: Mark[] = [];
  readonly #agentMarks: (Mark & { agentId: string })[] = [];
  readonly #resources: ResourceSample[] = [];
  readonly #names = new Map<string, string>();
  /** Names of subscriptions without an id yet, in order: the next new framework takes the first. */
  readonly #pendingNames: string[] = [];
  /** The resources of tasks accepted but not yet launched, and of the live ones, by framework and task. */
  readonly #taskResources = new Map<string, { cpusMilli: number; memMib: number }>();
  readonly #live = new Set<string>();
  /** Network rules by id, in the order they were added, waiting for their removal. */
  readonly #rules = new Map<number, FaultBand>();
  readonly #capacity = { cpusMilli: 0, memMib: 0 };
  #used = { cpusMilli: 0, memMib: 0 };

  /** Takes one trace entry (as a run's trace sink). */
  readonly add = (entry: TraceEntry): void => {
    if (!READ.test(entry.kind)) return;
    // Of the calls only an ACCEPT launches tasks: the many others are not parsed.
    if (entry.kind === 'input:call' && !entry.line.includes('"type":"ACCEPT"')) return;
    const text = entry.line.slice(entry.line.indexOf(' ', String(entry.timeMs).length + 1) + 1);
    if (entry.kind === 'event:update') return this.#masterUpdate(entry.timeMs, text.split(' '));
    const data = JSON.parse(text) as unknown;
    if (entry.kind.startsWith('input:')) this.#input(entry.kind, data as unknown[]);
    else this.#event(entry.timeMs, entry.kind, data as Data);
  };

  timeline(): ReportTimeline {
    return {
      agents: this.#agents,
      tasks: this.#bars,
      faults: this.#faults,
      frameworkMarks: this.#frameworkMarks,
      masterMarks: this.#masterMarks,
      agentMarks: this.#agentMarks,
      resources: this.#resources,
      capacity: { ...this.#capacity },
      frameworkNames: this.#names,
    };
  }

  #input(kind: string, args: unknown[]): void {
    if (kind === 'input:addAgent') {
      const sums = sumResources((args[0] as Data)['resources']);
      this.#capacity.cpusMilli += sums.cpusMilli;
      this.#capacity.memMib += sums.memMib;
    } else if (kind === 'input:subscribe') {
      const info = ((args[1] as Data)['info'] ?? {}) as Data;
      if (typeof info['id'] === 'string') this.#names.set(info['id'], str(info['name']));
      else this.#pendingNames.push(str(info['name']));
    } else {
      this.#accept(str(args[0]), args[2] as Data);
    }
  }

  /** Notes the resources of the tasks an ACCEPT call launches. */
  #accept(frameworkId: string, call: Data): void {
    if (call['type'] !== 'ACCEPT') return;
    for (const op of (call['operations'] ?? []) as Data[]) {
      const group = (op['taskGroup'] ?? op['task_group']) as Data | undefined;
      const tasks = (op['type'] === 'LAUNCH' ? op['tasks'] : op['type'] === 'LAUNCH_GROUP' ? group?.['tasks'] : []) as
        | Data[]
        | undefined;
      for (const task of tasks ?? []) {
        this.#taskResources.set(`${frameworkId} ${str(task['taskId'])}`, sumResources(task['resources']));
      }
    }
  }

  #event(atMs: number, kind: string, data: Data): void {
    if (kind === 'task:launch' || kind === 'task:status') this.#task(atMs, kind, data);
    else if (kind.startsWith('fault:')) this.#fault(atMs, kind.slice('fault:'.length), data);
    else if (kind.startsWith('framework:')) this.#framework(atMs, kind.slice('framework:'.length), data);
    else if (kind.startsWith('master:')) this.#masterMarks.push({ atMs, kind, text: masterText(kind, data) });
    else if (kind === 'net:rule-add') this.#ruleAdded(data);
    else this.#agent(atMs, kind, data);
  }

  #task(atMs: number, kind: string, data: Data): void {
    const key = `${str(data['frameworkId'])} ${str(data['taskId'])}`;
    let bar = this.#tasks.get(key);
    // A launch starts a bar of its own, also for a task id used before.
    if (bar === undefined || kind === 'task:launch') {
      bar = {
        frameworkId: str(data['frameworkId']),
        taskId: str(data['taskId']),
        agentId: str(data['agentId']),
        segments: [],
      };
      this.#tasks.set(key, bar);
      this.#bars.push(bar);
    }
    const state = kind === 'task:launch' ? 'TASK_STAGING' : str(data['latest'] ?? data['state']);
    const last = bar.segments.at(-1);
    if (last !== undefined && last.state === state) return;
    if (last !== undefined) last.toMs = atMs;
    const terminal = isTerminal(state as TaskState);
    bar.segments.push({ state, fromMs: atMs, toMs: terminal ? atMs : undefined });
    this.#count(atMs, key, !terminal);
  }

  /**
   * An update the master made itself (`frameworkId taskId STATE SOURCE_MASTER uuid`): a task lost with its
   * agent, dropped, unreachable. Those of the agents are in `task:status` already.
   */
  #masterUpdate(atMs: number, [frameworkId, taskId, state, source]: string[]): void {
    if (source !== 'SOURCE_MASTER' || !this.#tasks.has(`${frameworkId} ${taskId}`)) return;
    this.#task(atMs, 'task:status', { frameworkId, taskId, state });
  }

  /** Counts a task's resources in use from its launch to its terminal state. */
  #count(atMs: number, key: string, live: boolean): void {
    const held = this.#taskResources.get(key);
    if (held === undefined || this.#live.has(key) === live) return;
    const sign = live ? 1 : -1;
    if (live) this.#live.add(key);
    else this.#live.delete(key);
    this.#used = {
      cpusMilli: this.#used.cpusMilli + sign * held.cpusMilli,
      memMib: this.#used.memMib + sign * held.memMib,
    };
    if (this.#resources.at(-1)?.atMs === atMs) this.#resources.pop();
    this.#resources.push({ atMs, ...this.#used });
  }

  #fault(atMs: number, type: string, data: Data): void {
    const durationMs = typeof data['durationMs'] === 'number' ? data['durationMs'] : undefined;
    const lasting = type === 'partition' || type === 'network_rule';
    const agentId = typeof data['agentId'] === 'string' ? data['agentId'] : undefined;
    const detail = Object.entries(data)
      .map(([k, v]) => `${k} ${str(v)}`)
      .join(', ');
    const band: FaultBand = {
      type,
      atMs,
      endMs: durationMs === undefined ? undefined : atMs + durationMs,
      lasting,
      detail,
      agentId,
    };
    if (type === 'heal') this.#heal(atMs, str(data['nodes']));
    if (type === 'remove_network_rule') {
      const rule = this.#rules.get(Number(data['ruleId']));
      if (rule !== undefined) rule.endMs = atMs;
    }
    this.#faults.push(band);
  }

  /** A heal ends the open partitions of the same nodes (all of them when it names none). */
  #heal(atMs: number, nodes: string): void {
    for (const f of this.#faults) {
      if (f.type !== 'partition' || f.endMs !== undefined) continue;
      if (nodes === '' || f.detail.includes(nodes)) f.endMs = atMs;
    }
  }

  /** The rule a network_rule fault added: the fault's band ends when the rule is removed. */
  #ruleAdded(data: Data): void {
    const band = this.#faults.findLast((f) => f.type === 'network_rule');
    if (band !== undefined) this.#rules.set(Number(data['ruleId']), band);
  }

  #framework(atMs: number, what: string, data: Data): void {
    const id = str(data['frameworkId']);
    if (what === 'subscribed' && data['failover'] === false && !this.#names.has(id)) {
      const name = this.#pendingNames.shift();
      if (name !== undefined) this.#names.set(id, name);
    }
    this.#frameworkMarks.push({ atMs, kind: what, text: id });
  }

  #agent(atMs: number, kind: string, data: Data): void {
    const agentId = str(data['agentId']);
    if (kind === 'agent:add') {
      if (!this.#agents.includes(agentId)) this.#agents.push(agentId);
      return;
    }
    this.#agentMarks.push({ atMs, kind: kind.slice('agent:'.length), text: agentId, agentId });
    if (kind === 'agent:reachable') this.#tasksBack(atMs, agentId);
  }

  /**
   * An unreachable agent that re-registers brings its tasks back, and the
   * master holds them in the state the agent reports, with no update of its
   * own (as upstream): drawn in their state before they were unreachable. A
   * change on the agent meanwhile comes as a `task:status` of its own.
   */
  #tasksBack(atMs: number, agentId: string): void {
    for (const bar of this.#bars) {
      const [before, last] = bar.segments.slice(-2);
      if (bar.agentId !== agentId || last?.state !== 'TASK_UNREACHABLE' || before === undefined) continue;
      this.#task(atMs, 'task:status', { frameworkId: bar.frameworkId, taskId: bar.taskId, state: before.state });
    }
  }
}

function masterText(kind: string, data: Data): string {
  if (kind === 'master:elected') return `master ${str(data['index'])} elected`;
  if (kind === 'master:crash')
    return `master ${str(data['index'])} crashed${data['leader'] === true ? ' (the leader)' : ''}`;
  return `${kind.slice('master:'.length)} ${Object.entries(data)
    .map(([k, v]) => `${k} ${str(v)}`)
    .join(', ')}`;
}

/** Cpus (milli) and mem (MiB) of a list of resources as the core writes them (scalars in thousandths). */
function sumResources(resources: unknown): { cpusMilli: number; memMib: number } {
  let cpusMilli = 0;
  let memMib = 0;
  for (const r of (Array.isArray(resources) ? resources : []) as Data[]) {
    const milli = typeof r['milli'] === 'number' ? r['milli'] : 0;
    if (r['name'] === 'cpus') cpusMilli += milli;
    if (r['name'] === 'mem') memMib += milli / 1000;
  }
  return { cpusMilli, memMib };
}
