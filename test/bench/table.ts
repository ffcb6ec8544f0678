/**
 * `npm run bench -- table`: every figure the speed work is judged by, in
 * one table beside its target, each measured as the part that owns it
 * measures it (the command on each row runs that part alone):
 *
 *   - a small cluster's start, 20 runs in this process (startup.ts);
 *   - scheduler calls and launches over HTTP against a bare fastify route
 *     (scheduler-calls.ts, with the calls and launches parts' settings);
 *   - 10,000 agents x 40 tasks launched through HTTP, then `/state` in the
 *     same process, and its RSS (scale.ts, a child process);
 *   - a master failover of 40,000 agents and 400,000 tasks in the core
 *     (failover.ts, a child process);
 *   - 50,000 agents x 20 tasks held, and GET_STATE of them (scale.ts);
 *     `BENCH_TABLE_LARGE=0` leaves this row out (it needs 5 GB of memory).
 *
 * Sizes and their targets are the issue's; the figures vary with the
 * machine's load, so a row says which way is better, never pass or fail.
 */
import { runFailoverSize } from './failover-part.js';
import { runScaleSize } from './scale-part.js';
import type { ScaleRow } from './scale.js';
import { benchSchedulerCalls } from './scheduler-calls.js';
import { benchStartup } from './startup.js';
import { num, progress, table } from './stats.js';

interface Figure {
  readonly figure: string;
  readonly now: string;
  readonly target: string;
  readonly command: string;
}

const CALLS = { connections: 12, warmupMs: 2_000, durationMs: 3_000 } as const;
const LAUNCHES = {
  agents: 100,
  agentResources: 'cpus:1;mem:256',
  allocationIntervalSeconds: 0.05,
  task: { command: 'sleep 0.01', cpus: 0.1, mem: 32 },
} as const;

const ms = (value: number): string => `${num(value, 1)} ms`;
const mb = (bytes: number): string => `${num(bytes / 1e6)} MB`;

async function startFigures(): Promise<Figure[]> {
  const start = await benchStartup(20);
  return [
    {
      figure: 'startCluster({ agents: 3 }), 20 runs, median to resolve / to the first OFFERS',
      now: `${ms(start.startClusterMs.median)} / ${ms(start.toFirstOffersMs.median)}`,
      target: '<= 10 ms / <= 15 ms',
      command: 'npm run bench -- startup',
    },
  ];
}

async function callFigures(): Promise<Figure[]> {
  const calls = await benchSchedulerCalls(CALLS, { offers: true, launches: LAUNCHES });
  const bare = calls.bare.callsPerSecond;
  const ratio = (rate: number) => `${num(rate / bare, 2)} (${num(rate)} / ${num(bare)})`;
  const offers = calls.offers?.result.callsPerSecond ?? Number.NaN;
  const launches = calls.launches?.result.callsPerSecond ?? Number.NaN;
  return [
    {
      figure: 'DECLINE/ACCEPT calls/s over a bare fastify route',
      now: ratio(offers),
      target: '>= 0.8',
      command: 'npm run bench -- calls',
    },
    {
      figure: 'launches (ACCEPT + LAUNCH + ACKNOWLEDGEs) calls/s over the same',
      now: ratio(launches),
      target: '>= 0.35',
      command: 'npm run bench -- launches',
    },
  ];
}

function scaleRow(agents: number, tasksPerAgent: number): ScaleRow | undefined {
  progress(`table: ${num(agents)} agents, ${num(agents * tasksPerAgent)} tasks through HTTP`);
  const row = runScaleSize(agents, tasksPerAgent, 8);
  if (typeof row !== 'string') return row;
  progress(`table: ${row}`);
  return undefined;
}

function launchFigures(): Figure[] {
  const row = scaleRow(10_000, 40);
  const command = 'BENCH_SCALE_AGENTS=10000 BENCH_SCALE_TASKS_PER_AGENT=40 npm run bench -- scale';
  return [
    {
      figure: '10,000 agents x 40 tasks through HTTP from the library, tasks/s',
      now: row === undefined ? 'failed' : num(row.tasks / (row.launchMs / 1000)),
      target: '>= 20,000',
      command,
    },
    {
      figure: 'then /state in the same process, to the last byte',
      now: row === undefined ? 'failed' : `${ms(row.state.totalMs)} (${num(row.state.bytes / 1e6)} MB)`,
      target: '<= 1,500 ms',
      command,
    },
    {
      figure: 'RSS over the start: the tasks running / after the reads',
      now: row === undefined ? 'failed' : `${mb(row.heldRssBytes)} / ${mb(row.rssBytes)}`,
      target: '<= 2,000 MB',
      command,
    },
  ];
}

function failoverFigures(): Figure[] {
  progress('table: master failover of 40,000 agents and 400,000 tasks in the core');
  const row = runFailoverSize(40_000, 10);
  return [
    {
      figure: 'master failover, 40,000 agents and 400,000 tasks re-registered (the core)',
      now: typeof row === 'string' ? row : ms(row.failoverMs),
      target: '<= 2,000 ms',
      command: 'BENCH_FAILOVER_AGENTS=40000 npm run bench -- failover',
    },
  ];
}

function largeFigures(): Figure[] {
  const row = scaleRow(50_000, 20);
  const command = 'BENCH_SCALE_AGENTS=50000 BENCH_SCALE_TASKS_PER_AGENT=20 npm run bench -- scale';
  return [
    {
      figure: '50,000 agents + 1,000,000 tasks held: RSS over the start, the tasks running',
      now: row === undefined ? 'failed' : mb(row.heldRssBytes),
      target: '<= 4,000 MB',
      command,
    },
    {
      figure: 'GET_STATE JSON at 50,000 agents / 1,000,000 tasks, to the last byte',
      now: row === undefined ? 'failed' : `${ms(row.getState.totalMs)} (${num(row.getState.bytes / 1e6)} MB)`,
      target: '<= 5,000 ms',
      command,
    },
  ];
}

export async function benchTablePart(): Promise<string[]> {
  const figures = [...(await startFigures()), ...(await callFigures()), ...launchFigures(), ...failoverFigures()];
  if (process.env.BENCH_TABLE_LARGE !== '0') figures.push(...largeFigures());
  return [
    '',
    '12. the figures of the speed issue, each beside its target (lower is better for times and memory, higher for rates);',
    'each row is measured as the command beside it measures it alone',
    table(
      ['figure', 'now', 'target', 'measured alone by'],
      figures.map((f) => [f.figure, f.now, f.target, f.command]),
    ),
  ];
}
