/**
 * Chaos throughput: `clustersim chaos scenarios/resilient-service.yaml`
 * from the sources, the same schedules (one seed) with 1 worker and with 2,
 * timed from the command's start to its exit (process start and the draw
 * included). Figures only: a machine with fewer free cores than workers
 * shows it in the ratio, and nothing fails on speed.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { num, progress, table } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCENARIO = 'scenarios/resilient-service.yaml';

interface ChaosRow {
  readonly workers: number;
  readonly runs: number;
  readonly seconds: number;
  readonly verdicts: string;
  /** CPU seconds of the command and its worker processes, where the system says (Linux). */
  readonly cpuSeconds: number;
  /** The machine's 1-minute load average when the row ended. */
  readonly load: number;
}

/**
 * CPU seconds of this process's children that have ended, their own
 * children included (cutime + cstime of /proc/self/stat, in ticks of
 * 1/100 s on Linux); NaN elsewhere.
 */
function childCpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

function benchWorkers(workers: number, runs: number, seed: number): ChaosRow {
  progress(`chaos: ${runs} schedules of ${SCENARIO}, ${workers} worker(s)`);
  const started = performance.now();
  const cpuBefore = childCpuSeconds();
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
  const cpuSeconds = childCpuSeconds() - cpuBefore;
  if (child.status === 2 || child.status === null) throw new Error(`chaos bench: ${child.stderr}`);
  const counts = new Map<string, number>();
  for (const line of child.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { kind: string; verdict?: string };
    if (record.kind === 'run') counts.set(record.verdict!, (counts.get(record.verdict!) ?? 0) + 1);
  }
  const verdicts = [...counts].map(([verdict, n]) => `${n} ${verdict}`).join(', ');
  return { workers, runs, seconds, cpuSeconds, verdicts, load: os.loadavg()[0]! };
}

export function benchChaosPart(runs: number, seed: number): string[] {
  const rows = [1, 2].map((workers) => benchWorkers(workers, runs, seed));
  const [one, two] = rows;
  return [
    '',
    `11. chaos throughput: clustersim chaos ${SCENARIO} --runs ${runs} --seed ${seed}, the command timed whole`,
    table(
      ['workers', 'schedules', 'seconds', 'schedules/s', 'CPU s', 'CPU s/schedule', 'verdicts', 'load average after'],
      rows.map((r) => [
        String(r.workers),
        num(r.runs),
        num(r.seconds, 1),
        num(r.runs / r.seconds, 2),
        num(r.cpuSeconds, 1),
        num(r.cpuSeconds / r.runs, 2),
        r.verdicts,
        num(r.load, 1),
      ]),
    ),
    `2 workers / 1: ${num(one!.seconds / two!.seconds, 2)}x; ${os.availableParallelism()} cores: a load average above that`,
    'means other work shared them, and the ratio says more about it than about the workers',
  ];
}
