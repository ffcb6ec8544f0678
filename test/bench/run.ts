/**
 * `npm run bench`: throughput and latency figures for clustersim, printed
 * as plain-text tables. A program, not a test: it never fails on speed,
 * and replies other than 202 are counted and printed, not thrown; it exits
 * non-zero only when it cannot run (a refused subscription, a stalled core).
 *
 * Parts, in the order printed (BENCH_ONLY names them):
 *   calls       1. HTTP scheduler calls/s, DECLINE/ACCEPT on offers mostly no longer valid,
 *                  against a bare fastify route (scheduler-calls.ts)
 *   launches    1. the same table, a row where every ACCEPT launches a task on a live offer
 *                  on a cluster of BENCH_LAUNCH_AGENTS agents (launch-feed.ts); the bare
 *                  route runs with either part. Every server of part 1 runs on a worker
 *                  thread of its own, the load generator on the main thread, so its
 *                  'cpu us/call' is the server thread's CPU time per call (thread-cpu.ts
 *                  says how it is read; the printed line names the source)
 *   startup     2. time from startCluster() to the first OFFERS (startup.ts)
 *   core        3. core task lifecycles/s in virtual time, invariants on and off (core-lifecycles.ts)
 *   events      4. event codec, in-process event path and HTTP event stream (event-*.ts)
 *   invariants  5. core cost per scheduler call on 3 and BENCH_CALL_COST_AGENTS agents,
 *                  invariants on and off (call-cost.ts)
 *   allocator   6. one allocation pass for 1k/10k/50k agents x 10/100/1k frameworks, with
 *                  quota, weights, refuse filters, suppression and ports in play, and a core
 *                  Cluster of 10,000 agents subscribing 100 frameworks (allocator.ts)
 *   agents      7. startCluster() time and heap per idle agent for 100, 1,000 and 10,000
 *                  agents, loopback and ports addressing (agents.ts)
 *   virtual-day 8. virtual-time speed: 24 h of a 10,000-agent cluster, 100,000 task lifecycles,
 *                  a fault every virtual minute, the core alone (virtual-day.ts)
 *   scale       9. clusters of 1k, 10k and 50k agents through the library and HTTP: start, ACCEPT+LAUNCH
 *                  throughput, /state, /tasks, GET_STATE and GET_TASKS (JSON, protobuf), RSS and heap per agent
 *                  and task, master
 *                  failover (scale.ts, a child process per size); run only when named (`npm run bench -- scale`)
 *   failover   10. master failover of 10k and 40k agents with their tasks, the cluster built in the core
 *                  (failover.ts, a child process per size); run only when named (`npm run bench -- failover`)
 *   chaos      11. schedules/s of `clustersim chaos` on scenarios/resilient-service.yaml with 1 and 2 workers
 *                  (chaos.ts); run only when named (`npm run bench -- chaos`)
 *   table      12. the speed issue's figures beside their targets: start, call ratios, 10k x 40 launch and reads,
 *                  40k failover, 50k x 20 held (table.ts; BENCH_TABLE_LARGE=0 skips the last); run only when named
 *   compare        `npm run bench -- compare <git-ref> [start] [calls]`: the figures of the current work tree
 *                  and of a commit, each built into its own dist, measured interleaved in one run, with their
 *                  ratio: start (the default) as part 2, calls as part 1's DECLINE/ACCEPT row (compare.ts says
 *                  how; BENCH_COMPARE_ROUNDS, BENCH_COMPARE_CALLS_ROUNDS; another lockfile gets `npm ci`)
 *
 *   BENCH_SECONDS          measured seconds per HTTP target (default 3)
 *   BENCH_WARMUP_SECONDS   warm-up before each measurement (default 2: clustersim
 *                          needs 1.5 to 3 s of calls before V8 has optimised it)
 *   BENCH_CONNECTIONS      keep-alive connections of the load generator (default 12)
 *   BENCH_LAUNCH_AGENTS    agents for the launches row (default 100): each yields about one
 *                          offer per allocation interval, so agents / interval must outnumber
 *                          the ACCEPTs per second; the printed count of stale ACCEPTs shows when not
 *   BENCH_LAUNCH_ALLOCATION_INTERVAL  allocation interval of the launches row, seconds (default 0.05)
 *   BENCH_LAUNCH_COMMAND   command of the launched tasks (default 'sleep 0.01')
 *   BENCH_STARTUP_RUNS     runs of the time-to-first-offer measurement (default 20)
 *   BENCH_CORE_SECONDS     wall seconds per core workload, and seconds of timed calls per
 *                          call-cost measurement (default 2)
 *   BENCH_CALL_COST_AGENTS the large cluster of the call-cost part (default 10000)
 *   BENCH_STREAM_EVENTS    events measured per encoding on the event stream (default 300000)
 *   BENCH_STREAM_BATCH     unknown tasks per RECONCILE call, i.e. events per call (default 1000)
 *   BENCH_ALLOCATOR_AGENTS      agent counts of the allocator part (default 1000,10000,50000)
 *   BENCH_ALLOCATOR_FRAMEWORKS  framework counts of the allocator part (default 10,100,1000)
 *   BENCH_ALLOCATOR_FILTERED_MAX  largest agents x frameworks whose filtered state is built
 *                          (default 1000000: it takes that many declines)
 *   BENCH_AGENTS           agent counts of the agents part (default 100,1000,10000)
 *   BENCH_AGENTS_PORTS_MAX largest count started with a port per agent too (default 1000)
 *   BENCH_AGENTS_WILDCARD  1: rows of loopback addressing on host 0.0.0.0 (one socket for all
 *                          agents) too; they listen on every interface while they run (default 0)
 *   BENCH_DAY_AGENTS       agents of the virtual-day part (default 10000)
 *   BENCH_DAY_HOURS        virtual hours of the virtual-day part (default 24; the task count scales with it)
 *   BENCH_DAY_INVARIANTS   0: the virtual-day part with invariant checks off (default 1)
 *   BENCH_SCALE_AGENTS     agent counts of the scale part (default 1000,10000,50000)
 *   BENCH_SCALE_TASKS_PER_AGENT  long tasks launched into each agent (default 20)
 *   BENCH_SCALE_CONCURRENCY      ACCEPT calls in flight (default 8)
 *   SCALE_READ_ROUNDS      the scale part's reads made this many times in turn, each one's fastest kept (default 1)
 *   SCALE_READS_PROFILE    a directory: the scale part writes a CPU profile of its reads there
 *   BENCH_FAILOVER_AGENTS  agent counts of the failover part (default 10000,40000)
 *   BENCH_FAILOVER_TASKS_PER_AGENT  long tasks running on each agent (default 10)
 *   BENCH_CHAOS_RUNS       schedules per row of the chaos part (default 32: a worker process takes about a second to start)
 *   BENCH_ONLY             comma-separated subset of calls,launches,startup,core,events,invariants,allocator,agents,
 *                          virtual-day (default all; `npm run bench -- <part>...` names them too), e.g. to profile
 *                          one part with `node --cpu-prof --import tsx` (the server threads of part 1 inherit the
 *                          flag and write profiles of their own)
 */
import os from 'node:os';
import { benchAgents, type AgentsRow } from './agents.js';
import { allocatorTables, benchAllocator, benchCoreScaling } from './allocator.js';
import { benchCallCost, CALL_TYPES, type CallCostResult } from './call-cost.js';
import { benchCoreLifecycles, type CoreResult } from './core-lifecycles.js';
import { benchEventCodec, type CodecRow } from './event-codec.js';
import { benchEventPath, type PathResult } from './event-path.js';
import { benchEventStream, type StreamResult } from './event-stream.js';
import { benchSchedulerCalls, type CallsResult, type LaunchResult, type TargetResult } from './scheduler-calls.js';
import { benchStartup, type StartupResult } from './startup.js';
import { runVirtualDay, VIRTUAL_DAY, virtualDayLines } from './virtual-day.js';
import { benchScalePart } from './scale-part.js';
import { benchFailoverPart } from './failover-part.js';
import { benchChaosPart } from './chaos.js';
import { benchTablePart } from './table.js';
import { runCompare } from './compare.js';
import { CompareError } from './compare-tree.js';
import { num, progress, table } from './stats.js';
import type { ThreadWindow } from './thread-cpu.js';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`);
  return value;
}

function loadRow(name: string, l: TargetResult): string[] {
  return [
    name,
    num(l.calls),
    num(l.callsPerSecond),
    num(l.p50Ms, 2),
    num(l.p99Ms, 2),
    num(l.cpuUsPerCall),
    num(l.warmupCallsPerSecond),
    num(l.errors),
  ];
}

function ratioLine(name: string, l: TargetResult, bare: TargetResult): string {
  const byRate = num(l.callsPerSecond / bare.callsPerSecond, 2);
  return `ratio ${name} / bare: ${byRate} by calls/s, ${num(bare.cpuUsPerCall / l.cpuUsPerCall, 2)} by cpu time per call`;
}

function launchLines(l: LaunchResult): string[] {
  const accepts = l.liveCalls + l.staleCalls;
  const { agents, agentResources, task } = l.options;
  return [
    `launches: ${num(agents)} agents of ${agentResources}, allocation interval ${l.options.allocationIntervalSeconds} s (started in ${num(l.startSeconds, 1)} s), one '${task.command}' task of cpus:${task.cpus};mem:${task.mem} per ACCEPT`,
    `launches, whole run: ACCEPTs on live offers ${num(l.liveCalls)} of ${num(accepts)}, on stale offers ${num(l.staleCalls)};` +
      ` ACKNOWLEDGEs ${num(l.ackCalls)}; tasks finished ${num(l.finished)}; other updates ${num(l.otherUpdates)}`,
    `launches: offers held at most ${num(l.mostHeld)}, at the end ${num(l.heldAtEnd)} (above zero: offers kept up with the calls)`,
    `launches, the master when the window closed: ${num(l.masterAtEnd?.offers ?? Number.NaN)} offers outstanding, ${num(l.masterAtEnd?.tasks ?? Number.NaN)} tasks active`,
  ];
}

/**
 * Whether a rate is the server's limit or the load generator's (the thread
 * nearer 100% busy sets it), and whether other work on the machine took
 * cores from them (time waiting for a core; then the rates are low).
 */
function threadLine(name: string, l: TargetResult): string {
  const { server, loadThread } = l;
  const waited = (w: ThreadWindow) =>
    w.waitUs === undefined ? '' : `, waited for a core ${num(w.waitUs / 1e4 / w.seconds)}%`;
  return (
    `${name}: server thread busy ${num(server.busy * 100)}%${waited(server)};` +
    ` load generator thread busy ${num(loadThread.busy * 100)}%${waited(loadThread)}, ${num(loadThread.cpuUs / l.calls)} us of its CPU per call`
  );
}

function callsTable(r: CallsResult): string {
  const measured: [string, TargetResult][] = [];
  if (r.offers !== undefined) measured.push(['clustersim, DECLINE/ACCEPT', r.offers.result]);
  if (r.launches !== undefined) measured.push(['clustersim, launches', r.launches.result]);
  measured.push(['bare fastify', r.bare]);
  const lines = [
    table(
      ['target', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'cpu us/call', 'warm-up calls/s', 'errors'],
      measured.map(([name, l]) => loadRow(name, l)),
    ),
  ];
  if (r.offers !== undefined) {
    const { liveCalls, staleCalls } = r.offers;
    lines.push(ratioLine('DECLINE/ACCEPT', r.offers.result, r.bare));
    lines.push(
      `DECLINE/ACCEPT calls on live offers: ${num(liveCalls)} of ${num(liveCalls + staleCalls)} (the rest on offers no longer valid)`,
    );
  }
  if (r.launches !== undefined)
    lines.push(ratioLine('launches', r.launches.result, r.bare), ...launchLines(r.launches));
  lines.push(...measured.map(([name, l]) => threadLine(name, l)));
  for (const [name, l] of measured) {
    for (const [status, { count, firstBody }] of l.unexpected) {
      lines.push(`${name}: ${num(count)} x ${status === 0 ? 'no reply' : `status ${status}`}: ${firstBody}`);
    }
  }
  return lines.join('\n');
}

function callCostTables(results: readonly CallCostResult[]): string {
  const sizes = [...new Set(results.map((r) => r.agents))];
  const find = (agents: number, on: boolean) => results.find((r) => r.agents === agents && r.checkInvariants === on);
  const rows = sizes.map((agents) => {
    const on = find(agents, true);
    const off = find(agents, false);
    const setup = `${num(on?.setupSeconds ?? Number.NaN, 1)} / ${num(off?.setupSeconds ?? Number.NaN, 1)}`;
    const share = on !== undefined && off !== undefined ? num(on.meanUs / off.meanUs, 2) : '-';
    return [
      num(agents),
      setup,
      num(on?.calls ?? Number.NaN),
      num(on?.meanUs ?? Number.NaN, 1),
      num(off?.meanUs ?? Number.NaN, 1),
      share,
    ];
  });
  const byType = results
    .filter((r) => r.checkInvariants)
    .map((r) => [`${num(r.agents)}, invariants on`, ...CALL_TYPES.map((t) => num(r.byType.get(t) ?? Number.NaN, 1))]);
  const [small, large] = [find(sizes[0]!, true), find(sizes[sizes.length - 1]!, true)];
  const ratio = small !== undefined && large !== undefined ? `${num(large.meanUs / small.meanUs, 2)}x` : '-';
  return [
    table(
      ['agents', 'setup s (on / off)', 'calls (on)', 'us/call, invariants on', 'us/call, invariants off', 'on / off'],
      rows,
    ),
    `ratio ${num(large?.agents ?? Number.NaN)} / ${num(small?.agents ?? Number.NaN)} agents, invariants on: ${ratio} per call`,
    '',
    table(['us per call, by type', ...CALL_TYPES], byType),
  ].join('\n');
}

function startupTable(r: StartupResult): string {
  const row = (name: string, s: StartupResult['startClusterMs']) => [
    name,
    num(s.min, 1),
    num(s.median, 1),
    num(s.p90, 1),
    num(s.max, 1),
  ];
  return table(
    ['phase (ms)', 'min', 'median', 'p90', 'max'],
    [row('startCluster() to first OFFERS', r.toFirstOffersMs), row('startCluster() alone', r.startClusterMs)],
  );
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
  return table(
    ['UPDATE events to one subscriber', 'JSON', 'protobuf'],
    [
      ['core alone (reconcile, trace), events/s', num(r.coreOnly.eventsPerSecond), '-'],
      [
        '+ eventToWire, encode, RecordIO frame, events/s',
        num(jsonFramed.eventsPerSecond),
        num(protoFramed.eventsPerSecond),
      ],
      ['+ HTTP stream to the reader, events/s', num(json.eventsPerSecond), num(proto.eventsPerSecond)],
      ['HTTP: server thread busy', `${num(json.serverBusy * 100)}%`, `${num(proto.serverBusy * 100)}%`],
      ['HTTP: server thread us per event', serverUs(json), serverUs(proto)],
      ['HTTP: bytes per event (framed)', num(json.bytesPerEvent), num(proto.bytesPerEvent)],
      [
        'HTTP: MB/s',
        num((json.eventsPerSecond * json.bytesPerEvent) / 1e6, 1),
        num((proto.eventsPerSecond * proto.bytesPerEvent) / 1e6, 1),
      ],
    ],
  );
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

const PARTS = [
  'calls',
  'launches',
  'startup',
  'core',
  'invariants',
  'events',
  'allocator',
  'agents',
  'virtual-day',
  'scale',
  'failover',
  'chaos',
  'table',
] as const;
/** Parts run only when named: the scale part takes tens of minutes at its largest size, the failover and chaos parts minutes. */
const NAMED_ONLY: readonly string[] = ['scale', 'failover', 'chaos', 'table'];
type Part = (typeof PARTS)[number];

function selectedParts(raw: string | undefined): ReadonlySet<Part> {
  if (raw === undefined || raw.trim() === '') return new Set(PARTS.filter((p) => !NAMED_ONLY.includes(p)));
  const names = raw.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(PARTS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`unknown bench part(s) ${unknown.join(', ')}; expected ${PARTS.join(', ')}`);
  return new Set(names as Part[]);
}

async function benchCalls(only: ReadonlySet<Part>, seconds: number, warmupSeconds: number): Promise<string[]> {
  const connections = Math.round(envNumber('BENCH_CONNECTIONS', 12));
  const agents = Math.round(envNumber('BENCH_LAUNCH_AGENTS', 100));
  const allocationIntervalSeconds = envNumber('BENCH_LAUNCH_ALLOCATION_INTERVAL', 0.05);
  const command = process.env.BENCH_LAUNCH_COMMAND?.trim() || 'sleep 0.01';
  const task = { command, cpus: 0.1, mem: 32 };
  const launches = only.has('launches')
    ? { agents, agentResources: 'cpus:1;mem:256', allocationIntervalSeconds, task }
    : undefined;
  const options = { connections, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000 };
  const calls = await benchSchedulerCalls(options, { offers: only.has('calls'), launches });
  return [
    '',
    `1. scheduler calls, ${connections} keep-alive connections, ${seconds} s after ${warmupSeconds} s warm-up each`,
    'DECLINE/ACCEPT: DECLINE and ACCEPT (no operations) alternating on 3 agents, almost all on offers no longer valid;',
    'launches: every ACCEPT launches a task on a live offer, every update acknowledged (3 ACKNOWLEDGEs per task);',
    'each server runs on a worker thread of its own, the load generator (undici, scheduler client, feeds) on the main thread;',
    `cpu us/call: CPU time of the server's thread alone in the window, per call, read from ${calls.cpuSource}`,
    callsTable(calls),
  ];
}

function benchInvariants(seconds: number): string[] {
  const agents = Math.round(envNumber('BENCH_CALL_COST_AGENTS', 10_000));
  const results = [3, agents].flatMap((n) => benchCallCost(n, seconds));
  return [
    '',
    `5. core only, scheduler call cost with invariants on and off, 3 and ${num(agents)} agents of cpus:1;mem:256, ${seconds} s of calls each`,
    'one framework; per task: ACCEPT (LAUNCH), ACKNOWLEDGE x2, RECONCILE of 3 tasks, KILL, ACKNOWLEDGE, then DECLINE of another offer;',
    'no call runs an allocation pass inline (those run untimed when offers run out); outbox drained after every call;',
    'invariants on and off measured in turns, 10 slices each',
    callCostTables(results),
  ];
}

function envList(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  return raw.split(',').map((part) => {
    const value = Number(part.trim());
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must list positive integers, got '${raw}'`);
    return value;
  });
}

function benchAllocatorPart(): string[] {
  const agents = envList('BENCH_ALLOCATOR_AGENTS', [1000, 10_000, 50_000]);
  const frameworks = envList('BENCH_ALLOCATOR_FRAMEWORKS', [10, 100, 1000]);
  const filteredMax = envNumber('BENCH_ALLOCATOR_FILTERED_MAX', 1_000_000);
  const rows = benchAllocator(agents, frameworks, filteredMax);
  const core = benchCoreScaling(10_000, 100);
  return [
    '',
    '6. allocator alone, one pass (ms, offers made): agents of cpus:4;mem:8192;disk:16384;ports:[31000-32000] (a tenth',
    'with cpus and mem reserved), frameworks in 10 roles (role0 and role1 with quota limits, role3 and role4 weighted,',
    'a tenth suppressed). first: all free; quiet: nothing changed; work: a tenth of the offers declined;',
    'filtered: every offer declined for an hour after 90% of the frameworks had filtered every agent (built only',
    `up to ${num(filteredMax)} agents x frameworks); revive: then one of them revives`,
    allocatorTables(rows),
    '',
    `core Cluster, invariants on: 10,000 agents added one by one in ${num(core.agentsMs)} ms, then 100 frameworks subscribed in ${num(core.subscribeMs)} ms`,
  ];
}

function agentsTable(rows: readonly AgentsRow[]): string {
  return table(
    ['agents', 'addressing', 'startCluster() ms', 'heap KB per agent', 'over 0 agents, KB/agent', 'last agent /health'],
    rows.map((r) => [
      num(r.agents),
      r.addressing,
      num(r.startMs),
      num(r.heapPerAgent / 1024, 2),
      num(r.marginalPerAgent / 1024, 2),
      String(r.lastAgentHealth),
    ]),
  );
}

async function benchAgentsPart(): Promise<string[]> {
  const counts = envList('BENCH_AGENTS', [100, 1000, 10_000]);
  const portsMax = Math.round(envNumber('BENCH_AGENTS_PORTS_MAX', 1000));
  const wildcard = process.env.BENCH_AGENTS_WILDCARD === '1';
  const rows = await benchAgents(counts, portsMax, wildcard);
  return [
    '',
    `7. large clusters: startCluster() until every agent listens and is in the core, realtime, default agent resources;`,
    `heap held by the idle cluster per agent after full collections, all of it and over that of a cluster of no agents;`,
    `loopback: a socket per agent address on 127.0.0.1${wildcard ? ', one socket on 0.0.0.0' : ''}; ports addressing up to ${num(portsMax)} agents`,
    agentsTable(rows),
  ];
}

function benchVirtualDay(): string[] {
  const agents = Math.round(envNumber('BENCH_DAY_AGENTS', VIRTUAL_DAY.agents));
  const hours = envNumber('BENCH_DAY_HOURS', VIRTUAL_DAY.hours);
  const checkInvariants = process.env.BENCH_DAY_INVARIANTS !== '0';
  const tasks = Math.round((VIRTUAL_DAY.tasks * hours) / 24);
  progress(`virtual day: ${num(agents)} agents, ${num(hours)} h, ${num(tasks)} tasks`);
  const result = runVirtualDay({ ...VIRTUAL_DAY, agents, hours, tasks, checkInvariants });
  return ['', `8. virtual time, the core alone: ${num(hours)} h of cluster time`, ...virtualDayLines(result)];
}

async function main(): Promise<void> {
  const seconds = envNumber('BENCH_SECONDS', 3);
  const warmupSeconds = envNumber('BENCH_WARMUP_SECONDS', 2);
  const startupRuns = Math.round(envNumber('BENCH_STARTUP_RUNS', 20));
  const coreSeconds = envNumber('BENCH_CORE_SECONDS', 2);
  const streamEvents = Math.round(envNumber('BENCH_STREAM_EVENTS', 300_000));
  const streamBatch = Math.round(envNumber('BENCH_STREAM_BATCH', 1000));

  if (process.argv[2] === 'compare') {
    process.stdout.write(`${(await runCompare(process.argv.slice(3))).join('\n')}\n`);
    return;
  }
  const named = process.argv.slice(2).join(',');
  const only = selectedParts(named === '' ? process.env.BENCH_ONLY : named);

  const cpus = os.cpus();
  const out = [
    `clustersim bench: node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()}-${os.arch()}`,
  ];
  if (only.has('calls') || only.has('launches')) out.push(...(await benchCalls(only, seconds, warmupSeconds)));
  if (only.has('startup')) {
    const startup = await benchStartup(startupRuns);
    out.push('', `2. time to first offer, 3 agents, realtime, ${startup.runs} runs`, startupTable(startup));
  }
  if (only.has('core')) {
    const core = [benchCoreLifecycles(coreSeconds, true), benchCoreLifecycles(coreSeconds, false)];
    out.push(
      '',
      `3. core only, 3 agents, 'sleep 1' tasks of cpus:1;mem:128 into every offer, every update acknowledged, ${coreSeconds} s each`,
    );
    out.push(coreTable(core));
  }
  if (only.has('events')) out.push(...(await benchEvents(streamEvents, streamBatch)));
  if (only.has('invariants')) out.push(...benchInvariants(coreSeconds));
  if (only.has('allocator')) out.push(...benchAllocatorPart());
  if (only.has('agents')) out.push(...(await benchAgentsPart()));
  if (only.has('virtual-day')) out.push(...benchVirtualDay());
  if (only.has('scale')) {
    const sizes = envList('BENCH_SCALE_AGENTS', [1000, 10_000, 50_000]);
    out.push(
      ...benchScalePart(
        sizes,
        Math.round(envNumber('BENCH_SCALE_TASKS_PER_AGENT', 20)),
        Math.round(envNumber('BENCH_SCALE_CONCURRENCY', 8)),
      ),
    );
  }
  if (only.has('failover')) {
    out.push(
      ...benchFailoverPart(
        envList('BENCH_FAILOVER_AGENTS', [10_000, 40_000]),
        Math.round(envNumber('BENCH_FAILOVER_TASKS_PER_AGENT', 10)),
      ),
    );
  }
  if (only.has('chaos')) out.push(...benchChaosPart(Math.round(envNumber('BENCH_CHAOS_RUNS', 32)), 1));
  if (only.has('table')) out.push(...(await benchTablePart()));
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((error: unknown) => {
  const expected = error instanceof CompareError; // a step that could not run: its message says which
  process.stderr.write(
    `bench: ${error instanceof Error ? (expected ? '' : error.stack) || error.message : String(error)}\n`,
  );
  process.exitCode = 1;
});
