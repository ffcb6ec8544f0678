/**
 * Scale, as a user scaling up meets it: clusters of many agents in virtual
 * time, started through the library, with long tasks launched through the
 * scheduler HTTP API, then read through the HTTP endpoints. Per size:
 *
 *   - the time `startCluster()` takes to have every agent ready;
 *   - ACCEPT+LAUNCH throughput: every offer of the first batch accepted with
 *     `tasksPerAgent` long tasks, `concurrency` calls in flight, counted from
 *     the first call to the last answer (the tasks then start when virtual
 *     time moves);
 *   - `/state`, `/tasks?limit=100` and the operator's GET_STATE and GET_TASKS
 *     (JSON and protobuf): time to the first byte, to the last, and size
 *     (SCALE_READS_PROFILE=DIR writes a CPU profile of the reads to DIR;
 *     SCALE_READ_ROUNDS=N reads them N times in turn, keeping each one's fastest);
 *   - RSS before and after the reads, and heap (after full collections)
 *     per agent and per task;
 *   - a master failover: the leader of two masters crashes, and the wall
 *     time until the new leader has every agent back with its tasks.
 *
 * The framework reads its stream as a scheduler that only launches would:
 * it counts events, takes the offers, and does not acknowledge updates
 * (virtual time moves only as far as the tasks need to run).
 */
import http from 'node:http';
import { openStream } from '../../src/client/event-queue.js';
import { postRaw } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { parseFault } from '../../src/wire/sim/faults.js';
import { collector } from './agents.js';
import { startProfile } from './cpu-profile.js';
import { progress } from './stats.js';

export interface ScaleOptions {
  readonly agents: number;
  readonly tasksPerAgent: number;
  readonly concurrency: number;
  /** Bind 0.0.0.0 (one socket for every agent address) instead of a socket per address on 127.0.0.1. */
  readonly wildcard: boolean;
}

export interface ReadFigure {
  readonly firstByteMs: number;
  readonly totalMs: number;
  readonly bytes: number;
  readonly status: number;
  /** CPU time of the whole process (server, client, collector threads) from the request to its end. */
  readonly cpuMs: number;
}

export interface ScaleRow {
  readonly agents: number;
  readonly tasks: number;
  readonly host: string;
  readonly startMs: number;
  readonly launchMs: number;
  readonly acceptCalls: number;
  readonly refused: number;
  readonly runningMs: number;
  readonly running: number;
  readonly state: ReadFigure;
  readonly tasksPage: ReadFigure;
  readonly getState: ReadFigure;
  readonly getStateProto: ReadFigure;
  readonly getTasks: ReadFigure;
  readonly getTasksProto: ReadFigure;
  /** RSS over the start once the tasks run, before the reads. */
  readonly heldRssBytes: number;
  /** RSS over the start after the reads. */
  readonly rssBytes: number;
  readonly heapBytes: number;
  readonly failoverMs: number | undefined;
  readonly reregistered: number;
}

const AGENT_RESOURCES = 'cpus:64;mem:262144;disk:262144';

const GET_STATE = JSON.stringify({ type: 'GET_STATE' });
const GET_TASKS = JSON.stringify({ type: 'GET_TASKS' });
const PROTOBUF = 'application/x-protobuf';

/** One request; times to its first byte and to its end. */
export function timedRequest(
  url: URL,
  method: 'GET' | 'POST',
  body?: string,
  accept = 'application/json',
): Promise<ReadFigure> {
  const t0 = performance.now();
  const cpu = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', accept };
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let first: number | undefined;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        first ??= performance.now() - t0;
        bytes += chunk.length;
      });
      res.on('end', () =>
        resolve({
          firstByteMs: first ?? performance.now() - t0,
          totalMs: performance.now() - t0,
          bytes,
          status: res.statusCode ?? 0,
          cpuMs: cpuSince(cpu),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** A framework that counts its events and keeps the offers of the first batch. */
export class LaunchingFramework {
  frameworkId = '';
  streamId = '';
  events = 0;
  offers: Record<string, unknown>[] | undefined;
  readonly #url: URL;

  constructor(masterUrl: string) {
    this.#url = new URL('/api/v1/scheduler', masterUrl);
  }

  async subscribe(): Promise<void> {
    const body = JSON.stringify({
      type: 'SUBSCRIBE',
      subscribe: {
        framework_info: {
          user: 'bench',
          name: 'scale',
          roles: ['*'],
          capabilities: [{ type: 'MULTI_ROLE' }],
          failover_timeout: 86_400,
        },
      },
    });
    const { answer } = openStream(this.#url, { 'content-type': 'application/json', accept: 'application/json' }, body, {
      opened: (headers) => (this.streamId = String(headers['mesos-stream-id'])),
      record: (record) => this.#record(record),
      closed: () => {},
    });
    const result = await answer;
    if (result.status !== 200) throw new Error(`SUBSCRIBE answered ${result.status}: ${result.body}`);
  }

  #record(record: Buffer): void {
    this.events++;
    if (record.indexOf('"SUBSCRIBED"') >= 0 && this.frameworkId === '') {
      this.frameworkId = (
        JSON.parse(record.toString()) as { subscribed: { framework_id: { value: string } } }
      ).subscribed.framework_id.value;
    } else if (this.offers === undefined && record.indexOf('"type":"OFFERS"') >= 0) {
      this.offers = (JSON.parse(record.toString()) as { offers: { offers: Record<string, unknown>[] } }).offers.offers;
    }
  }

  call(call: Record<string, unknown>): Promise<number> {
    const body = JSON.stringify({ framework_id: { value: this.frameworkId }, ...call });
    return postRaw(this.#url, body, { 'content-type': 'application/json', 'mesos-stream-id': this.streamId }).then(
      (r) => r.status,
    );
  }
}

function launchCall(offer: Record<string, any>, perAgent: number): Record<string, unknown> {
  const agentId = offer['agent_id'];
  const offerId = (offer['id'] as { value: string }).value;
  const task_infos = Array.from({ length: perAgent }, (_, i) => ({
    name: 'long',
    task_id: { value: `${offerId}-${i}` },
    agent_id: agentId,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.01 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 1 } },
    ],
    command: { value: 'sleep 1000000' },
  }));
  return {
    type: 'ACCEPT',
    accept: { offer_ids: [offer['id']], operations: [{ type: 'LAUNCH', launch: { task_infos } }] },
  };
}

/**
 * The framework reads its stream in this process, which cannot read while
 * virtual time moves (synchronously): every task's STARTING and RUNNING
 * wait in the stream meanwhile (about 140 MB at 200,000 tasks), and the
 * default buffer limits would cut it, its disconnection then landing in
 * the reads' figures.
 */
const UNBOUNDED_STREAMS = { streamBufferLimitMiB: 65_536, streamBufferBudgetMiB: 65_536 } as const;

/** A cluster of `agents` in virtual time (loopback addressing, two masters) with one framework holding an offer of each agent. */
export async function clusterWithOffers(agents: number): Promise<{ cluster: RunningCluster; fw: LaunchingFramework }> {
  const cluster = await startCluster({
    port: 0,
    agents,
    agentAddressing: 'loopback',
    agentResources: AGENT_RESOURCES,
    masters: 2,
    time: 'virtual',
    logLevel: 'silent',
    ...UNBOUNDED_STREAMS,
  });
  const fw = new LaunchingFramework(cluster.masterUrl);
  await fw.subscribe();
  cluster.advance(1_000);
  await waitFor(() => fw.offers !== undefined);
  return { cluster, fw };
}

/** Accepts every offer with its tasks, `concurrency` calls at a time; the wall time and the refusals. */
export async function launchAll(
  fw: LaunchingFramework,
  offers: readonly Record<string, unknown>[],
  o: ScaleOptions,
): Promise<{ ms: number; refused: number }> {
  let next = 0;
  let refused = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < offers.length) {
      const offer = offers[next++]!;
      if (next % 5000 === 0) progress(`scale: ${next} of ${offers.length} ACCEPTs sent`);
      const status = await fw.call(launchCall(offer, o.tasksPerAgent));
      if (status !== 202) refused++;
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return { ms: performance.now() - t0, refused };
}

/** Virtual time moves on until `test` holds (at most `maxMs` of it); wall time spent. */
export function advanceUntil(cluster: RunningCluster, test: () => boolean, stepMs: number, maxMs: number): number {
  const t0 = performance.now();
  for (let moved = 0; !test() && moved < maxMs; moved += stepMs) cluster.advance(stepMs);
  return performance.now() - t0;
}

export function runningTasks(cluster: RunningCluster): number {
  return cluster.driver.read((view) => {
    let n = 0;
    for (const fw of view.frameworks()) for (const task of fw.tasks.values()) if (task.state === 'TASK_RUNNING') n++;
    return n;
  });
}

type Reads = Pick<ScaleRow, 'state' | 'tasksPage' | 'getState' | 'getStateProto' | 'getTasks' | 'getTasksProto'>;

/** Each read once, or SCALE_READ_ROUNDS times in turn keeping each one's fastest (the machine is shared). */
async function readAll(masterUrl: string): Promise<Reads> {
  const api = new URL('/api/v1', masterUrl);
  const reads: Record<keyof Reads, () => Promise<ReadFigure>> = {
    state: () => timedRequest(new URL('/state', masterUrl), 'GET'),
    tasksPage: () => timedRequest(new URL('/tasks?limit=100', masterUrl), 'GET'),
    getState: () => timedRequest(api, 'POST', GET_STATE),
    getStateProto: () => timedRequest(api, 'POST', GET_STATE, PROTOBUF),
    getTasks: () => timedRequest(api, 'POST', GET_TASKS),
    getTasksProto: () => timedRequest(api, 'POST', GET_TASKS, PROTOBUF),
  };
  const best: Partial<Record<keyof Reads, ReadFigure>> = {};
  const rounds = Number(process.env['SCALE_READ_ROUNDS'] ?? 1);
  for (let round = 0; round < rounds; round++) {
    for (const [name, read] of Object.entries(reads) as [keyof Reads, () => Promise<ReadFigure>][]) {
      const figure = await read();
      if (best[name] === undefined || figure.totalMs < best[name].totalMs) best[name] = figure;
    }
  }
  return best as Reads;
}

/** The leader crashes; the wall time until the other master leads with every agent re-registered and their tasks. */
function failover(
  cluster: RunningCluster,
  agents: number,
  tasks: number,
): { ms: number | undefined; reregistered: number } {
  const fault = parseFault({ type: 'crash_master' });
  if (typeof fault === 'string') throw new Error(fault);
  const t0 = performance.now();
  cluster.driver.input((c) => c.inject(fault));
  const back = (): { agents: number; tasks: number } =>
    cluster.driver.read((view) => {
      if (view.leaderIndex() === undefined) return { agents: 0, tasks: 0 };
      let active = 0;
      for (const agent of view.agents()) if (agent.state === 'active') active++;
      let n = 0;
      for (const fw of view.frameworks()) n += fw.tasks.size;
      return { agents: active, tasks: n };
    });
  advanceUntil(cluster, () => back().agents === agents && back().tasks >= tasks, 1_000, 15 * 60_000);
  const done = back();
  return { ms: done.agents === agents ? performance.now() - t0 : undefined, reregistered: done.agents };
}

export async function benchScale(o: ScaleOptions): Promise<ScaleRow> {
  const gc = collector();
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage().rss;
  const host = o.wildcard ? '0.0.0.0' : '127.0.0.1';
  progress(`scale: ${o.agents} agents starting (loopback addressing on ${host}, two masters, virtual time)`);
  let t0 = performance.now();
  const cluster = await startCluster({
    port: 0,
    host,
    agents: o.agents,
    agentAddressing: 'loopback',
    agentResources: AGENT_RESOURCES,
    masters: 2,
    time: 'virtual',
    logLevel: 'silent',
    ...UNBOUNDED_STREAMS,
  });
  const startMs = performance.now() - t0;
  try {
    const masterUrl = cluster.masterUrl.replace('0.0.0.0', '127.0.0.1');
    const fw = new LaunchingFramework(masterUrl);
    await fw.subscribe();
    cluster.advance(1_000);
    await waitFor(() => fw.offers !== undefined);
    if (fw.offers!.length < o.agents) throw new Error(`scale: ${fw.offers!.length} offers for ${o.agents} agents`);
    progress(`scale: ${fw.offers!.length} offers; launching ${o.tasksPerAgent} tasks into each`);
    const launch = await launchAll(fw, fw.offers!, o);
    const tasks = fw.offers!.length * o.tasksPerAgent - launch.refused * o.tasksPerAgent;
    progress(`scale: ${tasks} tasks launched in ${Math.round(launch.ms)} ms; running them`);
    t0 = performance.now();
    advanceUntil(cluster, () => runningTasks(cluster) >= tasks, 1_000, 60_000);
    const runningMs = performance.now() - t0;
    const running = runningTasks(cluster);
    await drained(fw);
    gc();
    // What the cluster holds, before the reads' buffers (hundreds of MB at the largest size) raise RSS for good.
    const heldRssBytes = process.memoryUsage().rss - rss0;
    progress('scale: reading /state, /tasks, GET_STATE and GET_TASKS');
    const profile = await startProfile(process.env['SCALE_READS_PROFILE']);
    const { state, tasksPage, getState, getStateProto, getTasks, getTasksProto } = await readAll(masterUrl);
    await profile();
    gc();
    const heapBytes = process.memoryUsage().heapUsed - heap0;
    const rssBytes = process.memoryUsage().rss - rss0;
    progress('scale: master failover');
    const fo = failover(cluster, o.agents, running);
    return {
      agents: o.agents,
      tasks,
      host,
      startMs,
      launchMs: launch.ms,
      acceptCalls: fw.offers!.length,
      refused: launch.refused,
      runningMs,
      running,
      state,
      tasksPage,
      getState,
      getStateProto,
      getTasks,
      getTasksProto,
      heldRssBytes,
      rssBytes,
      heapBytes,
      failoverMs: fo.ms,
      reregistered: fo.reregistered,
    };
  } finally {
    await cluster.close();
  }
}

/**
 * Waits until the framework has read what its stream holds (nothing new
 * for a second): the updates written while virtual time moved would
 * otherwise be read during the first read timed, in this same process.
 */
export async function drained(fw: LaunchingFramework): Promise<void> {
  let quiet = 0;
  let seen = -1;
  while (quiet < 20) {
    quiet = fw.events === seen ? quiet + 1 : 0;
    seen = fw.events;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits (wall time, turn by turn of the event loop) for what the stream brings. */
async function waitFor(test: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!test()) {
    if (performance.now() > deadline) throw new Error('scale: the offers did not arrive');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Run alone (one size, one process, for honest RSS figures): prints the row as one JSON line. */
if (process.argv[1]?.endsWith('scale.ts') && process.argv[2] === '--one') {
  const [agents, tasksPerAgent, concurrency, wildcard] = process.argv.slice(3).map(Number);
  benchScale({ agents: agents!, tasksPerAgent: tasksPerAgent!, concurrency: concurrency!, wildcard: wildcard === 1 })
    .then((row) => process.stdout.write(`${JSON.stringify(row)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    });
}
