/**
 * `clustersim run <files..> --seeds 1-50 [--workers K]`: each file swept
 * over a list of seeds, K runs at once (scenario-pool.ts). The reports come
 * in seed order whatever order the runs ended in: a line per seed that
 * passed, the whole report of one that failed, then a summary per file.
 */
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { junitReport, textReport } from '../scenario/report.js';
import type { RunResult } from '../scenario/runner.js';
import { type PoolTask, runPool, type SeedOutcome } from './scenario-pool.js';

/** At most this many seeds in one sweep: a typo (1-1000000000) is a mistake, not a week of runs. */
const MAX_SEEDS = 100_000;

/** The seeds `1-50` or `1-5,9,12` names, or the reason it names none. */
export function seedList(text: string): string[] | string {
  const seeds: string[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    const [from, to] = [Number(m?.[1]), Number(m?.[2] ?? m?.[1])];
    if (m === null || to < from) return `"${text}" is not a list of seeds (1-50, or 1-5,9,12)`;
    if (seeds.length + to - from + 1 > MAX_SEEDS) return `"${text}" names more than ${MAX_SEEDS} seeds`;
    for (let seed = from; seed <= to; seed++) seeds.push(String(seed));
  }
  return seeds;
}

export interface SeedsArgs {
  readonly files: readonly string[];
  readonly seeds: readonly string[];
  readonly workers: number;
  readonly reporter: 'text' | 'junit';
}

export async function runSeeds(args: SeedsArgs): Promise<void> {
  const out = args.reporter === 'junit' ? process.stderr : process.stdout;
  const results: RunResult[] = [];
  let failed = 0;
  let fileErrors = 0;
  for (const file of args.files) {
    const swept = await sweep(file, args).catch((error: unknown) => {
      if (!(error instanceof ScenarioError)) throw error;
      process.stderr.write(`clustersim: ${error.message}\n`);
      return undefined;
    });
    if (swept === undefined) {
      fileErrors++;
      continue;
    }
    let passed = 0;
    for (const outcome of swept) {
      if ('stopped' in outcome) {
        out.write(`clustersim: ${outcome.stopped}\n`);
        continue;
      }
      results.push(outcome.result);
      const lines = textReport(outcome.result);
      if (outcome.result.passed) passed++;
      out.write(`${(outcome.result.passed ? [`${lines[0]}: PASS`, lines.at(-2)!] : lines).join('\n')}\n`);
    }
    failed += swept.length - passed;
    out.write(`${file}: ${swept.length} seeds: ${passed} passed, ${swept.length - passed} failed\n`);
  }
  if (args.reporter === 'junit') process.stdout.write(junitReport(results));
  process.exitCode = fileErrors > 0 ? 2 : failed > 0 ? 1 : 0;
}

/** One file over every seed: the outcomes in seed order. */
async function sweep(file: string, args: SeedsArgs): Promise<SeedOutcome[]> {
  const scenario = loadScenario(file);
  const tasks = new Map<number, PoolTask>(args.seeds.map((seed, i) => [i, { kind: 'seed', seed }]));
  const outcomes = await runPool<SeedOutcome>(scenario, tasks, args.workers, (i, outcome) => {
    const verdict = 'stopped' in outcome ? 'STOPPED' : outcome.result.passed ? 'pass' : 'FAIL';
    process.stderr.write(`${file}: seed ${args.seeds[i]}: ${verdict}\n`);
  });
  return args.seeds.map((_, i) => outcomes.get(i)!);
}
