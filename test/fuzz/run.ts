/**
 * `npm run fuzz`: the generators of the fuzz test, at length. Sends
 * FUZZ_CASES requests (default 100,000) in runs of up to FUZZ_MAX_STEPS
 * steps, each run on a fresh cluster; prints progress every few thousand
 * cases, and at the end the figures: cases, wall time, failures by kind
 * (crashes, hangs, unexpected 5xx, other), counts by status. Exits 1 on the
 * first failure, after fast-check's report (its seed, path and shrunk
 * counterexample, the cluster seed among them); the cases counted then
 * include the re-runs of shrinking.
 *
 * FUZZ_API picks what is fuzzed: `master` (the master's APIs and the
 * agents' other endpoints), `executor` (the agents' executor API, on agents
 * that await their custom executors), `agent` (the agents' operator API:
 * exec sessions, nested containers, input streams, waits, memory limits),
 * `engine` (the container engine's Unix socket: its exec calls and
 * streams), `control` (the control API, `/sim/v1/`), `workflow` (the
 * workflow service's API), `orchestrator` (the orchestration framework's
 * API), or `all` (default: runs of each, in the proportions of `TARGETS`).
 *
 * FUZZ_SEED and FUZZ_PATH replay a failure; FUZZ_TIMEOUT_MS sets the
 * per-request hang limit (default 5,000), FUZZ_STALL_MS the watchdog's
 * limit for a process that stops answering altogether (default 30,000);
 * FUZZ_BY_KIND=1 adds the counts by call type and path.
 */
import fc from 'fast-check';
import { agentRunInput, runAgentsOnce } from './agent-session.js';
import { controlRunInput, runControlOnce } from './control-session.js';
import { engineRunInput, runEngineOnce } from './engine-session.js';
import { executorRunInput, runExecutorsOnce } from './executor-session.js';
import { orchestratorRunInput, runOrchestratorOnce } from './orchestrator-session.js';
import { FuzzFailure, fuzzParameters, runInput, runOnce, Stats, type FailureKind, type RunOptions } from './session.js';
import { runWorkflowOnce, workflowRunInput } from './workflow-session.js';
import { Watchdog } from './watchdog.js';

const target = Number(process.env['FUZZ_CASES'] ?? 100_000);
const maxSteps = Number(process.env['FUZZ_MAX_STEPS'] ?? 40);
const timeoutMs = Number(process.env['FUZZ_TIMEOUT_MS'] ?? 5_000);
const PROGRESS_EVERY = 5_000;

/** A run of some target, with the function that runs it. */
interface AnyRun {
  readonly api: string;
  readonly input: unknown;
  readonly run: (options: RunOptions) => Promise<void>;
}

/** Each target: its runs, and its weight among the runs of `all`. Adding a target is one line here. */
const TARGETS: Readonly<Record<string, { readonly weight: number; readonly runs: fc.Arbitrary<AnyRun> }>> = {
  master: entry('master', 4, runInput(maxSteps), runOnce),
  executor: entry('executor', 2, executorRunInput(maxSteps), runExecutorsOnce),
  agent: entry('agent', 2, agentRunInput(maxSteps), runAgentsOnce),
  engine: entry('engine', 1, engineRunInput(maxSteps), runEngineOnce),
  control: entry('control', 2, controlRunInput(maxSteps), runControlOnce),
  workflow: entry('workflow', 1, workflowRunInput(maxSteps), runWorkflowOnce),
  orchestrator: entry('orchestrator', 1, orchestratorRunInput(maxSteps), runOrchestratorOnce),
};

function entry<T>(
  api: string,
  weight: number,
  input: fc.Arbitrary<T>,
  run: (input: T, options: RunOptions) => Promise<void>,
) {
  return { weight, runs: input.map((i): AnyRun => ({ api, input: i, run: (options) => run(i, options) })) };
}

const api = process.env['FUZZ_API'] ?? 'all';
if (api !== 'all' && TARGETS[api] === undefined)
  throw new Error(`FUZZ_API must be all or one of ${Object.keys(TARGETS).join(', ')}, not ${api}`);
const runs: fc.Arbitrary<AnyRun> =
  api === 'all'
    ? fc.oneof(...Object.values(TARGETS).map(({ weight, runs: arbitrary }) => ({ weight, arbitrary })))
    : TARGETS[api]!.runs;
const runAny = (run: AnyRun, options: RunOptions) => run.run(options);

/** The failure found, by kind: a run stops at its first, so each count is 0 or 1. */
const failures: Record<FailureKind, number> = { crash: 0, hang: 0, 'unexpected 5xx': 0, other: 0 };

function figures(stats: Stats, started: number): string {
  const seconds = (performance.now() - started) / 1000;
  const statuses = [...stats.byStatus]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, n]) => `    ${s.padEnd(14)} ${n}`);
  const followUps = [...stats.followUps].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`);
  const lines = [
    `fuzz: ${stats.cases} cases in ${stats.runs} runs, ${seconds.toFixed(1)} s wall time (${Math.round(stats.cases / seconds)} cases/s); ` +
      `crashes ${failures.crash}, hangs ${failures.hang}, unexpected 5xx ${failures['unexpected 5xx']}, other failures ${failures.other}`,
    '  by status:',
    ...statuses,
    `  then GET /health on the same connection: ${followUps.join(', ') || 'none sent'}`,
    `  event streams read: scheduler ${stats.streams.scheduler} (${stats.events.scheduler} events), operator ${stats.streams.operator} (${stats.events.operator} events), ` +
      `executor ${stats.streams.executor} (${stats.events.executor} events), session output ${stats.streams.session} (${stats.events.session} records)`,
    `  answers held to the one answer upstream gives: ${stats.exact}`,
  ];
  if (process.env['FUZZ_BY_KIND'] === '1') {
    lines.push('  by call type or path, and status:');
    for (const [k, n] of [...stats.byKind].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`    ${k.padEnd(60)} ${n}`);
  }
  return lines.join('\n');
}

async function main(): Promise<number> {
  const stats = new Stats();
  const started = performance.now();
  const watchdog = new Watchdog(Number(process.env['FUZZ_STALL_MS'] ?? 30_000));
  // A throw nobody catches is a crash of the server too (it runs in this process): report it with the figures.
  const crash = (error: unknown) => {
    failures.crash++;
    console.error(`fuzz: the process crashed: ${(error as Error)?.stack ?? String(error)}`);
    console.log(figures(stats, started));
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  try {
    return await fuzz(stats, started, watchdog);
  } finally {
    await watchdog.stop();
  }
}

let reported = false;
/** The failure as found, before shrinking starts (which may take minutes). */
function firstFailure(error: unknown): void {
  if (reported) return;
  reported = true;
  failures[error instanceof FuzzFailure ? error.kind : 'crash']++;
  console.error(`fuzz: failure found, shrinking it now:\n${(error as Error)?.message ?? String(error)}`);
}

async function fuzz(stats: Stats, started: number, watchdog: Watchdog): Promise<number> {
  let nextReport = PROGRESS_EVERY;
  stats.onCase = (s) => {
    if (s.cases < nextReport) return;
    nextReport += PROGRESS_EVERY;
    const seconds = (performance.now() - started) / 1000;
    console.log(`fuzz: ${s.cases} / ${target} cases, ${s.runs} runs, ${seconds.toFixed(1)} s`);
  };
  const baseSeed = Number(process.env['FUZZ_SEED'] ?? (Date.now() ^ (Math.random() * 2 ** 31)) | 0);
  console.log(
    `fuzz: ${target} cases of ${api === 'all' ? 'every API' : `the ${api} API`}, runs of up to ${maxSteps} steps, fast-check seed ${baseSeed} (FUZZ_SEED=${baseSeed} to replay)`,
  );
  // Runs vary in length, so the number of runs is a guess; batches top it up until the cases are there.
  for (let batch = 0; stats.cases < target; batch++) {
    // A first guess a little over the mean run, so that the first batch falls short rather than far over.
    const perRun = stats.runs === 0 ? maxSteps * 0.55 : stats.cases / stats.runs;
    const numRuns = Math.max(1, Math.ceil((target - stats.cases) / Math.max(1, perRun)));
    const seed = baseSeed + batch;
    if (batch > 0) console.log(`fuzz: batch ${batch + 1}, ${numRuns} more runs, fast-check seed ${seed}`);
    try {
      await fc.assert(
        fc.asyncProperty(runs, (run) => runAny(run, { timeoutMs, stats, watchdog, onFailure: firstFailure })),
        fuzzParameters<AnyRun>(numRuns, seed),
      );
    } catch (error) {
      console.error((error as Error).message);
      console.log(figures(stats, started));
      return 1;
    }
    if (process.env['FUZZ_SEED'] !== undefined && process.env['FUZZ_PATH'] !== undefined) break;
  }
  console.log(figures(stats, started));
  return 0;
}

process.exitCode = await main();
