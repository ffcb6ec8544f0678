/**
 * The golden traces of the shipped scenarios: for each file, the seed it
 * ran with, the number of trace entries and the trace's hash, as
 * `clustersim run scenarios/<file>` prints them. `test/scenario/golden.test.ts`
 * fails when a run leaves another trace; `npm run golden:update` runs every
 * scenario and rewrites `scenarios/golden.json`, printing what changed, so a
 * changed trace is a line in the diff, made on purpose.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { runScenarioFile } from '../../src/start/scenario.js';
import { SCENARIO_DIR, SHIPPED_SCENARIOS } from './shipped.js';

export const GOLDEN_FILE = `${SCENARIO_DIR}/golden.json`;
export const UPDATE_COMMAND = 'npm run golden:update';

export interface GoldenTrace {
  readonly seed: string;
  readonly entries: number;
  readonly hash: string;
}

export type Golden = Readonly<Record<string, GoldenTrace>>;

export function readGolden(): Golden {
  return existsSync(GOLDEN_FILE) ? (JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Golden) : {};
}

/** JSON with one line per scenario, in file-name order: a changed trace is one changed line in a diff. */
export function goldenText(golden: Golden): string {
  const lines = Object.keys(golden)
    .sort()
    .map((file) => {
      const { seed, entries, hash } = golden[file]!;
      return `  ${JSON.stringify(file)}: { "seed": ${JSON.stringify(seed)}, "entries": ${entries}, "hash": ${JSON.stringify(hash)} }`;
    });
  return `{\n${lines.join(',\n')}\n}\n`;
}

/** A scenario's trace with its own seed, and whether its expectations passed. */
export async function runGolden(file: string): Promise<GoldenTrace & { readonly passed: boolean }> {
  const result = await runScenarioFile(`${SCENARIO_DIR}/${file}`);
  return { seed: result.seed, entries: result.traceLength, hash: result.traceHash, passed: result.passed };
}

export function describeTrace(trace: GoldenTrace | undefined): string {
  return trace === undefined ? '(none)' : `seed ${trace.seed}, ${trace.entries} entries, hash ${trace.hash}`;
}

/**
 * Runs every shipped scenario and writes their traces. A scenario whose
 * expectations fail keeps its old entry (a failing run is no reference)
 * and the command exits with 1.
 */
async function update(): Promise<void> {
  const old = readGolden();
  const next: Record<string, GoldenTrace> = {};
  let changed = 0;
  let added = 0;
  let failed = 0;
  for (const file of SHIPPED_SCENARIOS) {
    const { passed, ...trace } = await runGolden(file);
    if (!passed) {
      failed++;
      process.stdout.write(
        `${file}: its expectations fail (clustersim run ${SCENARIO_DIR}/${file}); entry kept: ${describeTrace(old[file])}\n`,
      );
      if (old[file] !== undefined) next[file] = old[file];
      continue;
    }
    next[file] = trace;
    if (describeTrace(old[file]) === describeTrace(trace)) continue;
    if (old[file] === undefined) added++;
    else changed++;
    process.stdout.write(`${file}: ${describeTrace(old[file])} → ${describeTrace(trace)}\n`);
  }
  const removed = Object.keys(old).filter((file) => !SHIPPED_SCENARIOS.includes(file));
  for (const file of removed)
    process.stdout.write(`${file}: ${describeTrace(old[file])} → (removed: no such scenario)\n`);
  writeFileSync(GOLDEN_FILE, goldenText(next));
  const failures = failed === 0 ? '' : `, ${failed} failing (kept)`;
  process.stdout.write(
    `${SHIPPED_SCENARIOS.length} scenarios: ${changed} changed, ${added} added, ${removed.length} removed${failures}; wrote ${GOLDEN_FILE}\n`,
  );
  if (failed > 0) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) await update();
