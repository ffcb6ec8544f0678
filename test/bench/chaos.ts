/**
 * Chaos throughput: `clustersim chaos scenarios/resilient-service.yaml`
 * from the sources, the same schedules (one seed) with 1 worker and with 2,
 * timed from the command's start to its exit (process start and the draw
 * included). Figures only: a machine with fewer free cores than workers
 * shows it in the ratio, and nothing fails on speed.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { num, progress, table } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCENARIO = 'scenarios/resilient-service.yaml';

interface ChaosRow {
  readonly workers: number;
  readonly runs: number;
  readonly seconds: number;
  readonly verdicts: string;
}

function benchWorkers(workers: number, runs: number, seed: number): ChaosRow {
  progress(`chaos: ${runs} schedules of ${SCENARIO}, ${workers} worker(s)`);
  const started = performance.now();
  const args = [
    '--import',
    'tsx',
    'src/cli/main.ts',
    'chaos',
    SCENARIO,
    '--runs',
    String(runs),
    '--seed',
    String(seed),
  ];
  const child = spawnSync(
    process.execPath,
    [...args, '--workers', String(workers), '--json', '-', '--out', '/dev/null'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  const seconds = (performance.now() - started) / 1000;
  if (child.status === 2 || child.status === null) throw new Error(`chaos bench: ${child.stderr}`);
  const counts = new Map<string, number>();
  for (const line of child.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { kind: string; verdict?: string };
    if (record.kind === 'run') counts.set(record.verdict!, (counts.get(record.verdict!) ?? 0) + 1);
  }
  const verdicts = [...counts].map(([verdict, n]) => `${n} ${verdict}`).join(', ');
  return { workers, runs, seconds, verdicts };
}

export function benchChaosPart(runs: number, seed: number): string[] {
  const rows = [1, 2].map((workers) => benchWorkers(workers, runs, seed));
  const [one, two] = rows;
  return [
    '',
    `11. chaos throughput: clustersim chaos ${SCENARIO} --runs ${runs} --seed ${seed}, the command timed whole`,
    table(
      ['workers', 'schedules', 'seconds', 'schedules/s', 'verdicts'],
      rows.map((r) => [String(r.workers), num(r.runs), num(r.seconds, 1), num(r.runs / r.seconds, 2), r.verdicts]),
    ),
    `2 workers / 1: ${num(one!.seconds / two!.seconds, 2)}x`,
  ];
}
