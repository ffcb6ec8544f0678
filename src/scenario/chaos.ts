/**
 * Fault-schedule search: a scenario run again and again under random
 * schedules of faults (agents crashed and restarted, partitions healed
 * later, agents removed and added, framework connections dropped, streams
 * stalled, clock steps, and with several masters the leader failed over or
 * the first master down for a while), drawn by fast-check from a seed. When a run fails an expectation,
 * fast-check shrinks the schedule to a minimal one that still fails, and
 * the result is written out as a scenario file that replays it.
 *
 * The cluster's own seed stays the file's: the schedule is the only thing
 * that changes from run to run, so a written-out failure reproduces with
 * `clustersim run` alone.
 */
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { agentCount, type Scenario, type TimelineEntry } from './scenario.js';
import { formatSpan } from './duration.js';
import { RunError, type RunResult } from './runner.js';

/** One drawn fault: one timeline entry, or two (a crash and its restart, a partition and its heal). */
export type ChaosFault = readonly TimelineEntry[];

export interface ChaosOptions {
  readonly runs: number;
  /** The fast-check seed the schedules are drawn from. */
  readonly seed: number;
  /** Runs the scenario with faults added to its timeline. */
  readonly run: (scenario: Scenario) => Promise<RunResult>;
  /** fast-check's path of a run to start from (the schedule's index from 0): that one run, then shrinking. */
  readonly path?: string;
  /** Told after each run (shrinking runs too); a run that stopped (a RunError) has no result. */
  readonly onRun?: (n: number, schedule: readonly ChaosFault[], result: RunResult | undefined) => void;
  /** Wall-clock ms after which the search ends with what it has (the smallest failure so far): real-time runs take their duration each. */
  readonly timeLimitMs?: number;
}

export interface ChaosOutcome {
  readonly runs: number;
  /** The minimal failing schedule and its run, if a run failed. */
  readonly failure?: {
    readonly schedule: readonly TimelineEntry[];
    readonly result: RunResult;
    readonly counterexamplePath: string;
  };
  /** The minimal schedule under which the run could not go on, and why: worse than a failure, so it comes first. */
  readonly stopped?: { readonly schedule: readonly TimelineEntry[]; readonly reason: string };
}

export async function searchFaults(scenario: Scenario, options: ChaosOptions): Promise<ChaosOutcome> {
  let n = 0;
  let last: { schedule: readonly TimelineEntry[]; result: RunResult } | undefined;
  let stopped: { schedule: readonly TimelineEntry[]; reason: string } | undefined;
  const property = fc.asyncProperty(scheduleOf(scenario), async (schedule) => {
    const timeline = schedule.flat();
    let result: RunResult;
    try {
      result = await options.run({ ...scenario, timeline: [...scenario.timeline, ...timeline] });
    } catch (error) {
      if (!(error instanceof RunError)) throw error;
      options.onRun?.(++n, schedule, undefined);
      stopped = { schedule: timeline, reason: `at ${formatSpan(error.atMs)} of cluster time: ${error.reason}` };
      return false;
    }
    options.onRun?.(++n, schedule, result);
    if (!result.passed) last = { schedule: timeline, result };
    return result.passed;
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    endOnFailure: false,
    ...(options.path === undefined ? {} : { path: options.path }),
    ...(options.timeLimitMs === undefined ? {} : { interruptAfterTimeLimit: options.timeLimitMs }),
  });
  if (stopped !== undefined) return { runs: n, stopped };
  // A run that threw what is not a RunError (a ScenarioError of the cluster's start): fast-check took it for a failure.
  if (details.failed && last === undefined) throw details.errorInstance;
  if (!details.failed || last === undefined) return { runs: n };
  return { runs: n, failure: { ...last, counterexamplePath: details.counterexamplePath ?? '' } };
}

/**
 * The first `runs` schedules drawn from a seed, the same a search with that
 * seed runs in its order: schedule k is the same whatever the count, so a
 * slice of the list can run anywhere and still be the same schedules.
 */
export function drawSchedules(scenario: Scenario, seed: number, runs: number): ChaosFault[][] {
  return fc.sample(scheduleOf(scenario), { numRuns: runs, seed });
}

/** One of N disjoint slices of a search's schedules, numbered from 1: schedule k (from 0) goes to slice k mod N + 1. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** The indices (from 0) of the schedules a shard runs, of `runs` in all. */
export function shardIndices(runs: number, shard: Shard): number[] {
  const indices: number[] = [];
  for (let k = shard.index - 1; k < runs; k += shard.count) indices.push(k);
  return indices;
}

type Entry = (atMs: number, fault: Record<string, unknown>) => TimelineEntry;

/** Schedules of one to six faults within the first 80% of the run, in whole seconds. */
function scheduleOf(scenario: Scenario): fc.Arbitrary<ChaosFault[]> {
  const latest = Math.max(1, Math.floor((scenario.durationMs * 0.8) / 1000));
  const at = fc.integer({ min: 0, max: latest }).map((s) => s * 1000);
  const span = fc.integer({ min: 1, max: 180 }).map((s) => s * 1000);
  const entry: Entry = (atMs, fault) => ({ at: atMs, fault, line: 0 });
  const faults: fc.Arbitrary<ChaosFault>[] = [
    fc.record({ at, ms: span }).map(({ at, ms }) => [entry(at, { type: 'clock_jump', ms })]),
    ...agentFaults(scenario, at, span, entry),
  ];
  if (scenario.cluster.masters > 1) {
    faults.push(
      at.map((at) => [entry(at, { type: 'master_failover' })]),
      fc
        .record({ at, down: span })
        .map(({ at, down }) => [
          entry(at, { type: 'crash_master', master: 0 }),
          entry(at + down, { type: 'restart_master', master: 0 }),
        ]),
    );
  }
  // A user's own framework (external) is a target as a scripted one is.
  const names = [...scenario.frameworks, ...scenario.externals].map((f) => f.name);
  if (names.length > 0) {
    const framework = fc.constantFrom(...names);
    faults.push(
      fc
        .record({ at, framework })
        .map(({ at, framework }) => [entry(at, { type: 'drop_framework_connection', framework })]),
      fc
        .record({ at, framework, ms: span })
        .map(({ at, framework, ms }) => [entry(at, { type: 'stall_heartbeats', framework, duration_ms: ms })]),
    );
  }
  return fc.array(fc.oneof(...faults), { minLength: 1, maxLength: 6 });
}

/**
 * The faults of the file's agents, by index (one of them crashed and
 * restarted, cut off and healed, removed for good), and one more agent
 * added, like those of a group of the file: its resources and attributes.
 * A group that leaves its resources to the cluster's default gives no
 * added agent: the caller fills them in (`withAgentResources`).
 */
function agentFaults(
  scenario: Scenario,
  at: fc.Arbitrary<number>,
  span: fc.Arbitrary<number>,
  entry: Entry,
): fc.Arbitrary<ChaosFault>[] {
  const faults: fc.Arbitrary<ChaosFault>[] = [];
  const agents = agentCount(scenario);
  if (agents > 0) {
    const agent = fc.integer({ min: 0, max: agents - 1 });
    faults.push(
      fc
        .record({ at, agent, down: span, recover: fc.constantFrom('reconnect', 'cleanup') })
        .map(({ at, agent, down, recover }) => [
          entry(at, { type: 'crash_agent', agent }),
          entry(at + down, { type: 'restart_agent', agent, recover }),
        ]),
      fc
        .record({ at, agent, cut: span })
        .map(({ at, agent, cut }) => [
          entry(at, { type: 'partition', agent }),
          entry(at + cut, { type: 'heal', agent }),
        ]),
      fc.record({ at, agent }).map(({ at, agent }) => [entry(at, { type: 'remove_agent', agent })]),
    );
  }
  const machines = scenario.cluster.agents.flatMap(({ resources, attributes }) =>
    resources === undefined ? [] : [{ resources, ...(attributes === undefined ? {} : { attributes }) }],
  );
  if (machines.length > 0) {
    faults.push(
      fc
        .record({ at, machine: fc.constantFrom(...machines) })
        .map(({ at, machine }) => [entry(at, { type: 'add_agent', ...machine })]),
    );
  }
  return faults;
}

/** The scenario with each agent group's resources given, `resources` where the file leaves them to the cluster's default. */
export function withAgentResources(scenario: Scenario, resources: string): Scenario {
  const agents = scenario.cluster.agents.map((group) => ({ resources, ...group }));
  return { ...scenario, cluster: { ...scenario.cluster, agents } };
}

/**
 * The scenario file with a schedule added to its timeline, as YAML: the
 * minimal failing run, to be run with `clustersim run`. Written to
 * `outDir`, its external frameworks' commands still run where the file's
 * did: their `cwd` is written relative to the new file.
 */
export function scenarioWithSchedule(
  scenario: Scenario,
  schedule: readonly TimelineEntry[],
  seed: number,
  outDir = path.dirname(scenario.file),
): string {
  const raw = parse(readFileSync(scenario.file, 'utf8')) as Record<string, unknown>;
  const frameworks = raw['frameworks'];
  if (Array.isArray(frameworks)) raw['frameworks'] = frameworks.map((entry) => movedExternal(scenario, entry, outDir));
  const timeline = [
    ...((raw['timeline'] as unknown[]) ?? []),
    ...schedule.map((e) => ({ at: formatSpan(e.at!), fault: e.fault })),
  ];
  const description = `Found by clustersim chaos ${scenario.file} --seed ${seed}: the smallest schedule of faults found that makes an expectation fail.`;
  return `${stringify({ ...raw, name: `${scenario.name}-chaos-${seed}`, description, timeline })}`;
}

/** A framework entry of the file as a file in `outDir` must write it: an external one with its `cwd` from there. */
function movedExternal(scenario: Scenario, entry: unknown, outDir: string): unknown {
  if (typeof entry !== 'object' || entry === null || !('command' in entry)) return entry;
  const name = (entry as { name?: unknown }).name;
  const cwd = scenario.externals.find((e) => e.name === name)?.cwd;
  if (cwd === undefined) return entry;
  return { ...entry, cwd: path.relative(path.resolve(outDir), cwd) || '.' };
}

/** A schedule in one line per fault, for the progress output. */
export function describeSchedule(schedule: readonly ChaosFault[]): string {
  return schedule
    .flat()
    .map((e) => {
      const { type, ...rest } = e.fault ?? {};
      const details = Object.entries(rest).map(([k, v]) => `${k} ${String(v)}`);
      return `${formatSpan(e.at!)} ${String(type)}${details.length === 0 ? '' : ` (${details.join(', ')})`}`;
    })
    .join(', ');
}
