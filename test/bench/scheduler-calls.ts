/**
 * Scheduler calls per second: clustersim's POST /api/v1/scheduler against a
 * bare fastify route that answers 202, both driven in this process by the
 * same load generator with the same kind of bodies and headers.
 *
 * Two clustersim workloads. `offers`: DECLINE and ACCEPT (no operations)
 * alternating on 3 agents; offers come back only at the allocation interval
 * (1 s), so nearly every call names an offer no longer valid, which the
 * master fully processes and rejects. `launches`: every ACCEPT launches a
 * short task on a live offer and every update is acknowledged, on a cluster
 * with enough agents that offers keep up with the calls (launch-feed.ts).
 * The bare route always answers the `offers` bodies: it never reads them.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster } from '../../src/start.js';
import { LaunchFeed, type LaunchTask } from './launch-feed.js';
import { runLoad, type LoadOptions, type LoadResult } from './load.js';
import { OfferFeed } from './offer-feed.js';
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

export interface OffersResult {
  readonly result: LoadResult;
  readonly liveCalls: number;
  readonly staleCalls: number;
}

export interface LaunchResult {
  readonly options: LaunchOptions;
  readonly result: LoadResult;
  readonly startSeconds: number;
  readonly liveCalls: number;
  readonly staleCalls: number;
  readonly ackCalls: number;
  readonly finished: number;
  readonly otherUpdates: number;
  readonly mostHeld: number;
  readonly heldAtEnd: number;
}

export interface CallsResult {
  readonly offers: OffersResult | undefined;
  readonly launches: LaunchResult | undefined;
  readonly bare: LoadResult;
}

export async function benchSchedulerCalls(
  options: CallsOptions,
  workloads: { readonly offers: boolean; readonly launches: LaunchOptions | undefined },
): Promise<CallsResult> {
  const seconds = (options.warmupMs + options.durationMs) / 1000;
  let offers: OffersResult | undefined;
  let ids = { frameworkId: PLACEHOLDER_ID, streamId: PLACEHOLDER_ID, staleOfferId: `${PLACEHOLDER_ID}-O999999` };
  if (workloads.offers) {
    progress(`scheduler calls: clustersim, DECLINE/ACCEPT, ${options.connections} connections, ${seconds} s`);
    const sim = await driveOffers(options);
    offers = { result: sim.result, liveCalls: sim.feed.liveCalls, staleCalls: sim.feed.staleCalls };
    ids = sim.ids;
  }
  progress(`scheduler calls: bare fastify, ${options.connections} connections, ${seconds} s`);
  const bare = await driveBare(options, ids.streamId, new OfferFeed(ids.frameworkId, ids.staleOfferId));
  const launches = workloads.launches === undefined ? undefined : await driveLaunches(options, workloads.launches);
  return { offers, launches, bare };
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

function load(origin: string, streamId: string, options: CallsOptions, nextBody: () => string): Promise<LoadResult> {
  const spec: LoadOptions = {
    origin,
    path: PATH,
    headers: { 'content-type': 'application/json', 'mesos-stream-id': streamId },
    connections: options.connections,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    nextBody,
    expectStatus: 202,
  };
  return runLoad(spec);
}

async function driveOffers(options: CallsOptions) {
  const cluster = await startCluster({ port: 0, agents: 3, time: 'realtime', logLevel: 'silent' });
  let client: SchedulerClient | undefined;
  try {
    const c = (client = await subscribed(cluster.masterUrl));
    const staleOfferId = `${cluster.cluster.view.masterInfo.id}-O999999`;
    const feed = new OfferFeed(c.frameworkId, staleOfferId);
    feed.add(await c.next('OFFERS'));
    const following = feed.follow(c);
    const result = await load(cluster.masterUrl, c.streamId, options, () => feed.nextBody());
    // Closing the event stream ends the offer loop; `disconnect` is idempotent.
    feed.drain();
    c.disconnect();
    await following;
    return { result, feed, ids: { frameworkId: c.frameworkId, streamId: c.streamId, staleOfferId } };
  } finally {
    client?.disconnect();
    await cluster.close();
  }
}

async function driveLaunches(options: CallsOptions, launch: LaunchOptions): Promise<LaunchResult> {
  progress(`scheduler calls: clustersim, launches on live offers, starting ${launch.agents} agents`);
  const t0 = performance.now();
  const { agents, agentResources } = launch;
  const cluster = await startCluster({
    port: 0,
    agents,
    agentResources,
    time: 'realtime',
    logLevel: 'silent',
    allocationIntervalSeconds: launch.allocationIntervalSeconds,
  });
  const startSeconds = (performance.now() - t0) / 1000;
  const seconds = (options.warmupMs + options.durationMs) / 1000;
  progress(`scheduler calls: clustersim, launches on live offers, ${options.connections} connections, ${seconds} s`);
  let client: SchedulerClient | undefined;
  try {
    const c = (client = await subscribed(cluster.masterUrl));
    const feed = new LaunchFeed(c.frameworkId, `${cluster.cluster.view.masterInfo.id}-O999999`, launch.task);
    const following = feed.follow(c);
    // Subscribing allocates at once: start on the first offers rather than on stale ids.
    while (feed.held === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const result = await load(cluster.masterUrl, c.streamId, options, () => feed.nextBody());
    const heldAtEnd = feed.held;
    feed.drain();
    c.disconnect();
    await following;
    const { liveCalls, staleCalls, ackCalls, finished, otherUpdates, mostHeld } = feed;
    return { options: launch, result, startSeconds, liveCalls, staleCalls, ackCalls, finished, otherUpdates, mostHeld, heldAtEnd };
  } finally {
    client?.disconnect();
    await cluster.close();
  }
}

async function driveBare(options: CallsOptions, streamId: string, feed: OfferFeed): Promise<LoadResult> {
  const app = Fastify({ keepAliveTimeout: 75_000 });
  // The same raw-body setup as the master app: every body arrives as a Buffer.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post(PATH, (_req, reply) => reply.code(202).send());
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const { port } = app.server.address() as AddressInfo;
    return await load(`http://127.0.0.1:${port}`, streamId, options, () => feed.nextBody());
  } finally {
    await app.close();
  }
}
