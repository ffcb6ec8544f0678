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
import { startCluster } from '../../src/start/cluster.js';
import type { MasterHolds, ServerReply, ServerRequest, ServerTarget } from './server-thread.js';
import { ELU_SOURCE, measureThread, threadClock, type ThreadWindow } from './thread-cpu.js';

interface Server {
  readonly url: string;
  readonly masterId: string | undefined;
  readonly startSeconds: number;
  holds(): MasterHolds | undefined;
  close(): Promise<void>;
}

async function startServer(target: ServerTarget): Promise<Server> {
  if (target.kind === 'bare') return startBare(target.path);
  const t0 = performance.now();
  const running = await startCluster(target.options);
  const startSeconds = (performance.now() - t0) / 1000;
  const holds = (): MasterHolds => {
    let offers = 0;
    let tasks = 0;
    for (const framework of running.cluster.view.frameworks()) {
      offers += framework.offers.size;
      tasks += framework.tasks.size;
    }
    return { offers, tasks };
  };
  const masterId = running.cluster.view.masterInfo.id;
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
