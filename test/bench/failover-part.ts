/**
 * The failover part of `npm run bench` (run only when named): one child
 * process per cluster size (`failover.ts --one`), each building its
 * cluster in the core and timing the master failover, and a table.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FailoverRow } from './failover.js';
import { num, progress, table } from './stats.js';

export function runFailoverSize(agents: number, tasksPerAgent: number): FailoverRow | string {
  const script = fileURLToPath(new URL('./failover.ts', import.meta.url));
  const child = spawnSync(
    process.execPath,
    ['--max-old-space-size=12288', '--import', 'tsx', script, '--one', String(agents), String(tasksPerAgent)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !line.startsWith('{'))
    return `${num(agents)} agents: the run failed (exit ${String(child.status ?? child.signal)})`;
  return JSON.parse(line) as FailoverRow;
}

export function benchFailoverPart(sizes: readonly number[], tasksPerAgent: number): string[] {
  const rows: FailoverRow[] = [];
  const failures: string[] = [];
  for (const agents of sizes) {
    progress(`failover: ${num(agents)} agents, ${num(agents * tasksPerAgent)} tasks`);
    const row = runFailoverSize(agents, tasksPerAgent);
    if (typeof row === 'string') failures.push(row);
    else rows.push(row);
  }
  return [
    '',
    `10. master failover in the core (no HTTP): two masters, ${tasksPerAgent} long tasks running on each agent, updates unacknowledged;`,
    'the leader crashes and the other leads with every agent re-registered and every task known again (wall time; the',
    '10 s election delay passes in virtual time); build: the wall time to set the cluster up through core inputs',
    table(
      ['agents', 'tasks', 'build ms', 'failover ms', 'virtual ms', 'agents back', 'tasks back', 'heap MB'],
      rows.map((r) => [
        num(r.agents),
        num(r.tasks),
        num(r.buildMs),
        num(r.failoverMs),
        num(r.virtualMs),
        num(r.reregistered),
        num(r.tasksBack),
        num(r.heapMB),
      ]),
    ),
    ...failures,
  ];
}
