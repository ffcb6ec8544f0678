/**
 * A day of cluster time, as fast as the core runs it: 10,000 agents, five
 * frameworks that keep tasks of `sleep N` running until 100,000 have been
 * launched (N drawn so that they all end within the day), acknowledge every
 * update and reconcile every hour, and a fault every virtual minute from a
 * seeded schedule (day-faults.ts). The core is driven through its port
 * (`Cluster`) in virtual time, no HTTP: this measures the simulator's own
 * speed. Frameworks answer at the instant an event leaves the core; the
 * clock then moves to the next timer, fault or reconciliation.
 */
import { Cluster } from '../../src/core/cluster.js';
import type { Fault } from '../../src/core/faults/vocabulary.js';
import { Rng } from '../../src/core/kernel/rng.js';
import type { Capability, SchedulerCall, SchedulerEvent } from '../../src/core/model/types.js';
import { AGENT_RESOURCES, FRAMEWORK_INFO, MASTER, parsed } from './core-harness.js';
import { DayFramework } from './day-framework.js';
import { FaultPlan, type FaultKind } from './day-faults.js';
import { num, progress } from './stats.js';

const HOUR_MS = 3_600_000;
const RECONCILE_EVERY_MS = HOUR_MS;

export interface VirtualDayOptions {
  readonly agents: number;
  readonly frameworks: number;
  /** Tasks launched in all (split evenly between the frameworks). */
  readonly tasks: number;
  /** Tasks each framework keeps alive at most. */
  readonly keep: number;
  /** Task durations, seconds, drawn uniformly in [min, max]. */
  readonly durationSeconds: readonly [number, number];
  readonly hours: number;
  readonly seed: number;
  readonly checkInvariants: boolean;
  /** Progress lines on stderr every virtual hour. */
  readonly quiet?: boolean;
}

export const VIRTUAL_DAY: VirtualDayOptions = {
  agents: 10_000,
  frameworks: 5,
  tasks: 100_000,
  keep: 500,
  durationSeconds: [600, 3000],
  hours: 24,
  seed: 1,
  checkInvariants: true,
};

export interface VirtualDayResult {
  readonly options: VirtualDayOptions;
  readonly setupSeconds: number;
  readonly wallSeconds: number;
  /** CPU time of the process over the same span (user and system). */
  readonly cpuSeconds: number;
  readonly virtualSeconds: number;
  readonly launched: number;
  /** Tasks that reached a terminal state (and whose update was acknowledged). */
  readonly lifecycles: number;
  readonly endedByState: ReadonlyMap<string, number>;
  readonly acknowledged: number;
  readonly offers: number;
  readonly faultSteps: number;
  readonly faultsStarted: ReadonlyMap<FaultKind, number>;
  readonly inputs: number;
  readonly traceEntries: number;
  readonly traceHash: string;
  readonly rssBytes: number;
  readonly heapBytes: number;
}

/** The frameworks of the day: every other one checkpoints, every third is partition-aware. */
function frameworks(options: VirtualDayOptions, rng: Rng): DayFramework[] {
  const taskResources = parsed('cpus:1;mem:128');
  return Array.from({ length: options.frameworks }, (_, i) => {
    const name = `day${i}`;
    const capabilities: Capability[] = i % 3 === 0 ? ['PARTITION_AWARE'] : [];
    const info = {
      ...FRAMEWORK_INFO,
      name,
      checkpoint: i % 2 === 0,
      failoverTimeoutMs: 7 * 24 * HOUR_MS,
      capabilities,
    };
    const budget = Math.floor(options.tasks / options.frameworks) + (i < options.tasks % options.frameworks ? 1 : 0);
    return new DayFramework({
      name,
      info,
      keep: options.keep,
      budget,
      taskResources,
      durationSeconds: options.durationSeconds,
      rng: rng.fork(name),
    });
  });
}

/** The cluster, its frameworks by connection, and the events waiting for them. */
class Day {
  readonly cluster: Cluster;
  readonly frameworks: DayFramework[];
  readonly agentIds: string[] = [];
  inputs = 0;
  readonly #byConnection = new Map<string, DayFramework>();
  readonly #ids = new Map<DayFramework, { frameworkId: string; streamId: string }>();
  #queue: [DayFramework, SchedulerEvent][] = [];

  constructor(readonly options: VirtualDayOptions) {
    const rng = new Rng(options.seed, 'virtual-day');
    this.cluster = new Cluster({ seed: options.seed, checkInvariants: options.checkInvariants, master: MASTER });
    const resources = parsed(AGENT_RESOURCES);
    for (let i = 0; i < options.agents; i++) {
      const spec = { hostname: `agent${i + 1}`, ip: '127.0.0.1', port: 5051 + i, resources, attributes: [] };
      this.agentIds.push(this.input((c) => c.addAgent(spec)).id);
    }
    this.frameworks = frameworks(options, rng);
    this.frameworks.forEach((fw, i) => {
      const connection = `day-${i}`;
      this.#byConnection.set(connection, fw);
      this.#ids.set(
        fw,
        this.input((c) => c.subscribe(connection, { info: fw.options.info, suppressedRoles: [] })),
      );
    });
  }

  /** Applies an input, then hands its events to their frameworks' queues. */
  input<T>(apply: (cluster: Cluster) => T): T {
    this.inputs++;
    try {
      return apply(this.cluster);
    } finally {
      this.#deliver();
    }
  }

  /** Hands the outbox's events to their frameworks' queues; a closed stream is the bench's failure. */
  #deliver(): void {
    for (const record of this.cluster.drainOutbox()) {
      const fw = this.#byConnection.get(record.connectionId);
      if (fw === undefined) continue;
      if (record.kind === 'close') throw new Error(`${fw.options.name}: stream closed: ${record.reason}`);
      if (record.kind === 'event') this.#queue.push([fw, record.event]);
    }
  }

  readonly inject = (fault: Fault) => this.input((c) => c.inject(fault));

  /** Frameworks react to every event waiting, and to the events their calls cause. */
  react(): void {
    while (this.#queue.length > 0) {
      const queue = this.#queue;
      this.#queue = [];
      for (const [fw, event] of queue) fw.react(event, (call) => this.#call(fw, call));
    }
  }

  reconcile(): void {
    for (const fw of this.frameworks) fw.reconcile((call) => this.#call(fw, call));
  }

  #call(fw: DayFramework, call: SchedulerCall): void {
    const { frameworkId, streamId } = this.#ids.get(fw)!;
    const outcome = this.input((c) => c.call(frameworkId, streamId, call));
    // An offer rescinded or an agent gone meanwhile is an ordinary refusal; anything else is not.
    if (!outcome.ok && call.type !== 'ACCEPT' && call.type !== 'DECLINE') {
      throw new Error(`${fw.options.name}: ${call.type} refused: ${outcome.error.message}`);
    }
  }
}

function sum<K>(maps: readonly ReadonlyMap<K, number>[]): Map<K, number> {
  const out = new Map<K, number>();
  for (const m of maps) for (const [k, v] of m) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

/** Runs the day; the figures of the part that follows the set-up. */
export function runVirtualDay(options: VirtualDayOptions = VIRTUAL_DAY): VirtualDayResult {
  const setupStart = performance.now();
  const day = new Day(options);
  const { cluster } = day;
  const plan = new FaultPlan(day.agentIds, new Rng(options.seed, 'virtual-day-faults'));
  const setupSeconds = (performance.now() - setupStart) / 1000;
  const startMs = performance.now();
  const startCpu = process.cpuUsage();
  const startVirtualMs = cluster.now();
  const endMs = startVirtualMs + options.hours * HOUR_MS;
  let nextReconcileMs = startVirtualMs + RECONCILE_EVERY_MS;
  let nextHourMs = startVirtualMs + HOUR_MS;
  for (;;) {
    day.react();
    const now = cluster.now();
    if (now >= endMs) break;
    if (plan.nextMs() <= now) plan.apply(day.inject, now);
    if (nextReconcileMs <= now) {
      nextReconcileMs += RECONCILE_EVERY_MS;
      day.reconcile();
    }
    if (nextHourMs <= now) {
      nextHourMs += HOUR_MS;
      if (options.quiet !== true) hourLine(day, plan, (now - startVirtualMs) / HOUR_MS, startMs, startCpu);
    }
    const next = Math.min(
      cluster.nextDueMs() ?? Number.POSITIVE_INFINITY,
      plan.nextMs(),
      nextReconcileMs,
      nextHourMs,
      endMs,
    );
    if (next > now) day.input((c) => c.advanceTo(next));
  }
  const wallSeconds = (performance.now() - startMs) / 1000;
  const cpu = process.cpuUsage(startCpu);
  if (options.checkInvariants) cluster.checkAllInvariants();
  const memory = process.memoryUsage();
  return {
    options,
    setupSeconds,
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    virtualSeconds: (cluster.now() - startVirtualMs) / 1000,
    launched: day.frameworks.reduce((n, fw) => n + fw.counts.launched, 0),
    lifecycles: day.frameworks.reduce((n, fw) => n + fw.ended, 0),
    endedByState: sum(day.frameworks.map((fw) => fw.counts.ended)),
    acknowledged: day.frameworks.reduce((n, fw) => n + fw.counts.acknowledged, 0),
    offers: day.frameworks.reduce((n, fw) => n + fw.counts.offers, 0),
    faultSteps: plan.total,
    faultsStarted: plan.started,
    inputs: day.inputs,
    traceEntries: cluster.trace.length,
    traceHash: cluster.trace.hash(),
    rssBytes: memory.rss,
    heapBytes: memory.heapUsed,
  };
}

function hourLine(day: Day, plan: FaultPlan, hours: number, startMs: number, startCpu: NodeJS.CpuUsage): void {
  const ended = day.frameworks.reduce((n, fw) => n + fw.ended, 0);
  const live = day.frameworks.reduce((n, fw) => n + fw.live, 0);
  const wall = (performance.now() - startMs) / 1000;
  const cpu = process.cpuUsage(startCpu);
  progress(
    `virtual day: ${num(hours)} h of ${num(day.options.hours)} after ${num(wall, 1)} s wall, ${num((cpu.user + cpu.system) / 1e6, 1)} s CPU; tasks ended ${num(ended)}, live ${num(live)}; fault steps ${num(plan.total)}`,
  );
}

function countsLine<K extends string>(counts: ReadonlyMap<K, number>): string {
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k} ${num(v)}`)
    .join(', ');
}

/** The figures of a run, as printed by `npm run bench`. */
export function virtualDayLines(r: VirtualDayResult): string[] {
  const o = r.options;
  const realtime = r.virtualSeconds / r.wallSeconds;
  const started = [...r.faultsStarted.values()].reduce((a, b) => a + b, 0);
  return [
    `${num(o.agents)} agents of ${AGENT_RESOURCES}, ${o.frameworks} frameworks keeping up to ${num(o.keep)} tasks of 'sleep ${o.durationSeconds[0]}..${o.durationSeconds[1]}' each`,
    `until ${num(o.tasks)} are launched, every update acknowledged, hourly reconciliation; a fault every virtual minute (seed ${o.seed});`,
    `invariants ${o.checkInvariants ? 'on (what each input touched; the full check once at the end)' : 'off'}; set-up (agents added, frameworks subscribed) ${num(r.setupSeconds, 1)} s, not counted`,
    `virtual time:        ${num(r.virtualSeconds / 3600, 1)} h in ${num(r.wallSeconds, 1)} s wall (${num(r.cpuSeconds, 1)} s CPU), ${num(realtime)} times real time (target: 24 h in 60 s, 1,440x)`,
    `task lifecycles:     ${num(r.lifecycles)} ended of ${num(r.launched)} launched (${countsLine(r.endedByState)}); ${num(r.acknowledged)} updates acknowledged, ${num(r.offers)} offers`,
    `faults:              ${num(started)} started (${countsLine(r.faultsStarted)}), ${num(r.faultSteps)} fault inputs with the ends of those that ended`,
    `core:                ${num(r.inputs)} inputs, ${num(r.traceEntries)} events traced, trace hash ${r.traceHash}`,
    `memory at the end:   RSS ${num(r.rssBytes / 2 ** 20)} MiB, heap used ${num(r.heapBytes / 2 ** 20)} MiB`,
  ];
}
