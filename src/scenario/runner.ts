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
import type { Transport } from '../client/transport.js';
import type { MisuseReport } from '../core/master/misuse-report.js';
import type { TraceEntry } from '../core/kernel/trace.js';
import { parseFault } from '../wire/sim/faults.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { check, type Evidence, type ExpectationResult } from './expect.js';
import { ExternalFramework, externalIdOf, startExternals, type ProcessOutcome } from './external.js';
import { holds } from './conditions.js';
import { formatSpan } from './duration.js';
import { ScriptedFramework, type FrameworkHost } from './framework.js';
import { ScenarioError } from './load.js';
import { RunRecord } from './observe.js';
import { evidenceOf } from './run-evidence.js';
import { expectedSequences, until, watchedKinds } from './run-helpers.js';
import { RealtimeLoop } from './realtime.js';
import { replayCommandOf } from './replay-command.js';
import { RunTrace, type TraceCheckpoint } from './run-trace.js';
import type { ClusterSpec, Condition, Scenario, TimelineEntry } from './scenario.js';
import { ServiceRun, type StartService, type StreamWatch } from './services.js';
import { FaultTargets } from './fault-targets.js';

export type { StartService, ConductedService, ServiceContext } from './services.js';

/** What the runner asks of the cluster it is given: the file's cluster (its quota is set later, over HTTP), the seed, the time. */
export type ClusterRequest = Omit<ClusterSpec, 'quota'> & {
  readonly seed: string | number;
  /** Default virtual. */
  readonly time?: Scenario['time'];
};

export interface ScenarioCluster {
  readonly masterUrls: readonly string[];
  /** How the scripted frameworks reach the masters; HTTP when not given. */
  readonly transport?: Transport;
  readonly agentIds: readonly string[];
  readonly driver: ClusterDriver;
  close(): Promise<void>;
}

/**
 * Starts the cluster a file asks for. A ScenarioError it throws names the
 * field of the file at fault (`cluster.agents[0].resources: ...`), without
 * the file: the runner puts it in front.
 */
export type StartScenarioCluster = (request: ClusterRequest) => Promise<ScenarioCluster>;

export interface RunOptions {
  readonly start: StartScenarioCluster;
  /** Starts the file's bundled frameworks (`services`) on the cluster. */
  readonly startService?: StartService;
  /** Overrides the file's seed. */
  readonly seed?: string | number;
  /** Called as cluster time moves (at most every few hundred steps). */
  readonly onProgress?: (nowMs: number, durationMs: number) => void;
  /**
   * Keep the trace's window in the result: the latest entries the cluster
   * kept (all of them for a run shorter than its window, TRACE_WINDOW).
   */
  readonly keepTrace?: boolean;
  /** Given every trace entry of the run, in order, as it is written (`--trace` streams them to a file). */
  readonly traceSink?: (entry: TraceEntry) => void;
  /** Told where an attached framework (`attach: true`) should subscribe, as the runner starts waiting for it. */
  readonly onAttach?: (name: string, match: string, masterUrl: string) => void;
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
  /** The rolling hash every so many entries, to find where two runs part (run-trace.ts). */
  readonly checkpoints: readonly TraceCheckpoint[];
  readonly endMs: number;
  readonly wallMs: number;
  /** The external frameworks' processes: how each ended, and the tail of its output. */
  readonly processes: readonly ProcessOutcome[];
  /** With `keepTrace`: the trace's window, the latest entries (from seq 1 when the run was shorter than the window). */
  readonly trace?: readonly TraceEntry[];
}

/**
 * A run that could not go on (a cluster that stopped, a framework that
 * never heard back, a bug): one line with the cluster time, the seed and
 * the command that runs it again.
 */
export class RunError extends Error {
  override readonly name = 'RunError';

  constructor(
    readonly file: string,
    readonly seed: string,
    readonly atMs: number,
    readonly reason: string,
    realtime = false,
  ) {
    super(
      realtime
        ? `${file}: the run stopped at ${formatSpan(atMs)} of cluster time: ${reason} (seed ${seed}, in real time: the seed does not replay it)`
        : `${file}: the run stopped at ${formatSpan(atMs)} of cluster time (seed ${seed}): ${reason}; replay: ${replayCommandOf(file, seed)}`,
    );
  }
}

/** Engine errors (a TypeError, a RangeError...) are bugs of this program: their text means nothing to the file's author. */
const ENGINE_ERRORS = [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];

/** What stopped a run, as the file's error or as one line with the seed. */
function runFailure(scenario: Scenario, seed: string, atMs: number, error: unknown): Error {
  if (error instanceof ScenarioError) return new ScenarioError(`${scenario.file}: ${error.message}`);
  const engine = ENGINE_ERRORS.some((type) => error instanceof type);
  const text = error instanceof Error ? error.message : String(error);
  const reason = engine
    ? 'an internal error of clustersim (a bug; the replay command shows it again)'
    : text.split('\n')[0]!;
  return new RunError(scenario.file, seed, atMs, reason, scenario.time === 'realtime');
}

/** Runs a scenario; a run that cannot go on throws a RunError (or a ScenarioError naming the field at fault). */
export async function runScenario(scenario: Scenario, options: RunOptions): Promise<RunResult> {
  const seed = options.seed ?? scenario.seed;
  let cluster: ScenarioCluster | undefined;
  try {
    const { quota: _quota, ...clusterSpec } = scenario.cluster;
    cluster = await options.start({ ...clusterSpec, seed, time: scenario.time });
    return await runOn(scenario, cluster, options, performance.now());
  } catch (error) {
    throw runFailure(scenario, String(seed), cluster?.driver.cluster.now() ?? 0, error);
  }
}

async function runOn(
  scenario: Scenario,
  cluster: ScenarioCluster,
  options: RunOptions,
  started: number,
): Promise<RunResult> {
  const seed = options.seed ?? scenario.seed;
  const trace = cluster.driver.cluster.trace;
  const runTrace = new RunTrace(trace, options.traceSink);
  const run = new Run(scenario, cluster, options);
  let kept: { hash: string; length: number; entries: readonly TraceEntry[]; misuse: MisuseReport };
  try {
    await run.execute();
  } finally {
    // The run ends here: what closing the frameworks' streams adds is not part of it.
    runTrace.close();
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
    checkpoints: runTrace.checkpoints,
    endMs: cluster.driver.cluster.now(),
    wallMs: performance.now() - started,
    processes: run.processes(),
    ...(options.keepTrace === true ? { trace: kept.entries } : {}),
  };
}

class Run {
  readonly results: ExpectationResult[] = [];
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  readonly #frameworks: ScriptedFramework[];
  readonly #externals: ExternalFramework[];
  /** Subscriptions and losses from the trace, for the externals: a drop and a quick resubscription can fall between two looks at the books. */
  readonly #subscriptionEntries: {
    readonly subscribed: boolean;
    readonly frameworkId: unknown;
    readonly timeMs: number;
  }[] = [];
  readonly #subscriptionWatch = (entry: TraceEntry, data: Readonly<Record<string, unknown>>): void => {
    if (entry.kind !== 'framework:subscribed' && entry.kind !== 'framework:disconnected') return;
    if (this.#externals.length === 0) return;
    this.#subscriptionEntries.push({
      subscribed: entry.kind === 'framework:subscribed',
      frameworkId: data['frameworkId'],
      timeMs: entry.timeMs,
    });
  };
  readonly #services: ServiceRun[];
  readonly #watch: StreamWatch;
  readonly #record: RunRecord;
  readonly #evidence: Evidence;
  readonly #driver: ClusterDriver;
  readonly #fired = new Set<number>();
  readonly #checked = new Set<number>();
  readonly #targets: FaultTargets;

  constructor(
    private readonly scenario: Scenario,
    private readonly cluster: ScenarioCluster,
    private readonly options: RunOptions,
  ) {
    this.#driver = cluster.driver;
    this.#record = new RunRecord(this.#driver.cluster.trace, watchedKinds(scenario), expectedSequences(scenario));
    this.#driver.cluster.trace.onEntry(this.#subscriptionWatch);
    const host: FrameworkHost = {
      masterUrls: cluster.masterUrls,
      ...(cluster.transport === undefined ? {} : { transport: cluster.transport }),
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
    this.#services = scenario.services.map((spec) => new ServiceRun(spec, () => this.#now()));
    this.#externals = scenario.externals.map(
      (spec) => new ExternalFramework(spec, `framework '${spec.name}' (line ${spec.line})`, () => this.#now()),
    );
    this.#watch = {
      eventsSent: (id) => this.#record.eventsSent(id),
      subscribedOn: host.subscribedOn,
      stalled: (id) => this.#driver.cluster.streamStalled(id),
    };
    this.#evidence = evidenceOf({
      driver: this.#driver,
      record: this.#record,
      idOf: (name) => this.#idOf(name),
      subscriptions: (name) => [...this.#frameworks, ...this.#externals].find((f) => f.spec.name === name),
      process: (name) => this.#externals.find((f) => f.spec.name === name)?.state,
    });
    this.#targets = new FaultTargets({
      driver: this.#driver,
      agentIds: () => cluster.agentIds,
      frameworkId: (name) => this.#idOf(name),
      names: () => this.#frameworkNames(),
    });
  }

  /** Framework names by id, scripted, bundled and external, as fault targets name them. */
  #frameworkNames(): ReadonlyMap<string | undefined, string> {
    const all = [...this.#frameworks, ...this.#services].map((f) => [f.id, f.spec.name] as const);
    const external = this.#externals.map((f) => [this.#externalId(f.spec.match), f.spec.name] as const);
    return new Map([...all, ...external]);
  }

  processes(): ProcessOutcome[] {
    return this.#externals.flatMap((f) => (f.outcome === undefined ? [] : [f.outcome]));
  }

  async execute(): Promise<void> {
    await this.#setUp();
    const end = this.scenario.durationMs;
    let steps = 0;
    const loop = this.#driver.mode === 'realtime' ? new RealtimeLoop(this.#driver.cluster.trace) : undefined;
    try {
      for (;;) {
        const now = this.#now();
        await this.#instant(now);
        if (++steps % 200 === 0) this.options.onProgress?.(now, end);
        if (now >= end) break;
        const next = this.#next(now, end);
        if (loop === undefined) this.#driver.input((c) => c.advanceTo(next));
        else await loop.waitUntil(next - now);
      }
    } finally {
      loop?.close();
    }
    this.options.onProgress?.(this.#now(), end);
    // What the cluster holds is checked while the processes still run; how they end, once they are stopped.
    await this.#checkAt(Infinity, (e) => !('process' in e));
    await this.#stopExternals();
    await this.#checkAt(Infinity);
    for (const fw of this.#externals) {
      const early = fw.endedEarly;
      if (early !== undefined) this.notes.push(`${fw.spec.name}: ${early}`);
    }
    for (const fw of this.#frameworks) {
      for (const note of fw.notes.kept) this.notes.push(`${fw.spec.name}: ${note}`);
      if (fw.notes.dropped > 0) this.notes.push(`${fw.spec.name}: ${fw.notes.dropped} more notes, not kept`);
      if (fw.stopped !== undefined) this.problems.push(`${fw.spec.name} stopped: ${fw.stopped}`);
    }
  }

  async #stopExternals(): Promise<void> {
    await Promise.all(this.#externals.map((fw) => fw.stop()));
  }

  async close(): Promise<void> {
    await this.#stopExternals();
    for (const fw of this.#frameworks) fw.close();
    this.#record.close();
    this.#driver.cluster.trace.offEntry(this.#subscriptionWatch);
    for (const service of this.#services)
      await service.close().catch((e: Error) => this.problems.push(`closing ${service.spec.name}: ${e.message}`));
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
    for (const fw of this.#externals) {
      const id = this.#externalId(fw.spec.match);
      for (const seen of this.#subscriptionEntries)
        if (seen.frameworkId === id) fw.observe(seen.subscribed, seen.timeMs);
      fw.observe(
        this.#driver.read((v) => id !== undefined && v.framework(id)?.state === 'subscribed'),
        now,
      );
    }
    this.#subscriptionEntries.length = 0;
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
      .filter(
        ([entry, i]) =>
          !this.#fired.has(i) &&
          (entry.at !== undefined ? entry.at <= now : holds(entry.when as Condition, this.#evidence).ok),
      );
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
    const report = (text: string): void =>
      void (this.options.lenientFaults === true ? this.notes : this.problems).push(`${where}: ${text}`);
    const resolved = this.#targets.resolve(raw);
    if (!resolved.ok) return report(`${String(raw['type'])}: no ${resolved.missing.join(', ')}`);
    this.#targets.keep(resolved.chosen);
    const fault = parseFault(resolved.body);
    if (typeof fault === 'string') return report(fault);
    const outcome = this.#driver.input((c) => c.inject(fault));
    if (!outcome.ok) return report(outcome.error.message);
    if (fault.type === 'add_agent' && outcome.value.agentId !== undefined) this.#targets.added(outcome.value.agentId);
  }

  async #checkAt(now: number, only: (e: Scenario['expect'][number]) => boolean = () => true): Promise<void> {
    for (const [i, e] of this.scenario.expect.entries()) {
      if (this.#checked.has(i) || (e.at ?? Infinity) > now || !only(e)) continue;
      this.#checked.add(i);
      const answer =
        'service' in e
          ? await this.#services.find((s) => s.spec.name === e.service.name)!.get(e.service.get)
          : undefined;
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

  /** Cluster time; in real time, caught up with the wall clock first. */
  #now(): number {
    if (this.#driver.mode === 'realtime') this.#driver.input(() => undefined);
    return this.#driver.cluster.now();
  }

  #idOf(name: string): string | undefined {
    const external = this.#externals.find((fw) => fw.spec.name === name);
    if (external !== undefined) return this.#externalId(external.spec.match);
    return (
      this.#frameworks.find((fw) => fw.spec.name === name)?.id ?? this.#services.find((s) => s.spec.name === name)?.id
    );
  }

  /** The framework an external entry matches (external.ts). */
  #externalId(match: string): string | undefined {
    return this.#driver.read((view) => externalIdOf(view, match));
  }

  /** That framework's id while the master holds it subscribed. */
  #subscribedId(match: string): string | undefined {
    return this.#driver.read((view) => {
      const id = externalIdOf(view, match);
      return id !== undefined && view.framework(id)?.state === 'subscribed' ? id : undefined;
    });
  }

  async #setUp(): Promise<void> {
    for (const { role, limits } of this.scenario.cluster.quota) {
      const quantities = Object.fromEntries(Object.entries(limits).map(([name, value]) => [name, { value }]));
      const call = {
        type: 'UPDATE_QUOTA',
        update_quota: { force: true, quota_configs: [{ role, limits: quantities }] },
      };
      const answer = await postRaw(new URL('/api/v1', this.cluster.masterUrls[0]), JSON.stringify(call), {
        'content-type': 'application/json',
      });
      if (answer.status !== 200) this.problems.push(`quota for ${role}: ${answer.status} ${answer.body}`);
    }
    for (const service of this.#services) {
      if (this.options.startService === undefined)
        throw new Error(`service ${service.spec.name}: this run cannot start bundled frameworks`);
      await service.start(this.options.startService, this.cluster.masterUrls);
      await this.#quiesce(this.#now());
    }
    const leader = this.#driver.read((view) => this.cluster.masterUrls[view.leaderIndex() ?? 0]);
    await startExternals(this.#externals, leader ?? this.cluster.masterUrls[0]!, {
      subscribedId: (match) => this.#subscribedId(match),
      ...(this.options.onAttach === undefined ? {} : { onAttach: this.options.onAttach }),
    });
  }
}
