/**
 * The failover alone under the CPU profiler: builds the cluster as
 * failover.ts does, then profiles only the crash and re-registration.
 *
 *   npx tsx test/bench/failover-profile.ts AGENTS TASKS_PER_AGENT OUT.cpuprofile [INVARIANTS(0|1)]
 *   npx tsx test/bench/profile-summary.ts OUT.cpuprofile 40
 *
 * OUT `-`: no profiler, only the row with the failover's process CPU time
 * (`cpuMs`, steadier than wall time on a shared machine).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { buildFailover, timeFailover } from './failover.js';

const [agents, tasksPerAgent] = process.argv.slice(2, 4).map(Number);
const out = process.argv[4] ?? 'failover.cpuprofile';
const o = { agents: agents!, tasksPerAgent: tasksPerAgent!, checkInvariants: process.argv[5] !== '0' };
const built = buildFailover(o);
const session = new Session();
if (out !== '-') {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const cpu0 = process.cpuUsage();
const row = timeFailover(o, built);
const cpu = process.cpuUsage(cpu0);
if (out !== '-') {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
}
process.stdout.write(`${JSON.stringify({ ...row, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
