/**
 * What a fault-schedule search tells its reader, as data: one record per
 * run (the schedule, its verdict and the command that runs it again) and
 * one per shard (its counts and the shrunk schedule it wrote out), written
 * as JSON lines so that shards run on several machines can be joined
 * (chaos-merge.ts), and as JUnit XML for CI.
 *
 * A run's record holds nothing of the machine or the wall clock: the same
 * schedule gives the same line wherever it runs.
 */
import { formatSpan } from './duration.js';
import { chaosReplayCommandOf } from './replay-command.js';
import { RunError, type RunResult } from './runner.js';
import type { Scenario } from './scenario.js';
import { describeSchedule, type ChaosFault, type Shard } from './chaos.js';

export type Verdict = 'pass' | 'fail' | 'stopped';

/** A run's verdict and why: the failed expectations and problems, or where the run stopped. */
export interface ScheduleOutcome {
  readonly verdict: Verdict;
  readonly failed?: readonly string[];
  readonly reason?: string;
}

export interface RunRecord extends ScheduleOutcome {
  readonly kind: 'run';
  readonly file: string;
  readonly seed: number;
  /** The schedule's number, from 1: the (k+1)-th drawn from the seed. */
  readonly schedule: number;
  readonly faults: readonly { readonly at: string; readonly fault: Record<string, unknown> }[];
  readonly replay: string;
}

export interface ShardRecord {
  readonly kind: 'shard';
  readonly file: string;
  readonly seed: number;
  readonly runs: number;
  /** `I/N`. */
  readonly shard: string;
  readonly passed: number;
  readonly failed: number;
  readonly stopped: number;
  /** The first failing schedule of the shard, shrunk and written out as a scenario, and its HTML report when it has one. */
  readonly shrunk?: {
    readonly schedule: number;
    readonly out: string;
    readonly replay: string;
    readonly report?: string;
  };
}

/** Runs one schedule (`run` is given the scenario with the faults added) and words its verdict. */
export async function runSchedule(
  scenario: Scenario,
  schedule: readonly ChaosFault[],
  run: (scenario: Scenario) => Promise<RunResult>,
): Promise<ScheduleOutcome> {
  try {
    return outcomeOf(await run({ ...scenario, timeline: [...scenario.timeline, ...schedule.flat()] }));
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    return { verdict: 'stopped', reason: `at ${formatSpan(error.atMs)} of cluster time: ${error.reason}` };
  }
}

/** The verdict of a finished run; the failed lines leave out the report's wall time, so they are the same every run. */
export function outcomeOf(result: RunResult): ScheduleOutcome {
  if (result.passed) return { verdict: 'pass' };
  const failed = [
    ...result.results.filter((r) => !r.ok).map((r) => `FAIL line ${r.line}: ${r.what} (found ${r.found})`),
    ...result.problems.map((p) => `PROBLEM ${p}`),
  ];
  return { verdict: 'fail', failed };
}

export function runRecord(
  scenario: Scenario,
  seed: number,
  index: number,
  schedule: readonly ChaosFault[],
  outcome: ScheduleOutcome,
): RunRecord {
  return {
    kind: 'run',
    file: scenario.file,
    seed,
    schedule: index + 1,
    faults: schedule.flat().map((e) => ({ at: formatSpan(e.at!), fault: e.fault ?? {} })),
    ...outcome,
    replay: chaosReplayCommandOf(scenario.file, seed, index + 1),
  };
}

export function shardRecord(
  file: string,
  options: { readonly seed: number; readonly runs: number; readonly shard: Shard },
  records: readonly RunRecord[],
  shrunk?: ShardRecord['shrunk'],
): ShardRecord {
  const count = (verdict: Verdict) => records.filter((r) => r.verdict === verdict).length;
  return {
    kind: 'shard',
    file,
    seed: options.seed,
    runs: options.runs,
    shard: `${options.shard.index}/${options.shard.count}`,
    passed: count('pass'),
    failed: count('fail'),
    stopped: count('stopped'),
    ...(shrunk === undefined ? {} : { shrunk }),
  };
}

/** The progress line of a finished run: `run 3: 1m crash_agent (agent 0), 2m restart_agent (...): FAIL`. */
export function progressLine(label: string, schedule: readonly ChaosFault[], outcome: ScheduleOutcome): string {
  const word = outcome.verdict === 'pass' ? 'pass' : outcome.verdict === 'fail' ? 'FAIL' : 'STOPPED';
  return `${label}: ${describeSchedule(schedule)}: ${word}`;
}

/** A search's runs as JUnit XML: one test suite, a test case per schedule. */
export function chaosJunit(shard: ShardRecord, records: readonly RunRecord[]): string {
  const esc = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const name = esc(`chaos ${shard.file} seed ${shard.seed} shard ${shard.shard}`);
  const cases = records.map((r) => {
    const title = esc(
      `schedule ${r.schedule}: ${r.faults.map((f) => `${f.at} ${String(f.fault['type'])}`).join(', ')}`,
    );
    const message = esc([...(r.failed ?? []), ...(r.reason === undefined ? [] : [r.reason]), r.replay].join('; '));
    const body =
      r.verdict === 'pass'
        ? ''
        : r.verdict === 'fail'
          ? `<failure message="${message}"/>`
          : `<error message="${message}"/>`;
    return `    <testcase classname="${esc(shard.file)}" name="${title}" time="0">${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites name="clustersim chaos">',
    `  <testsuite name="${name}" tests="${records.length}" failures="${shard.failed}" errors="${shard.stopped}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
