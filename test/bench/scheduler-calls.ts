/**
 * Scheduler calls per second: clustersim's POST /api/v1/scheduler against a
 * bare fastify route that answers 202, both driven by the same load
 * generator with the same kind of bodies and headers. Each server runs on a
 * worker thread of its own (server-thread.ts) and the load generator, the
 * scheduler client and the feeds on this one, so that each has a core and
 * the CPU time per call is the server thread's alone.
 *
 * Two clustersim workloads. `offers`: DECLINE and ACCEPT (no operations)
 * alternating on 3 agents; offers come back only at the allocation interval
 * (1 s), so nearly every call names an offer no longer valid, which the
 * master fully processes and rejects. `launches`: every ACCEPT launches a
 * short task on a live offer and every update is acknowledged, on a cluster
 * with enough agents that offers keep up with the calls (launch-feed.ts).
 * The bare route always answers the `offers` bodies: it never reads them.
 */
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { LaunchFeed, type LaunchTask } from './launch-feed.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { OfferFeed } from './offer-feed.js';
import { ServerThread, type MasterHolds, type ServerWindow } from './server-thread.js';
import { progress } from './stats.js';

const PATH = '/api/v1/scheduler';
/** Ids of the usual length for the bare route's bodies when no cluster ran before it. */
const PLACEHOLDER_ID = '5d2f4e6a-1b3c-4d5e-8f90-a1b2c3d4e5f6';

export interface CallsOptions {
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export interface LaunchOptions {
  /** Agents of the cluster: each yields at most one offer per allocation interval. */
  readonly agents: number;
  readonly agentResources: string;
  /** Seconds between batched allocations; short, so that few agents keep offers coming. */
  readonly allocationIntervalSeconds: number;
  readonly task: LaunchTask;
}

/** The load generator's figures and the server thread's over the same window. */
export interface TargetResult extends LoadResult {
  /** CPU time of the server's thread in the window, per counted call. */
  readonly cpuUsPerCall: number;
  readonly server: ServerWindow;
}

export interface OffersResult {
  readonly result: TargetResult;
  readonly liveCalls: number;
  readonly staleCalls: number;
}

export interface LaunchResult {
  readonly options: LaunchOptions;
  readonly result: TargetResult;
  readonly startSeconds: number;
  readonly liveCalls: number;
  readonly staleCalls: number;
  readonly ackCalls: number;
  readonly finished: number;
  readonly otherUpdates: number;
  readonly mostHeld: number;
  readonly heldAtEnd: number;
  /** What the master held when the window closed. */
  readonly masterAtEnd: MasterHolds | undefined;
}

export interface CallsResult {
  readonly offers: OffersResult | undefined;
  readonly launches: LaunchResult | undefined;
  readonly bare: TargetResult;
  /** How the server threads' CPU time was read. */
  readonly cpuSource: string;
}

export async function benchSchedulerCalls(
  options: CallsOptions,
  workloads: {
    readonly offers: boolean;
    readonly launches: LaunchOptions | undefined;
    /** The built dist/index.js the clusters come from (default: the sources). */
    readonly library?: string;
  },
): Promise<CallsResult> {
  const seconds = (options.warmupMs + options.durationMs) / 1000;
  let offers: OffersResult | undefined;
  let ids = { frameworkId: PLACEHOLDER_ID, streamId: PLACEHOLDER_ID, staleOfferId: `${PLACEHOLDER_ID}-O999999` };
  if (workloads.offers) {
    progress(`scheduler calls: clustersim, DECLINE/ACCEPT, ${options.connections} connections, ${seconds} s`);
    const sim = await driveOffers(options, workloads.library);
    offers = { result: sim.result, liveCalls: sim.feed.liveCalls, staleCalls: sim.feed.staleCalls };
    ids = sim.ids;
  }
  progress(`scheduler calls: bare fastify, ${options.connections} connections, ${seconds} s`);
  const { result: bare, cpuSource } = await driveBare(
    options,
    ids.streamId,
    new OfferFeed(ids.frameworkId, ids.staleOfferId),
  );
  const launches =
    workloads.launches === undefined ? undefined : await driveLaunches(options, workloads.launches, workloads.library);
  return { offers, launches, bare, cpuSource };
}

async function subscribed(masterUrl: string): Promise<SchedulerClient & { streamId: string; frameworkId: string }> {
  const client = new SchedulerClient(masterUrl);
  const answer = await client.subscribe({ user: 'bench', name: 'bench' });
  if (answer.status !== 200 || client.streamId === undefined) {
    client.disconnect();
    throw new Error(`SUBSCRIBE answered ${answer.status}: ${answer.body}`);
  }
  await client.next('SUBSCRIBED');
  return client as SchedulerClient & { streamId: string; frameworkId: string };
}

/** An offer id of the master's form that it never made: every call naming it is stale. */
function staleOfferId(server: ServerThread): string {
  if (server.masterId === undefined) throw new Error('the server thread runs no cluster');
  return `${server.masterId}-O999999`;
}

async function load(
  server: ServerThread,
  streamId: string,
  options: CallsOptions,
  nextBody: () => string,
): Promise<TargetResult> {
  const spec: LoadOptions = {
    origin: server.url,
    path: PATH,
    headers: { 'content-type': 'application/json', 'mesos-stream-id': streamId },
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    nextBody,
    expectStatus: 202,
    window: server,
  };
  const result = await runLoad(spec);
  const window = await server.window();
  return { ...result, cpuUsPerCall: window.cpuUs / result.calls, server: window };
}

async function driveOffers(options: CallsOptions, library: string | undefined) {
  const server = await ServerThread.start({
    kind: 'cluster',
    options: { port: 0, agents: 3, time: 'realtime', logLevel: 'silent' },
    ...(library === undefined ? {} : { library }),
  });
  let client: SchedulerClient | undefined;
  try {
    const c = (client = await subscribed(server.url));
    const staleId = staleOfferId(server);
    const feed = new OfferFeed(c.frameworkId, staleId);
    feed.add(await c.next('OFFERS'));
    const following = feed.follow(c);
    const result = await load(server, c.streamId, options, () => feed.nextBody());
    // Closing the event stream ends the offer loop; `disconnect` is idempotent.
    feed.drain();
    c.disconnect();
    await following;
    return { result, feed, ids: { frameworkId: c.frameworkId, streamId: c.streamId, staleOfferId: staleId } };
  } finally {
    client?.disconnect();
    await server.close();
  }
}

async function driveLaunches(
  options: CallsOptions,
  launch: LaunchOptions,
  library: string | undefined,
): Promise<LaunchResult> {
  progress(`scheduler calls: clustersim, launches on live offers, starting ${launch.agents} agents`);
  const { agents, agentResources, allocationIntervalSeconds } = launch;
  const server = await ServerThread.start({
    kind: 'cluster',
    options: { port: 0, agents, agentResources, time: 'realtime', logLevel: 'silent', allocationIntervalSeconds },
    ...(library === undefined ? {} : { library }),
  });
  const seconds = (options.warmupMs + options.durationMs) / 1000;
  progress(`scheduler calls: clustersim, launches on live offers, ${options.connections} connections, ${seconds} s`);
  let client: SchedulerClient | undefined;
  try {
    const c = (client = await subscribed(server.url));
    const feed = new LaunchFeed(c.frameworkId, staleOfferId(server), launch.task);
    const following = feed.follow(c);
    // Subscribing allocates at once: start on the first offers rather than on stale ids.
    while (feed.held === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await load(server, c.streamId, options, () => feed.nextBody());
    const heldAtEnd = feed.held;
    feed.drain();
    c.disconnect();
    await following;
    const { liveCalls, staleCalls, ackCalls, finished, otherUpdates, mostHeld } = feed;
    const counts = { liveCalls, staleCalls, ackCalls, finished, otherUpdates, mostHeld, heldAtEnd };
    return { options: launch, result, startSeconds: server.startSeconds, ...counts, masterAtEnd: result.server.master };
  } finally {
    client?.disconnect();
    await server.close();
  }
}

async function driveBare(
  options: CallsOptions,
  streamId: string,
  feed: OfferFeed,
): Promise<{ result: TargetResult; cpuSource: string }> {
  const server = await ServerThread.start({ kind: 'bare', path: PATH });
  try {
    return { result: await load(server, streamId, options, () => feed.nextBody()), cpuSource: server.cpuSource };
  } finally {
    await server.close();
  }
}
