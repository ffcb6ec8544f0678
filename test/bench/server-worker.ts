/**
 * The worker side of server-thread.ts: starts the server under test on this
 * thread (startCluster() with the options given, or the bare fastify route),
 * posts its URL, then answers the load generator's window marks with this
 * thread's CPU time and busy share over the window, and with what the
 * master holds when the window closes.
 */
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import Fastify from 'fastify';
import { pathToFileURL } from 'node:url';
import type { RunningCluster, StartClusterOptions } from '../../src/start/cluster.js';
import type { MasterHolds, ServerReply, ServerRequest, ServerTarget } from './server-thread.js';
import { ELU_SOURCE, measureThread, threadClock, type ThreadWindow } from './thread-cpu.js';

interface Server {
  readonly url: string;
  readonly masterId: string | undefined;
  readonly startSeconds: number;
  holds(): MasterHolds | undefined;
  close(): Promise<void>;
}

/**
 * A cluster as builds of every commit return it: the core's `view` came
 * later (before it, the master's info was read from `cluster.master`).
 */
type AnyRunningCluster = Omit<RunningCluster, 'cluster'> & {
  readonly cluster: Partial<Pick<RunningCluster['cluster'], 'view'>> & {
    readonly master?: { readonly info?: { readonly id?: string } };
  };
};
type StartFn = (options: Omit<StartClusterOptions, 'logger'>) => Promise<AnyRunningCluster>;

/** startCluster() of the sources, or of a built library; imported here so that only the one measured is loaded. */
async function loadStartCluster(library: string | undefined): Promise<StartFn> {
  const url = library === undefined ? new URL('../../src/start/cluster.js', import.meta.url) : pathToFileURL(library);
  return ((await import(url.href)) as { startCluster: StartFn }).startCluster;
}

async function startServer(target: ServerTarget): Promise<Server> {
  if (target.kind === 'bare') return startBare(target.path);
  const startCluster = await loadStartCluster(target.library);
  const t0 = performance.now();
  const running = await startCluster(target.options);
  const startSeconds = (performance.now() - t0) / 1000;
  const { view, master } = running.cluster;
  const holds = (): MasterHolds | undefined => {
    if (view === undefined) return undefined;
    let offers = 0;
    let tasks = 0;
    for (const framework of view.frameworks()) {
      offers += framework.offers.size;
      tasks += framework.tasks.size;
    }
    return { offers, tasks };
  };
  const masterId = view?.masterInfo.id ?? master?.info?.id;
  return { url: running.masterUrl, masterId, startSeconds, holds, close: () => running.close() };
}

async function startBare(path: string): Promise<Server> {
  const app = Fastify({ keepAliveTimeout: 75_000 });
  // The same raw-body setup as the master app: every body arrives as a Buffer.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post(path, (_req, reply) => reply.code(202).send());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    masterId: undefined,
    startSeconds: 0,
    holds: () => undefined,
    close: () => app.close(),
  };
}

async function serve(port: NonNullable<typeof parentPort>, target: ServerTarget): Promise<void> {
  const server = await startServer(target);
  const clock = threadClock();
  const post = (reply: ServerReply) => port.postMessage(reply);
  let endWindow: (() => ThreadWindow) | undefined;
  port.on('message', (request: ServerRequest) => {
    if (request.kind === 'open') endWindow = measureThread(clock);
    else if (request.kind === 'close') {
      const window = (endWindow ?? measureThread(clock))();
      post({ kind: 'window', ...window, master: server.holds() });
    } else {
      // Unhooked from the port first, so that the thread can end once the server has closed.
      port.removeAllListeners('message');
      void server.close().then(() => post({ kind: 'down' }));
    }
  });
  const { url, masterId, startSeconds } = server;
  post({ kind: 'ready', url, masterId, startSeconds, cpuSource: clock?.source ?? ELU_SOURCE });
}

if (parentPort === null) throw new Error('server-worker.ts runs on a worker thread (see server-thread.ts)');
await serve(parentPort, (workerData as { target: ServerTarget }).target);
