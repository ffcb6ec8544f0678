/**
 * Scheduler calls per second: clustersim's POST /api/v1/scheduler against a
 * bare fastify route that answers 202, both driven in this process by the
 * same load generator with the same kind of bodies and headers.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster } from '../../src/start.js';
import { runLoad, type LoadResult } from './load.js';
import { OfferFeed } from './offer-feed.js';
import { progress } from './stats.js';

const PATH = '/api/v1/scheduler';

export interface CallsOptions {
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export interface CallsResult {
  readonly clustersim: LoadResult;
  readonly bare: LoadResult;
  readonly liveCalls: number;
  readonly staleCalls: number;
}

export async function benchSchedulerCalls(options: CallsOptions): Promise<CallsResult> {
  const seconds = (options.warmupMs + options.durationMs) / 1000;
  progress(`scheduler calls: clustersim, ${options.connections} connections, ${seconds} s`);
  const sim = await driveClustersim(options);
  progress(`scheduler calls: bare fastify, ${options.connections} connections, ${seconds} s`);
  const bareFeed = new OfferFeed(sim.frameworkId, sim.staleOfferId);
  const bare = await driveBare(options, sim.streamId, bareFeed);
  return { clustersim: sim.result, bare, liveCalls: sim.feed.liveCalls, staleCalls: sim.feed.staleCalls };
}

async function driveClustersim(options: CallsOptions) {
  const cluster = await startCluster({ port: 0, agents: 3, time: 'realtime', logLevel: 'silent' });
  const client = new SchedulerClient(cluster.masterUrl);
  try {
    const subscribed = await client.subscribe({ user: 'bench', name: 'bench' });
    if (subscribed.status !== 200 || client.streamId === undefined) {
      throw new Error(`SUBSCRIBE answered ${subscribed.status}: ${subscribed.body}`);
    }
    await client.next('SUBSCRIBED');
    const frameworkId = client.frameworkId!;
    const staleOfferId = `${cluster.cluster.master.info.id}-O999999`;
    const feed = new OfferFeed(frameworkId, staleOfferId);
    feed.add(await client.next('OFFERS'));
    const following = feed.follow(client);
    const result = await runLoad({
      origin: cluster.masterUrl,
      path: PATH,
      headers: { 'content-type': 'application/json', 'mesos-stream-id': client.streamId },
      connections: options.connections,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      nextBody: () => feed.nextBody(),
      expectStatus: 202,
    });
    // Closing the event stream ends the offer loop; `disconnect` is idempotent.
    feed.drain();
    client.disconnect();
    await following;
    return { result, feed, frameworkId, streamId: client.streamId, staleOfferId };
  } finally {
    client.disconnect();
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
    return await runLoad({
      origin: `http://127.0.0.1:${port}`,
      path: PATH,
      headers: { 'content-type': 'application/json', 'mesos-stream-id': streamId },
      connections: options.connections,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      nextBody: () => feed.nextBody(),
      expectStatus: 202,
    });
  } finally {
    await app.close();
  }
}
