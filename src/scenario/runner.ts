/**
 * Runs a scenario in virtual time. The cluster is a real one (the master's
 * HTTP API, the agents), started by the caller's function; the scripted
 * frameworks talk to it over HTTP. Time moves only here: to the next
 * instant something falls due (a timer of the cluster, a framework's own,
 * a timeline entry, a check), and at each instant the frameworks take
 * every event sent to them and react, one after another in file order,
 * before anything else happens. So the inputs reach the cluster in one
 * order for one seed, and the trace is the same byte for byte.
 */
import { postRaw } from '../client/scheduler-client.js';
import type { MisuseReport } from '../core/master/misuse-report.js';
import type { TraceEntry } from '../core/trace.js';
import { parseFault } from '../http/fault-body.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { Double } from '../wire/legacy/legacy-json.js';
import { renderMetrics } from '../wire/legacy/metrics.js';
import { check, type Evidence, type ExpectationResult } from './expect.js';
import { holds } from './conditions.js';
import { formatSpan } from './duration.js';
import { ScriptedFramework, type FrameworkHost } from './framework.js';
import { observed, RunRecord } from './observe.js';
import type { ClusterSpec, Condition, Scenario, TimelineEntry } from './scenario.js';
import { ServiceRun, type StartService, type StreamWatch } from './services.js';
import { describeSelector, resolveFault, selectAgent } from './targets.js';
import type { AgentFacts, AgentTarget, AgentTask } from './targets.js';

export type { StartService, ConductedService, ServiceContext } from './services.js';

/** What the runner asks of the cluster it is given: the file's cluster (its quota is set later, over HTTP) and the seed. */
export type ClusterRequest = Omit<ClusterSpec, 'quota'> & { readonly seed: string | number };

export interface ScenarioCluster {
  readonly masterUrls: readonly string[];
  readonly agentIds: readonly string[];
  readonly driver: ClusterDriver;
  close(): Promise<void>;
}

export type StartScenarioCluster = (request: ClusterRequest) => Promise<ScenarioCluster>;

export interface RunOptions {
  readonly start: StartScenarioCluster;
  /** Starts the file's bundled frameworks (`services`) on the cluster. */
  readonly startService?: StartService;
  /** Overrides the file's seed. */
  readonly seed?: string | number;
  /** Called as cluster time moves (at most every few hundred steps). */
  readonly onProgress?: (nowMs: number, durationMs: number) => void;
  /** Keep the whole trace in the result (for --trace and replay). */
  readonly keepTrace?: boolean;
  /** A fault that does not apply (its target gone, or in no state for it) is a note, not a problem: random schedules. */
  readonly lenientFaults?: boolean;
}

export interface RunResult {
  readonly scenario: Scenario;
  readonly seed: string;
  readonly results: readonly ExpectationResult[];
  /** What went wrong outside the expectations: a fault that could not apply, a framework stopped. */
  readonly problems: readonly string[];
  /** What the frameworks met on the way (refused calls, connections taken for dead): for the reader, not failures. */
  readonly notes: readonly string[];
  readonly passed: boolean;
  /** What the frameworks did that a cluster tolerates but they should not, at the end of the run. */
  readonly misuse: MisuseReport;
  readonly traceHash: string;
  readonly traceLength: number;
  readonly endMs: number;
  readonly wallMs: number;
  readonly trace?: readonly TraceEntry[];
}

/** How long (wall clock) the runner waits for an answer of the cluster before it calls the run broken. */
const SYNC_TIMEOUT_MS = 10_000;

export async function runScenario(scenario: Scenario, options: RunOptions): Promise<RunResult> {
  const seed = options.seed ?? scenario.seed;
  const started = performance.now();
  const { quota: _quota, ...clusterSpec } = scenario.cluster;
  const cluster = await options.start({ ...clusterSpec, seed });
  const run = new Run(scenario, cluster, options);
  const trace = cluster.driver.cluster.trace;
  let kept: { hash: string; length: number; entries: readonly TraceEntry[]; misuse: MisuseReport };
  try {
    await run.execute();
  } finally {
    // The run ends here: what closing the frameworks' streams adds is not part of it.
    kept = {
      hash: trace.hash(),
      length: trace.length,
      entries: options.keepTrace === true ? trace.entries().slice() : [],
      misuse: cluster.driver.read((view) => view.misuse()),
    };
    await run.close();
    await cluster.close().catch((e: Error) => run.problems.push(`closing the cluster: ${e.message}`));
  }
  const passed = run.results.every((r) => r.ok) && run.problems.length === 0;
  return {
    scenario,
    seed: String(seed),
    results: run.results,
    problems: run.problems,
    notes: run.notes,
    passed,
    misuse: kept.misuse,
    traceHash: kept.hash,
    traceLength: kept.length,
    endMs: cluster.driver.cluster.now(),
    wallMs: performance.now() - started,
    ...(options.keepTrace === true ? { trace: kept.entries } : {}),
  };
}

class Run {
  readonly results: ExpectationResult[] = [];
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  readonly #frameworks: ScriptedFramework[];
  readonly #services: ServiceRun[];
  readonly #watch: StreamWatch;
  readonly #record: RunRecord;
  readonly #evidence: Evidence;
  readonly #driver: ClusterDriver;
  readonly #fired = new Set<number>();
  readonly #checked = new Set<number>();
  /** Agents chosen by a selector's `as`, by that name. */
  readonly #chosen = new Map<string, string>();

  constructor(
    private readonly scenario: Scenario,
    private readonly cluster: ScenarioCluster,
    private readonly options: RunOptions,
  ) {
    this.#driver = cluster.driver;
    this.#record = new RunRecord(this.#driver.cluster.trace, watchedKinds(scenario));
    const host: FrameworkHost = {
      masterUrls: cluster.masterUrls,
      until: (what, test) => until(what, test),
      eventsSent: (id) => this.#record.eventsSent(id),
      // No framework is subscribed while no master leads: the dead leader's streams are closing.
      subscribedOn: (id, streamId) =>
        this.#driver.read((view) => {
          const fw = view.leaderIndex() === undefined ? undefined : view.framework(id);
          return fw !== undefined && fw.state === 'subscribed' && fw.streamId === streamId;
        }),
    };
    this.#frameworks = scenario.frameworks.map((spec) => new ScriptedFramework(spec, host));
    this.#services = scenario.services.map((spec) => new ServiceRun(spec, () => this.#driver.cluster.now()));
    this.#watch = {
      eventsSent: (id) => this.#record.eventsSent(id),
      subscribedOn: host.subscribedOn,
      stalled: (id) => this.#driver.cluster.streamStalled(id),
    };
    this.#evidence = this.#evidenceOf();
  }

  async execute(): Promise<void> {
    await this.#setUp();
    const end = this.scenario.durationMs;
    let steps = 0;
    for (;;) {
      const now = this.#now();
      await this.#instant(now);
      if (++steps % 200 === 0) this.options.onProgress?.(now, end);
      if (now >= end) break;
      this.#driver.input((c) => c.advanceTo(this.#next(now, end)));
    }
    this.options.onProgress?.(this.#now(), end);
    await this.#checkAt(Infinity);
    for (const fw of this.#frameworks) {
      for (const note of fw.notes) this.notes.push(`${fw.spec.name}: ${note}`);
      if (fw.stopped !== undefined) this.problems.push(`${fw.spec.name} stopped: ${fw.stopped}`);
    }
  }

  async close(): Promise<void> {
    for (const fw of this.#frameworks) fw.close();
    this.#record.close();
    for (const service of this.#services) await service.close().catch((e: Error) => this.problems.push(`closing ${service.spec.name}: ${e.message}`));
  }

  /** Everything due at one instant, until nothing more is. */
  async #instant(now: number): Promise<void> {
    // Faults due at an instant come first: a framework acts on the cluster they leave.
    for (;;) {
      await this.#quiesce(now);
      const fired = await this.#fireTimeline(now);
      if (fired) await this.#quiesce(now);
      const due = this.#frameworks.filter((fw) => (fw.nextWakeMs() ?? Infinity) <= now);
      for (const fw of due) {
        await fw.wake(now);
        await this.#quiesce(now);
      }
      // A service's timers that fell due: each reaction waits for its turn in the quiesce.
      const timed = this.#services.filter((s) => s.pace.fireDue());
      if (timed.length > 0) await this.#quiesce(now);
      if (due.length === 0 && timed.length === 0 && !fired) break;
    }
    await this.#checkAt(now);
  }

  /** Frameworks take their events and react, in file order (the scripted ones, then the services), until none has any. */
  async #quiesce(now: number): Promise<void> {
    for (;;) {
      await this.#settle(now);
      const busy = this.#frameworks.filter((fw) => fw.hasPending);
      const waiting = this.#services.filter((s) => s.pace.waiting);
      if (busy.length === 0 && waiting.length === 0) return;
      for (const fw of busy) await fw.react(now);
      for (const service of waiting) await service.pace.runTurns();
    }
  }

  /** Waits until every event the master sent has reached its framework. */
  async #settle(now: number): Promise<void> {
    // A service reacts on promise continuations: let them all run before its state is read.
    if (this.#services.length > 0) await new Promise((resolve) => setImmediate(resolve));
    const synced = (): boolean =>
      this.#frameworks.every((fw) => {
        const sent = this.#record.eventsSent(fw.id);
        fw.collect(sent, now);
        // A stalled stream's events wait in the cluster: they arrive when the stall ends.
        return fw.synced(sent) || (fw.id !== undefined && this.#driver.cluster.streamStalled(fw.id));
      }) && this.#services.every((s) => s.synced(this.#watch));
    if (!synced()) await until('every framework to receive its events', synced);
  }

  /** Applies the timeline entries due, in file order; whether any was. */
  async #fireTimeline(now: number): Promise<boolean> {
    const due = this.scenario.timeline
      .map((entry, i) => [entry, i] as const)
      .filter(([entry, i]) => !this.#fired.has(i) && (entry.at !== undefined ? entry.at <= now : holds(entry.when as Condition, this.#evidence).ok));
    for (const [entry, i] of due) {
      this.#fired.add(i);
      await this.#apply(entry, `timeline[${i}] (line ${entry.line})`);
    }
    return due.length > 0;
  }

  async #apply(entry: TimelineEntry, where: string): Promise<void> {
    if (entry.fault !== undefined) return this.#inject(entry.fault, where);
    const request = entry.request!;
    const service = this.#services.find((s) => s.spec.name === request.service)!;
    const answer = await service.request(request);
    const text = `${request.method} ${request.path} to ${request.service}: ${answer.status} ${answer.body.trim().slice(0, 200)}`;
    (answer.status >= 200 && answer.status < 300 ? this.notes : this.problems).push(`${where}: ${text}`);
  }

  #inject(raw: Readonly<Record<string, unknown>>, where: string): void {
    const missing: string[] = [];
    const chosen = new Map<string, string>();
    const body = resolveFault(
      raw,
      (target) => this.#agentOf(target, chosen) ?? (missing.push(missingAgent(target)), ''),
      (name) => this.#idOf(name) ?? (missing.push(`framework ${name} (not subscribed yet)`), ''),
    );
    const report = (text: string): void => void (this.options.lenientFaults === true ? this.notes : this.problems).push(`${where}: ${text}`);
    if (missing.length > 0) return report(`${String(raw['type'])}: no ${missing.join(', ')}`);
    for (const [name, id] of chosen) this.#chosen.set(name, id);
    const fault = parseFault(body);
    if (typeof fault === 'string') return report(fault);
    const outcome = this.#driver.input((c) => c.inject(fault));
    if (!outcome.ok) report(outcome.error.message);
  }

  /** The id of the agent a fault names, now; a selector's choice `as` a name goes into `chosen`. */
  #agentOf(target: AgentTarget, chosen: Map<string, string>): string | undefined {
    if (typeof target === 'number') return this.cluster.agentIds[target];
    if (typeof target === 'string') return chosen.get(target) ?? this.#chosen.get(target);
    const id = selectAgent(target, this.#agentFacts());
    if (id !== undefined && target.as !== undefined) chosen.set(target.as, id);
    return id;
  }

  /** The agents as selectors see them, in the cluster's order: attributes, and the tasks the master books there. */
  #agentFacts(): AgentFacts[] {
    const names = new Map([...this.#frameworks, ...this.#services].map((f) => [f.id, f.spec.name] as const));
    return this.#driver.read((view) => {
      const tasks = new Map<string, AgentTask[]>();
      for (const fw of view.frameworks()) {
        for (const task of fw.tasks.values()) {
          const list = tasks.get(task.agentId) ?? [];
          list.push({ framework: names.get(fw.id), taskId: task.spec.taskId, state: task.state });
          tasks.set(task.agentId, list);
        }
      }
      return this.cluster.agentIds.map((id) => ({
        id,
        attributes: view.agentNode(id)?.config.attributes ?? [],
        tasks: tasks.get(id) ?? [],
      }));
    });
  }

  async #checkAt(now: number): Promise<void> {
    for (const [i, e] of this.scenario.expect.entries()) {
      if (this.#checked.has(i) || (e.at ?? Infinity) > now) continue;
      this.#checked.add(i);
      const answer = 'service' in e ? await this.#services.find((s) => s.spec.name === e.service.name)!.get(e.service.get) : undefined;
      this.results.push(check(e, this.#evidence, this.#now(), answer));
    }
  }

  /** The next instant anything falls due, after `now`. */
  #next(now: number, end: number): number {
    const candidates = [
      this.#driver.cluster.nextDueMs(),
      ...this.#frameworks.map((fw) => fw.nextWakeMs()),
      ...this.#services.map((s) => s.pace.nextDueMs()),
      ...this.scenario.timeline.filter((e, i) => !this.#fired.has(i) && e.at !== undefined).map((e) => e.at),
      ...this.scenario.expect.filter((e, i) => !this.#checked.has(i) && e.at !== undefined).map((e) => e.at),
    ];
    let next = end;
    for (const t of candidates) if (t !== undefined && t > now && t < next) next = t;
    return next;
  }

  #now(): number {
    return this.#driver.cluster.now();
  }

  #idOf(name: string): string | undefined {
    return this.#frameworks.find((fw) => fw.spec.name === name)?.id ?? this.#services.find((s) => s.spec.name === name)?.id;
  }

  async #setUp(): Promise<void> {
    for (const { role, limits } of this.scenario.cluster.quota) {
      const quantities = Object.fromEntries(Object.entries(limits).map(([name, value]) => [name, { value }]));
      const call = { type: 'UPDATE_QUOTA', update_quota: { force: true, quota_configs: [{ role, limits: quantities }] } };
      const answer = await postRaw(new URL('/api/v1', this.cluster.masterUrls[0]), JSON.stringify(call), { 'content-type': 'application/json' });
      if (answer.status !== 200) this.problems.push(`quota for ${role}: ${answer.status} ${answer.body}`);
    }
    for (const service of this.#services) {
      if (this.options.startService === undefined) throw new Error(`service ${service.spec.name}: this run cannot start bundled frameworks`);
      await service.start(this.options.startService, this.cluster.masterUrls);
      await this.#quiesce(this.#now());
    }
  }

  #evidenceOf(): Evidence {
    const base = observed(this.#driver, this.cluster.agentIds, this.#record, (name) => this.#idOf(name));
    const fw = (name: string): ScriptedFramework | undefined => this.#frameworks.find((f) => f.spec.name === name);
    return {
      ...base,
      sequence: (name) => this.#record.sequence(this.#idOf(name)),
      subscriptions: (name) => ({ lost: fw(name)?.lostAt ?? [], subscribed: fw(name)?.subscribedAt ?? [] }),
      metric: (name) => {
        const value = this.#driver.read((view) => renderMetrics(view))[name];
        return value instanceof Double ? value.value : typeof value === 'number' ? value : undefined;
      },
      misuses: (name, kind) => {
        const id = name === undefined ? undefined : this.#idOf(name);
        if (name !== undefined && id === undefined) return 0;
        const report = this.#driver.read((view) => view.misuse());
        return report.frameworks
          .filter((f) => id === undefined || f.frameworkId === id)
          .flatMap((f) => f.misuses)
          .filter((m) => kind === undefined || m.kind === kind)
          .reduce((n, m) => n + m.count, 0);
      },
      invariants: () => {
        try {
          this.#driver.cluster.checkAllInvariants();
          return undefined;
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      },
    };
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

/** The trace kinds the file's conditions count. */
function watchedKinds(scenario: Scenario): { kind: string; contains?: string }[] {
  const conditions = [...scenario.timeline.map((e) => e.when), ...scenario.expect] as ({ trace?: { kind: string; contains?: string } } | undefined)[];
  return conditions.flatMap((c) => (c?.trace === undefined ? [] : [{ kind: c.trace.kind, ...(c.trace.contains === undefined ? {} : { contains: c.trace.contains }) }]));
}

/** Polls a test until it holds, turn by turn of the event loop, for at most SYNC_TIMEOUT_MS. */
async function until(what: string, test: () => boolean): Promise<void> {
  const deadline = performance.now() + SYNC_TIMEOUT_MS;
  while (!test()) {
    if (performance.now() > deadline) throw new Error(`scenario runner: waited ${formatSpan(SYNC_TIMEOUT_MS)} of wall time for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
