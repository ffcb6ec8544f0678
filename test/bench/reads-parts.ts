/**
 * The parts of the big reads, in the process and without HTTP: the cluster
 * is built once (reads.ts `bigCluster`), then each read's snapshot (what
 * the request waits for before its first byte) and the writing of all its
 * pieces are timed apart, several times, by CPU time. With `--profile DIR`
 * a CPU profile of the reads alone (not the build) is written to DIR.
 *
 *   npx tsx test/bench/reads-parts.ts AGENTS TASKS_PER_AGENT [--only state|getStateJson|getStateProto] [--profile DIR]
 *
 * prints one JSON line. A program, not a test: it never fails on speed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { snapshotState } from '../../src/wire/v0/state-stream.js';
import { snapshotGetState } from '../../src/wire/operator-stream.js';
import { bigCluster } from './reads.js';
import { progress } from './stats.js';

interface PartFigure {
  readonly snapshotMs: number;
  readonly writeMs: number;
  readonly bytes: number;
}

type Pieces = Iterator<string | Uint8Array | symbol>;

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function measure(take: () => () => Pieces): PartFigure {
  let pieces: () => Pieces = () => [][Symbol.iterator]();
  const snapshotMs = cpuMs(() => (pieces = take()));
  let bytes = 0;
  const writeMs = cpuMs(() => {
    const it = pieces();
    for (let next = it.next(); next.done !== true; next = it.next()) {
      const piece = next.value;
      if (typeof piece === 'string') bytes += piece.length;
      else if (piece instanceof Uint8Array) bytes += piece.byteLength;
    }
  });
  return { snapshotMs, writeMs, bytes };
}

/** The best of `rounds` runs of each part (the machine is shared: the least disturbed run). */
function best(figures: readonly PartFigure[]): PartFigure {
  return {
    snapshotMs: Math.min(...figures.map((f) => f.snapshotMs)),
    writeMs: Math.min(...figures.map((f) => f.writeMs)),
    bytes: figures[0]!.bytes,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--profile');
  const profileDir = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1] : undefined;
  const [agents = 1000, perAgent = 20] = args.map(Number);
  progress(`reads-parts: building ${agents} agents with ${perAgent} tasks each`);
  const { cluster } = bigCluster(agents, perAgent);
  const view = cluster.view;
  const session = new Session();
  if (profileDir !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const parts: Record<string, () => () => Pieces> = {
    state: () => {
      const s = snapshotState(view);
      return () => s.pieces();
    },
    getStateJson: () => {
      const s = snapshotGetState(view);
      return () => s.json();
    },
    getStateProto: () => {
      const s = snapshotGetState(view);
      return () => s.proto();
    },
  };
  const row: Record<string, unknown> = { agents, tasks: agents * perAgent };
  for (const [name, take] of Object.entries(parts)) {
    if (only !== undefined && name !== only) continue;
    progress(`reads-parts: ${name}`);
    row[name] = best([0, 1, 2].map(() => measure(take)));
  }
  if (profileDir !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(profileDir, { recursive: true });
    writeFileSync(`${profileDir}/CPU.reads.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
