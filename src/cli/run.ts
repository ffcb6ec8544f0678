/**
 * `clustersim run <file...>`: scenario files run in virtual time, each
 * expectation printed with PASS or FAIL, a summary, and the command that
 * replays the run; exit code 0 only if every scenario passed, 1 if one
 * failed or its run stopped, 2 if a file could not be read (its error names
 * the file, and the field).
 * `clustersim check-determinism <file...>`: each run twice with one seed,
 * the traces compared.
 */
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import type { Argv } from 'yargs';
import type { TraceEntry } from '../core/kernel/trace.js';
import { htmlReport } from '../scenario/html-report.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { junitReport, textReport } from '../scenario/report.js';
import { RunError, type RunResult } from '../scenario/runner.js';
import { formatSpan } from '../scenario/duration.js';
import { TimelineRecorder } from '../scenario/report-timeline.js';
import { traceDifference } from '../scenario/run-trace.js';
import { runLoadedScenario } from '../start/scenario.js';
import { TraceFile } from './trace-file.js';
import { COUNT, numberFlag, textFlag } from './flags.js';
import { runSeeds, seedList } from './run-seeds.js';

export interface RunArgs {
  files: string[];
  seed: string | undefined;
  trace: string | undefined;
  report: string | undefined;
  reporter: 'text' | 'junit';
  seeds: string | undefined;
  workers: number;
}

export function runOptions(yargs: Argv): Argv<RunArgs> {
  return yargs
    .positional('files', {
      type: 'string',
      array: true,
      demandOption: true,
      describe: 'Scenario files (scenarios/*.yaml)',
    })
    .option('seed', { requiresArg: true, type: 'string', describe: "The seed of the run (default the file's)" })
    .option('trace', {
      requiresArg: true,
      type: 'string',
      describe:
        'Write the trace as JSON lines to this file (one file per scenario: NAME is inserted before .jsonl when several run)',
    })
    .option('report', {
      requiresArg: true,
      type: 'string',
      describe:
        'Write a report of the run as one self-contained HTML page to this file (one per scenario: NAME is inserted before .html when several run)',
    })
    .option('reporter', {
      requiresArg: true,
      choices: ['text', 'junit'] as const,
      default: 'text' as const,
      describe: 'text for people; junit writes JUnit XML to stdout (the text goes to stderr)',
    })
    .option(
      'seeds',
      textFlag('seeds', seedsProblem, {
        describe: 'Run each file with every seed of a list (1-50, or 1-5,9,12), in seed order',
      }),
    )
    .option('workers', {
      ...numberFlag('workers', COUNT, { describe: 'With --seeds: runs at once, each in a process of its own' }),
      default: os.availableParallelism(),
      defaultDescription: 'the number of cores',
    })
    .conflicts('seeds', ['seed', 'trace', 'report'])
    .example('$0 run scenarios/agent-crash-reconnect.yaml --seed 7', 'One scenario with seed 7')
    .example('$0 run scenarios/agent-lost.yaml --report run.html', 'A picture of the run, to open in a browser')
    .example('$0 run scenarios/resilient-service.yaml --seeds 1-50', 'Fifty seeds, on every core')
    .example(
      '$0 run scenarios/*.yaml --reporter junit > scenarios.xml',
      'All of them, for CI',
    ) as unknown as Argv<RunArgs>;
}

/** The tail of a summary that some files did not run in: they were named above with their error. */
function notRun(fileErrors: number): string {
  return fileErrors === 0 ? '' : `; ${plural(fileErrors, 'file')} not run`;
}

function seedsProblem(text: string): string | undefined {
  const seeds = seedList(text);
  return typeof seeds === 'string' ? seeds : undefined;
}

export async function runRun(args: RunArgs): Promise<void> {
  if (args.seeds !== undefined) return runSeeds({ ...args, seeds: seedList(args.seeds) as string[] });
  const out = args.reporter === 'junit' ? process.stderr : process.stdout;
  const results: RunResult[] = [];
  let fileErrors = 0;
  for (const file of args.files) {
    const result = await runOne(file, { ...args, runs: args.files.length });
    if (result === 'file error') fileErrors++;
    if (typeof result !== 'object') continue;
    results.push(result);
    for (const line of textReport(result)) out.write(`${line}\n`);
  }
  const passed = results.filter((r) => r.passed).length;
  const ran = args.files.length - fileErrors;
  // A file that could not be read was named on stderr; the count is of the scenarios that ran.
  if (ran > 0) out.write(`${plural(ran, 'scenario')}: ${passed} passed, ${ran - passed} failed${notRun(fileErrors)}\n`);
  if (args.reporter === 'junit') process.stdout.write(junitReport(results));
  process.exitCode = fileErrors > 0 ? 2 : passed === args.files.length ? 0 : 1;
}

/**
 * One file run: its result, or why there is none, printed as one line: the
 * file's error (which names the field), or the run's (which names the seed
 * and the command that replays it).
 */
async function runOne(
  file: string,
  args: {
    readonly seed: string | undefined;
    readonly trace?: string | undefined;
    readonly report?: string | undefined;
    readonly runs?: number;
    readonly keepTrace?: boolean;
  },
): Promise<RunResult | 'file error' | 'run error'> {
  let trace: TraceFile | undefined;
  let report: { readonly path: string; readonly fd: number; readonly recorder: TimelineRecorder } | undefined;
  let reported = false;
  try {
    const scenario = loadScenario(file);
    const runs = args.runs ?? 1;
    trace = args.trace === undefined ? undefined : openTrace(perScenario(args.trace, '.jsonl', scenario.name, runs));
    report = args.report === undefined ? undefined : openReport(perScenario(args.report, '.html', scenario.name, runs));
    const sinks = [trace?.write, report?.recorder.add].filter((s) => s !== undefined);
    const options = {
      ...(args.seed === undefined ? {} : { seed: args.seed }),
      keepTrace: args.keepTrace ?? false,
      onProgress: progress(file),
      onAttach: (name: string, match: string, masterUrl: string) =>
        process.stderr.write(`clustersim: ${file}: waiting for framework '${match}' (${name}) at ${masterUrl}\n`),
    };
    const result = await runLoadedScenario(scenario, {
      ...options,
      ...(sinks.length === 0
        ? {}
        : {
            traceSink: (entry: TraceEntry) => {
              for (const sink of sinks) sink(entry);
            },
          }),
    });
    if (report !== undefined) writeReport(report, htmlReport(result, report.recorder.timeline()));
    reported = true;
    return result;
  } catch (error) {
    if (error instanceof ScenarioError) return fail(error.message, 'file error');
    if (error instanceof RunError) return fail(error.message, 'run error');
    return fail(`${file}: an internal error of clustersim (a bug)`, 'run error');
  } finally {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    const broken = trace?.close();
    if (broken !== undefined) process.stderr.write(`clustersim: ${trace!.path}: ${broken}: the trace is not whole\n`);
    if (report !== undefined) closeSync(report.fd);
    // A run that stopped has no result to show: no empty page is left behind.
    if (report !== undefined && !reported) rmSync(report.path, { force: true });
  }
}

function fail<T>(message: string, kind: T): T {
  process.stderr.write(`clustersim: ${message}\n`);
  return kind;
}

/** The trace file, or a file error naming it. */
function openTrace(path: string): TraceFile {
  try {
    return new TraceFile(path);
  } catch (error) {
    throw new ScenarioError(`${path}: the trace file cannot be written (${errorCode(error)})`);
  }
}

/** The report file, opened before the run so that a path it cannot write is a file error at once. */
function openReport(path: string): { path: string; fd: number; recorder: TimelineRecorder } {
  try {
    return { path, fd: openSync(path, 'w'), recorder: new TimelineRecorder() };
  } catch (error) {
    throw new ScenarioError(`${path}: the report cannot be written (${errorCode(error)})`);
  }
}

function writeReport(report: { readonly path: string; readonly fd: number }, html: string): void {
  const bytes = Buffer.from(html, 'utf8');
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(report.fd, bytes, done);
  } catch (error) {
    throw new ScenarioError(`${report.path}: the report cannot be written (${errorCode(error)})`);
  }
}

const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? String(error);

/** A progress line on stderr: rewritten in place on a terminal, every few seconds otherwise. */
function progress(file: string): (nowMs: number, endMs: number) => void {
  let last = performance.now();
  return (nowMs, endMs) => {
    const wall = performance.now();
    const line = `${file}: ${formatSpan(Math.floor(nowMs / 1000) * 1000)} of ${formatSpan(endMs)} of cluster time`;
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
    else if (wall - last > 5_000) process.stderr.write(`${line}\n`);
    else return;
    last = wall;
  };
}

/** The file of one scenario's trace or report: the path given, with the scenario's name before its extension when several run. */
function perScenario(path: string, extension: string, name: string, runs: number): string {
  if (runs === 1) return path;
  return path.endsWith(extension) ? `${path.slice(0, -extension.length)}.${name}${extension}` : `${path}.${name}`;
}

export interface CheckArgs {
  files: string[];
  seed: string | undefined;
}

export async function runCheckDeterminism(args: CheckArgs): Promise<void> {
  let same = 0;
  let fileErrors = 0;
  for (const file of args.files) {
    if (inRealTime(file)) {
      process.stderr.write(
        `clustersim: ${file}: runs in real time (an external framework): its trace is not repeatable\n`,
      );
      fileErrors++;
      continue;
    }
    const first = await runOne(file, { ...args, keepTrace: true });
    const second = typeof first !== 'object' ? first : await runOne(file, { ...args, keepTrace: true });
    if (first === 'file error') fileErrors++;
    if (typeof first !== 'object' || typeof second !== 'object') continue;
    const difference = traceDifference(first, second);
    if (difference === undefined) {
      same++;
      process.stdout.write(
        `${file}: seed ${first.seed}, two runs, the same trace (${first.traceLength} entries, hash ${first.traceHash})\n`,
      );
    } else if (difference.kind === 'entry') {
      const { seq, first: a, second: b } = difference;
      process.stdout.write(
        `${file}: seed ${first.seed}, the runs differ at entry ${seq} (cluster time ${a?.timeMs ?? b?.timeMs} ms)\n  first:  ${a?.line ?? '(none)'}\n  second: ${b?.line ?? '(none)'}\n`,
      );
    } else {
      // The windows no longer hold the entries where the runs parted: their hashes say between which.
      const between = `entries ${difference.afterSeq + 1} and ${difference.bySeq} (hashes ${first.traceHash} and ${second.traceHash})`;
      process.stdout.write(
        `${file}: seed ${first.seed}, the runs differ between ${between}; clustersim run --trace writes the whole trace of a run\n`,
      );
    }
  }
  const ran = args.files.length - fileErrors;
  if (ran > 0)
    process.stdout.write(`${plural(ran, 'scenario')}: ${same} deterministic, ${ran - same} not${notRun(fileErrors)}\n`);
  process.exitCode = fileErrors > 0 ? 2 : same === args.files.length ? 0 : 1;
}

/** Whether a file runs in real time; a file that cannot be read is left to runOne to report. */
function inRealTime(file: string): boolean {
  try {
    return loadScenario(file).time === 'realtime';
  } catch {
    return false;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
