/**
 * The scale part of `npm run bench`: one child process per cluster size
 * (`scale.ts --one`), so that each row's RSS is its own, and a table.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReadFigure, ScaleRow } from './scale.js';
import { num, progress, table } from './stats.js';

/** Sizes above this many agents bind 0.0.0.0: a socket per agent address would pass the file descriptor limit. */
const SOCKET_PER_AGENT_MAX = 15_000;

export function runScaleSize(agents: number, tasksPerAgent: number, concurrency: number): ScaleRow | string {
  const wildcard = agents > SOCKET_PER_AGENT_MAX ? 1 : 0;
  const script = fileURLToPath(new URL('./scale.ts', import.meta.url));
  const child = spawnSync(
    process.execPath,
    [
      '--max-old-space-size=8192',
      '--import',
      'tsx',
      script,
      '--one',
      String(agents),
      String(tasksPerAgent),
      String(concurrency),
      String(wildcard),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !line.startsWith('{'))
    return `${num(agents)} agents: the run failed (exit ${String(child.status ?? child.signal)})`;
  return JSON.parse(line) as ScaleRow;
}

const read = (f: ReadFigure): string => `${num(f.firstByteMs)} / ${num(f.totalMs)} ms, ${num(f.bytes / 1e6, 1)} MB`;

function rowsTable(rows: readonly ScaleRow[]): string {
  return table(
    [
      'agents',
      'tasks',
      'start ms',
      'launch tasks/s',
      '/state first / last',
      '/tasks?limit=100',
      'GET_STATE first / last',
      'GET_STATE protobuf',
      'GET_TASKS',
      'GET_TASKS protobuf',
      'RSS held MB',
      'RSS after reads MB',
      'heap MB',
      'heap KB/agent',
      'heap B/task',
      'failover ms',
    ],
    rows.map((r) => [
      num(r.agents),
      num(r.tasks),
      num(r.startMs),
      num(r.tasks / (r.launchMs / 1000)),
      read(r.state),
      `${num(r.tasksPage.totalMs)} ms`,
      read(r.getState),
      read(r.getStateProto),
      read(r.getTasks),
      read(r.getTasksProto),
      num(r.heldRssBytes / 1e6),
      num(r.rssBytes / 1e6),
      num(r.heapBytes / 1e6),
      num(r.heapBytes / r.agents / 1024, 1),
      num(r.heapBytes / Math.max(1, r.tasks)),
      r.failoverMs === undefined ? `not all back (${num(r.reregistered)})` : num(r.failoverMs),
    ]),
  );
}

export function benchScalePart(sizes: readonly number[], tasksPerAgent: number, concurrency: number): string[] {
  const rows: ScaleRow[] = [];
  const failures: string[] = [];
  for (const agents of sizes) {
    progress(`scale: ${num(agents)} agents, ${num(agents * tasksPerAgent)} tasks`);
    const row = runScaleSize(agents, tasksPerAgent, concurrency);
    if (typeof row === 'string') failures.push(row);
    else rows.push(row);
  }
  return [
    '',
    `9. scale: clusters in virtual time through the library and HTTP, two masters; ${tasksPerAgent} long tasks launched into each agent's offer`,
    `through the scheduler API (one ACCEPT per offer, ${concurrency} in flight); reads as time to first byte / last byte (the operator's calls in JSON unless`,
    `marked protobuf; SCALE_READ_ROUNDS=N keeps each read's fastest of N); RSS (held: before the reads) and heap`,
    `(after full collections) of the whole process over its start, and the heap divided by agents and by tasks; failover: the leader crashes and the other`,
    `master leads with every agent re-registered with its tasks (wall time, the 10 s election delay passing in virtual time);`,
    `agents above ${num(SOCKET_PER_AGENT_MAX)} listen on 0.0.0.0 (one socket), below on 127.0.0.1 (a socket per agent address)`,
    rowsTable(rows),
    ...failures,
  ];
}
