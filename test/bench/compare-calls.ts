/**
 * One side of the `compare` calls part, run in a fresh process per round:
 * `tsx compare-calls.ts <dist/index.js> <warm-up ms> <measured ms> <connections>`
 * drives DECLINE/ACCEPT calls at a cluster started from that build and then
 * at the bare fastify route (scheduler-calls.ts, each server on a worker
 * thread of its own), and prints both rates as one JSON line on stdout.
 */
import { pathToFileURL } from 'node:url';
import { benchSchedulerCalls } from './scheduler-calls.js';

export interface CallsSample {
  readonly clusterCallsPerSecond: number[];
  readonly bareCallsPerSecond: number[];
  readonly ratio: number[];
  readonly clusterCpuUsPerCall: number[];
}

async function main(): Promise<void> {
  const [library, ...numbers] = process.argv.slice(2);
  const [warmupMs, durationMs, connections] = numbers.map(Number);
  if (library === undefined || !(warmupMs! >= 0 && durationMs! > 0 && connections! > 0))
    throw new Error('usage: compare-calls.ts <dist/index.js> <warm-up ms> <measured ms> <connections>');
  const options = { warmupMs: warmupMs!, durationMs: durationMs!, connections: connections! };
  const calls = await benchSchedulerCalls(options, { offers: true, launches: undefined, library });
  const cluster = calls.offers!.result;
  const sample: CallsSample = {
    clusterCallsPerSecond: [cluster.callsPerSecond],
    bareCallsPerSecond: [calls.bare.callsPerSecond],
    ratio: [cluster.callsPerSecond / calls.bare.callsPerSecond],
    clusterCpuUsPerCall: [cluster.cpuUsPerCall],
  };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
