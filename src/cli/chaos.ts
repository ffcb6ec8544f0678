/**
 * `clustersim chaos <file> --runs N`: the scenario under random fault
 * schedules drawn from a seed, run on `--workers` processes at once, or a
 * `--shard I/N` of them (schedules I, I + N, I + 2N..., so N machines
 * together run what one would). Each run's verdict is printed as
 * it ends and, in schedule order, as JSON lines (`--json`) or JUnit
 * (`--reporter junit`). The first failing schedule is shrunk to a minimal
 * one and written out as a scenario file, with the command that replays it
 * and its HTML report beside it.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { Argv } from 'yargs';
import {
  drawSchedules,
  searchFaults,
  shardIndices,
  withAgentResources,
  type ChaosFault,
  type Shard,
} from '../scenario/chaos.js';
import {
  chaosJunit,
  outcomeOf,
  progressLine,
  runRecord,
  shardRecord,
  type RunRecord,
  type ScheduleOutcome,
  type ShardRecord,
} from '../scenario/chaos-record.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import type { Scenario } from '../scenario/scenario.js';
import { DEFAULT_AGENT_RESOURCES } from '../start/option-table.js';
import { runHere, runPool } from './scenario-pool.js';
import { reportBeside, shrinkAndWrite } from './chaos-shrink.js';
import { choiceFlag, COUNT, numberFlag, textFlag } from './flags.js';

const REALTIME_NOTE =
  "in real time (an external framework): each run took the file's duration of wall time, and a replay runs the same faults again, not the same interleaving";

/** About how many runs a schedule found in real time is shrunk in, at most (each takes the file's duration). */
export const REALTIME_SHRINK_RUNS = 12;

export interface ChaosArgs {
  file: string;
  runs: number;
  seed: number;
  out: string | undefined;
  workers: number;
  shard: string | undefined;
  schedule: number | undefined;
  json: string | undefined;
  reporter: 'text' | 'junit';
}

export function chaosOptions(yargs: Argv): Argv<ChaosArgs> {
  return yargs
    .positional('file', { type: 'string', demandOption: true, describe: 'The scenario file' })
    .option(
      'runs',
      numberFlag('runs', COUNT, { default: 20, describe: 'Random schedules to try (shrinking runs come on top)' }),
    )
    .option(
      'seed',
      numberFlag('seed', { whole: true }, { default: 1, describe: 'The seed the schedules are drawn from' }),
    )
    .option('workers', {
      ...numberFlag('workers', COUNT, { describe: 'Runs at once, each in a process of its own' }),
      default: os.availableParallelism(),
      defaultDescription: 'the number of cores',
    })
    .option(
      'shard',
      textFlag('shard', shardProblem, {
        describe: 'Run only slice I of N of the schedules: schedules I, I + N, I + 2N...',
      }),
    )
    .option(
      'schedule',
      numberFlag('schedule', COUNT, { describe: 'Run only the N-th schedule drawn from the seed (a replay)' }),
    )
    .option('json', {
      type: 'string',
      requiresArg: true,
      describe: 'Write a JSON line per run to this file (- for stdout)',
    })
    .option(
      'reporter',
      choiceFlag(['text', 'junit'] as const, {
        default: 'text',
        describe: 'text for people; junit writes JUnit XML to stdout (the text goes to stderr)',
      }),
    )
    .option('out', {
      requiresArg: true,
      type: 'string',
      describe:
        'Where the minimal failing scenario goes (default NAME-chaos-SEED.yaml in the current directory, -I-of-N added for a shard)',
    })
    .conflicts('schedule', 'shard')
    .example('$0 chaos scenarios/steady-state.yaml --runs 50', 'Fifty random schedules of faults, on every core')
    .example(
      '$0 chaos scenarios/resilient-service.yaml --runs 200 --shard 2/4 --json shard-2.jsonl',
      'The second quarter of 200 schedules, for `clustersim chaos-merge`',
    ) as unknown as Argv<ChaosArgs>;
}

function shardProblem(text: string): string | undefined {
  const shard = shardOf(text);
  return shard !== undefined ? undefined : `"${text}" is not a slice I/N (whole numbers, 1 <= I <= N)`;
}

function shardOf(text: string | undefined): Shard | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(text ?? '1/1');
  if (m === null) return undefined;
  const [index, count] = [Number(m[1]), Number(m[2])];
  return index >= 1 && index <= count ? { index, count } : undefined;
}

export async function runChaos(args: ChaosArgs): Promise<void> {
  try {
    await search(args);
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    process.stderr.write(`clustersim: ${error.message}\n`);
    process.exitCode = 2;
  }
}

async function search(args: ChaosArgs): Promise<void> {
  // An agent a schedule adds is like the file's: their resources, the cluster's default where the file gives none.
  const scenario = withAgentResources(loadScenario(args.file), DEFAULT_AGENT_RESOURCES);
  const attached = scenario.externals.find((e) => e.attach);
  if (attached !== undefined)
    throw new ScenarioError(
      `${args.file}: framework '${attached.name}' (line ${attached.line}) is attached: chaos starts the file once a run, so each of its frameworks needs a command to start it by`,
    );
  const shard = shardOf(args.shard)!;
  const drawn = drawSchedules(scenario, args.seed, Math.max(args.runs, args.schedule ?? 0));
  const indices = args.schedule === undefined ? shardIndices(args.runs, shard) : [args.schedule - 1];
  const schedules = new Map(indices.map((k) => [k, drawn[k]!] as const));
  const tasks = new Map(indices.map((k) => [k, { kind: 'schedule', schedule: drawn[k]! }] as const));
  const text = args.reporter === 'junit' || args.json === '-' ? process.stderr : process.stdout;
  const outcomes = await runPool<ScheduleOutcome>(scenario, tasks, args.workers, (index, outcome) =>
    process.stderr.write(`${progressLine(`run ${index + 1}`, schedules.get(index)!, outcome)}\n`),
  );
  const records = indices.map((k) => runRecord(scenario, args.seed, k, schedules.get(k)!, outcomes.get(k)!));
  const first = records.find((r) => r.verdict === 'stopped') ?? records.find((r) => r.verdict === 'fail');
  const shrunk = first === undefined ? undefined : await shrink(scenario, args, shard, first, text);
  const summary = shardRecord(args.file, { seed: args.seed, runs: args.runs, shard }, records, shrunk);
  writeJson(args.json, records, summary);
  if (args.reporter === 'junit') process.stdout.write(chaosJunit(summary, records));
  for (const line of summaryLines(args.file, summary, records, schedules)) text.write(`${line}\n`);
  if (scenario.time === 'realtime') text.write(`${REALTIME_NOTE}\n`);
  if (summary.failed + summary.stopped > 0) process.exitCode = 1;
}

async function shrink(
  scenario: Scenario,
  args: ChaosArgs,
  shard: Shard,
  first: RunRecord,
  text: NodeJS.WritableStream,
): Promise<ShardRecord['shrunk']> {
  const sharded = shard.count > 1 ? `-${shard.index}-of-${shard.count}` : '';
  const out = args.out ?? `${scenario.name}-chaos-${args.seed}${sharded}.yaml`;
  let n = 0;
  const outcome = await searchFaults(scenario, {
    runs: 1,
    seed: args.seed,
    path: String(first.schedule - 1),
    run: runHere,
    // A run in real time takes its whole duration: shrinking stops after REALTIME_SHRINK_RUNS of them, with the smallest failure so far.
    ...(scenario.time === 'realtime' ? { timeLimitMs: REALTIME_SHRINK_RUNS * scenario.durationMs } : {}),
    onRun: (_, schedule, result) =>
      process.stderr.write(
        `${progressLine(`shrinking ${++n}`, schedule, result === undefined ? { verdict: 'stopped' } : outcomeOf(result))}\n`,
      ),
  });
  const { lines, written } = shrinkAndWrite(scenario, args.seed, first.schedule, outcome, out);
  for (const line of lines) text.write(`${line}\n`);
  const report = written ? await reportBeside(out) : { lines: [] };
  for (const line of report.lines) text.write(`${line}\n`);
  return {
    schedule: first.schedule,
    out,
    replay: `clustersim run ${out}`,
    ...(report.path === undefined ? {} : { report: report.path }),
  };
}

function writeJson(json: string | undefined, records: readonly RunRecord[], summary: ShardRecord): void {
  if (json === undefined) return;
  const lines = [...records, summary].map((r) => `${JSON.stringify(r)}\n`).join('');
  if (json === '-') process.stdout.write(lines);
  else writeFileSync(json, lines);
}

function summaryLines(
  file: string,
  summary: ShardRecord,
  records: readonly RunRecord[],
  schedules: ReadonlyMap<number, readonly ChaosFault[]>,
): string[] {
  const slice = summary.shard === '1/1' ? '' : `, shard ${summary.shard}`;
  const lines = [
    `${file}: ${records.length} runs under random faults (seed ${summary.seed}${slice}): ${summary.passed} passed, ${summary.failed} failed, ${summary.stopped} stopped`,
  ];
  for (const r of records.filter((r) => r.verdict !== 'pass'))
    lines.push(`  ${progressLine(`run ${r.schedule}`, schedules.get(r.schedule - 1)!, r)}; replay: ${r.replay}`);
  return lines;
}
