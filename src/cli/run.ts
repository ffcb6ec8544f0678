/**
 * `clustersim run <file...>`: scenario files run in virtual time, each
 * expectation printed with PASS or FAIL, a summary, and the command that
 * replays the run; exit code 0 only if every scenario passed.
 * `clustersim check-determinism <file...>`: each run twice with one seed,
 * the traces compared.
 */
import { writeFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { firstDivergence, traceJsonLine } from '../core/trace.js';
import { ScenarioError } from '../scenario/load.js';
import { junitReport, textReport } from '../scenario/report.js';
import type { RunResult } from '../scenario/runner.js';
import { formatSpan } from '../scenario/duration.js';
import { runScenarioFile } from '../start-scenario.js';

export interface RunArgs {
  files: string[];
  seed: string | undefined;
  trace: string | undefined;
  reporter: 'text' | 'junit';
}

export function runOptions(yargs: Argv): Argv<RunArgs> {
  return yargs
    .positional('files', { type: 'string', array: true, demandOption: true, describe: 'Scenario files (scenarios/*.yaml)' })
    .option('seed', { type: 'string', describe: "The seed of the run (default the file's)" })
    .option('trace', { type: 'string', describe: 'Write the trace as JSON lines to this file (one file per scenario: NAME is inserted before .jsonl when several run)' })
    .option('reporter', { choices: ['text', 'junit'] as const, default: 'text' as const, describe: 'text for people; junit writes JUnit XML to stdout (the text goes to stderr)' })
    .example('$0 run scenarios/agent-crash.yaml --seed 7', 'One scenario with seed 7')
    .example('$0 run scenarios/*.yaml --reporter junit > scenarios.xml', 'All of them, for CI') as unknown as Argv<RunArgs>;
}

export async function runRun(args: RunArgs): Promise<void> {
  const out = args.reporter === 'junit' ? process.stderr : process.stdout;
  const results: RunResult[] = [];
  for (const file of args.files) {
    const result = await runOne(file, args);
    if (result === undefined) continue;
    results.push(result);
    for (const line of textReport(result)) out.write(`${line}\n`);
    if (args.trace !== undefined) writeTrace(traceFile(args.trace, result, args.files.length), result);
  }
  const passed = results.filter((r) => r.passed).length;
  out.write(`${plural(args.files.length, 'scenario')}: ${passed} passed, ${args.files.length - passed} failed\n`);
  if (args.reporter === 'junit') process.stdout.write(junitReport(results));
  process.exitCode = passed === args.files.length ? 0 : 1;
}

async function runOne(file: string, args: { readonly seed: string | undefined }): Promise<RunResult | undefined> {
  try {
    return await runScenarioFile(file, { ...(args.seed === undefined ? {} : { seed: args.seed }), keepTrace: true, onProgress: progress(file) });
  } catch (error) {
    // A file that does not read names itself; a run that broke says where.
    const message = error instanceof ScenarioError ? error.message : `${file}: the run broke: ${error instanceof Error ? error.message : String(error)}`;
    process.stderr.write(`clustersim: ${message}\n`);
    return undefined;
  } finally {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  }
}

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

function traceFile(path: string, result: RunResult, runs: number): string {
  if (runs === 1) return path;
  return path.endsWith('.jsonl') ? `${path.slice(0, -'.jsonl'.length)}.${result.scenario.name}.jsonl` : `${path}.${result.scenario.name}`;
}

function writeTrace(path: string, result: RunResult): void {
  writeFileSync(path, result.trace!.map((e) => `${traceJsonLine(e)}\n`).join(''));
}

export interface CheckArgs {
  files: string[];
  seed: string | undefined;
}

export async function runCheckDeterminism(args: CheckArgs): Promise<void> {
  let same = 0;
  for (const file of args.files) {
    const first = await runOne(file, args);
    const second = first === undefined ? undefined : await runOne(file, args);
    if (first === undefined || second === undefined) continue;
    const at = firstDivergence(first.trace!, second.trace!);
    if (at < 0 && first.traceHash === second.traceHash) {
      same++;
      process.stdout.write(`${file}: seed ${first.seed}, two runs, the same trace (${first.traceLength} entries, hash ${first.traceHash})\n`);
      continue;
    }
    const [a, b] = [first.trace![at], second.trace![at]];
    process.stdout.write(`${file}: seed ${first.seed}, the runs differ at entry ${at + 1} (cluster time ${a?.timeMs ?? b?.timeMs} ms)\n  first:  ${a?.line ?? '(none)'}\n  second: ${b?.line ?? '(none)'}\n`);
  }
  process.stdout.write(`${plural(args.files.length, 'scenario')}: ${same} deterministic, ${args.files.length - same} not\n`);
  process.exitCode = same === args.files.length ? 0 : 1;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
