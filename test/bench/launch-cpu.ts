/**
 * The launch phase alone, by CPU time: a cluster in virtual time, one
 * framework through HTTP, every offer accepted with `TASKS_PER_AGENT` long
 * tasks (`CONCURRENCY` calls in flight), as `scale.ts` does. Prints one JSON
 * row: wall ms and process CPU ms (user + system, server and client in one
 * process) of the ACCEPT phase, tasks per CPU second, and the heap held per
 * task once the tasks run (after full collections; the idle cluster's heap
 * taken off). With `--profile DIR` the ACCEPT phase alone is profiled into
 * DIR/launch.cpuprofile (summarise with profile-summary.ts).
 *
 *   npx tsx test/bench/launch-cpu.ts AGENTS TASKS_PER_AGENT CONCURRENCY [--profile DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { collector } from './agents.js';
import { advanceUntil, clusterWithOffers, launchAll, runningTasks } from './scale.js';

async function profiled<T>(dir: string | undefined, run: () => Promise<T>): Promise<T> {
  if (dir === undefined) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  const result = await run();
  const { profile } = await session.post('Profiler.stop');
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/launch.cpuprofile`, JSON.stringify(profile));
  session.disconnect();
  return result;
}

async function main(): Promise<void> {
  const [agents, tasksPerAgent, concurrency] = process.argv.slice(2, 5).map(Number);
  const at = process.argv.indexOf('--profile');
  const dir = at > 0 ? process.argv[at + 1] : undefined;
  const gc = collector();
  const { cluster, fw } = await clusterWithOffers(agents!);
  try {
    const o = { agents: agents!, tasksPerAgent: tasksPerAgent!, concurrency: concurrency!, wildcard: false };
    gc();
    const heap0 = process.memoryUsage().heapUsed;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const launch = await profiled(dir, () => launchAll(fw, fw.offers!, o));
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const tasks = (fw.offers!.length - launch.refused) * o.tasksPerAgent;
    advanceUntil(cluster, () => runningTasks(cluster) >= tasks, 1_000, 60_000);
    gc();
    const heapPerTask = (process.memoryUsage().heapUsed - heap0) / tasks;
    const row = {
      agents,
      tasks,
      refused: launch.refused,
      wallMs: Math.round(wallMs),
      cpuMs: Math.round(cpuMs),
      tasksPerCpuSecond: Math.round(tasks / (cpuMs / 1000)),
      heapBytesPerTask: Math.round(heapPerTask),
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
  } finally {
    await cluster.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
