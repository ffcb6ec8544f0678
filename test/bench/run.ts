/**
 * `npm run bench`: throughput and latency figures for clustersim, printed
 * as plain-text tables. A program, not a test: it never fails on speed,
 * and replies other than 202 are counted and printed, not thrown; it exits
 * non-zero only when it cannot run (a refused subscription, a stalled core).
 *
 *   BENCH_SECONDS        measured seconds per HTTP target (default 3)
 *   BENCH_WARMUP_SECONDS warm-up before each measurement (default 2: clustersim
 *                        needs 1.5 to 3 s of calls before V8 has optimised it)
 *   BENCH_CONNECTIONS    keep-alive connections of the load generator (default 12)
 *   BENCH_STARTUP_RUNS   runs of the time-to-first-offer measurement (default 20)
 *   BENCH_CORE_SECONDS   wall seconds per core workload (default 2)
 *   BENCH_STREAM_EVENTS  events measured per encoding on the event stream (default 300000)
 *   BENCH_STREAM_BATCH   unknown tasks per RECONCILE call, i.e. events per call (default 1000)
 *   BENCH_ONLY           comma-separated subset of calls,startup,core,events (default all),
 *                        e.g. to profile one part with `node --cpu-prof --import tsx`
 */
import os from 'node:os';
import { benchCoreLifecycles, type CoreResult } from './core-lifecycles.js';
import { benchEventCodec, type CodecRow } from './event-codec.js';
import { benchEventPath, type PathResult } from './event-path.js';
import { benchEventStream, type StreamResult } from './event-stream.js';
import { benchSchedulerCalls, type CallsResult } from './scheduler-calls.js';
import { benchStartup, type StartupResult } from './startup.js';
import { num, table } from './stats.js';
import type { LoadResult } from './load.js';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`);
  return value;
}

function callsTable(r: CallsResult): string {
  const row = (name: string, l: LoadResult) => [
    name,
    num(l.calls),
    num(l.callsPerSecond),
    num(l.p50Ms, 2),
    num(l.p99Ms, 2),
    num(l.cpuUsPerCall),
    num(l.warmupCallsPerSecond),
    num(l.errors),
  ];
  const ratio = r.clustersim.callsPerSecond / r.bare.callsPerSecond;
  const lines = [
    table(
      ['target', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'cpu us/call', 'warm-up calls/s', 'errors'],
      [row('clustersim', r.clustersim), row('bare fastify', r.bare)],
    ),
    `ratio clustersim / bare: ${num(ratio, 2)} by calls/s, ${num(r.bare.cpuUsPerCall / r.clustersim.cpuUsPerCall, 2)} by cpu time per call`,
    `clustersim calls on live offers: ${num(r.liveCalls)} of ${num(r.liveCalls + r.staleCalls)} (the rest on offers no longer valid)`,
  ];
  for (const [name, l] of [['clustersim', r.clustersim], ['bare fastify', r.bare]] as const) {
    for (const [status, { count, firstBody }] of l.unexpected) {
      lines.push(`${name}: ${num(count)} x ${status === 0 ? 'no reply' : `status ${status}`}: ${firstBody}`);
    }
  }
  return lines.join('\n');
}

function startupTable(r: StartupResult): string {
  const row = (name: string, s: StartupResult['startClusterMs']) => [name, num(s.min, 1), num(s.median, 1), num(s.p90, 1), num(s.max, 1)];
  return table(['phase (ms)', 'min', 'median', 'p90', 'max'], [
    row('startCluster() to first OFFERS', r.toFirstOffersMs),
    row('startCluster() alone', r.startClusterMs),
  ]);
}

function coreTable(results: readonly CoreResult[]): string {
  const rows = results.map((r) => [
    `invariants ${r.checkInvariants ? 'on' : 'off'}`,
    num(r.lifecycles / r.wallSeconds),
    num(r.events / r.wallSeconds),
    num(r.traceEntries / r.wallSeconds),
    `${num(r.virtualSeconds / r.wallSeconds, 1)}x`,
  ]);
  return table(['core, virtual time', 'tasks/s', 'events/s', 'trace/s', 'virtual/wall'], rows);
}

function codecTable(rows: readonly CodecRow[]): string {
  return table(
    ['event', 'JSON bytes', 'proto bytes', 'JSON enc us', 'proto enc us', 'JSON dec us', 'proto dec us'],
    rows.map((r) => [
      r.event,
      num(r.jsonBytes),
      num(r.protoBytes),
      num(r.jsonEncodeUs, 2),
      num(r.protoEncodeUs, 2),
      num(r.jsonDecodeUs, 2),
      num(r.protoDecodeUs, 2),
    ]),
  );
}

interface EventsResult {
  readonly coreOnly: PathResult;
  readonly framed: readonly [PathResult, PathResult];
  readonly stream: readonly [StreamResult, StreamResult];
}

function streamTable(r: EventsResult): string {
  const [jsonFramed, protoFramed] = r.framed;
  const [json, proto] = r.stream;
  const serverUs = (s: StreamResult) => num((s.serverBusy * 1e6) / s.eventsPerSecond, 1);
  return table(['UPDATE events to one subscriber', 'JSON', 'protobuf'], [
    ['core alone (reconcile, trace), events/s', num(r.coreOnly.eventsPerSecond), '-'],
    ['+ eventToWire, encode, RecordIO frame, events/s', num(jsonFramed.eventsPerSecond), num(protoFramed.eventsPerSecond)],
    ['+ HTTP stream to the reader, events/s', num(json.eventsPerSecond), num(proto.eventsPerSecond)],
    ['HTTP: server thread busy', `${num(json.serverBusy * 100)}%`, `${num(proto.serverBusy * 100)}%`],
    ['HTTP: server thread us per event', serverUs(json), serverUs(proto)],
    ['HTTP: bytes per event (framed)', num(json.bytesPerEvent), num(proto.bytesPerEvent)],
    ['HTTP: MB/s', num((json.eventsPerSecond * json.bytesPerEvent) / 1e6, 1), num((proto.eventsPerSecond * proto.bytesPerEvent) / 1e6, 1)],
  ]);
}

async function benchEvents(measuredEvents: number, batch: number): Promise<string[]> {
  const codec = benchEventCodec();
  const coreOnly = benchEventPath('core', undefined, batch, 2);
  const framed = [benchEventPath('framed', 'json', batch, 2), benchEventPath('framed', 'protobuf', batch, 2)] as const;
  const options = { batch, warmupEvents: Math.max(batch * 20, Math.round(measuredEvents / 5)), measuredEvents };
  const stream = [await benchEventStream('json', options), await benchEventStream('protobuf', options)] as const;
  return [
    '',
    '4. scheduler events: cost per event in each encoding, and events/s to one subscriber',
    'encode and decode per event (us, median of 7 batches), same run for both encodings',
    codecTable(codec),
    '',
    `RECONCILE calls naming ${num(batch)} unknown tasks each (one UPDATE per task); over HTTP, ${num(measuredEvents)} events per`,
    'encoding after a warm-up, read by a lean RecordIO counter on a worker thread; the rows above it run in-process',
    streamTable({ coreOnly, framed, stream }),
  ];
}

const PARTS = ['calls', 'startup', 'core', 'events'] as const;
type Part = (typeof PARTS)[number];

function selectedParts(raw: string | undefined): ReadonlySet<Part> {
  if (raw === undefined || raw.trim() === '') return new Set(PARTS);
  const names = raw.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(PARTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown part(s) ${unknown.join(', ')}; expected ${PARTS.join(', ')}`);
  return new Set(names as Part[]);
}

async function main(): Promise<void> {
  const seconds = envNumber('BENCH_SECONDS', 3);
  const warmupSeconds = envNumber('BENCH_WARMUP_SECONDS', 2);
  const connections = Math.round(envNumber('BENCH_CONNECTIONS', 12));
  const startupRuns = Math.round(envNumber('BENCH_STARTUP_RUNS', 20));
  const coreSeconds = envNumber('BENCH_CORE_SECONDS', 2);
  const streamEvents = Math.round(envNumber('BENCH_STREAM_EVENTS', 300_000));
  const streamBatch = Math.round(envNumber('BENCH_STREAM_BATCH', 1000));

  const only = selectedParts(process.env.BENCH_ONLY);

  const cpus = os.cpus();
  const out = [`clustersim bench: node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()}-${os.arch()}`];
  if (only.has('calls')) {
    const calls = await benchSchedulerCalls({ connections, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000 });
    out.push('', `1. scheduler calls, DECLINE/ACCEPT alternating, ${connections} keep-alive connections, ${seconds} s after ${warmupSeconds} s warm-up`);
    out.push(callsTable(calls));
  }
  if (only.has('startup')) {
    const startup = await benchStartup(startupRuns);
    out.push('', `2. time to first offer, 3 agents, realtime, ${startup.runs} runs`, startupTable(startup));
  }
  if (only.has('core')) {
    const core = [benchCoreLifecycles(coreSeconds, true), benchCoreLifecycles(coreSeconds, false)];
    out.push('', `3. core only, 3 agents, 'sleep 1' tasks of cpus:1;mem:128 into every offer, every update acknowledged, ${coreSeconds} s each`);
    out.push(coreTable(core));
  }
  if (only.has('events')) out.push(...(await benchEvents(streamEvents, streamBatch)));
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
