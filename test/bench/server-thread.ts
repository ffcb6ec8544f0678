/**
 * The server under test on a worker thread of its own (server-worker.ts),
 * seen from the load generator's thread. Run in the same thread, the load
 * generator (undici, the scheduler client, the feeds) took a large share of
 * the one event loop, so the figures were client plus server; on separate
 * threads each gets a core, and the server reports the CPU time of its own
 * thread over the measured window, which the load generator opens and
 * closes (WindowHooks of load.ts).
 */
import { Worker } from 'node:worker_threads';
import type { StartClusterOptions } from '../../src/start/cluster.js';
import type { WindowHooks } from './load.js';
import type { ThreadWindow } from './thread-cpu.js';

/**
 * What the worker runs: a whole cluster, or the bare fastify route that answers 202.
 * A cluster comes from the sources, or from the built `library` (a dist/index.js,
 * of this tree or of an earlier commit: `npm run bench -- compare`).
 */
export type ServerTarget =
  | { readonly kind: 'cluster'; readonly options: Omit<StartClusterOptions, 'logger'>; readonly library?: string }
  | { readonly kind: 'bare'; readonly path: string };

export type ServerRequest = { readonly kind: 'open' | 'close' | 'shutdown' };

/** What the master holds, summed over its frameworks, when the window closed. */
export interface MasterHolds {
  readonly offers: number;
  readonly tasks: number;
}

export interface ServerWindow extends ThreadWindow {
  /** Undefined for the bare route. */
  readonly master: MasterHolds | undefined;
}

export type ServerReply =
  | {
      readonly kind: 'ready';
      readonly url: string;
      readonly masterId: string | undefined;
      /** Seconds startCluster() took (0 for the bare route). */
      readonly startSeconds: number;
      readonly cpuSource: string;
    }
  | ({ readonly kind: 'window' } & ServerWindow)
  | { readonly kind: 'down' };

type Ready = Extract<ServerReply, { kind: 'ready' }>;

/**
 * How long a reply may take: starting covers compiling the sources on the
 * worker and starting BENCH_LAUNCH_AGENTS agents on a busy machine. Past
 * it the bench stops with an error rather than waiting on a stuck thread.
 */
const REPLY_TIMEOUT_MS: Record<ServerReply['kind'], number> = { ready: 120_000, window: 30_000, down: 30_000 };

interface Waiter {
  readonly kind: ServerReply['kind'];
  resolve(reply: ServerReply): void;
  reject(error: Error): void;
}

export class ServerThread implements WindowHooks {
  readonly #worker: Worker;
  #waiter: Waiter | undefined;
  #failure: Error | undefined;
  #window: Promise<ServerWindow> | undefined;
  #ready: Ready | undefined;

  private constructor(target: ServerTarget) {
    const entry = new URL('./server-worker.ts', import.meta.url).href;
    this.#worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { entry, target } });
    this.#worker.on('message', (reply: ServerReply) => this.#settle(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new Error(`the server thread exited with code ${code}`)));
  }

  static async start(target: ServerTarget): Promise<ServerThread> {
    const thread = new ServerThread(target);
    try {
      thread.#ready = (await thread.#expect('ready')) as Ready;
    } catch (error) {
      await thread.#worker.terminate();
      throw error;
    }
    return thread;
  }

  get url(): string {
    return this.#ready!.url;
  }

  get masterId(): string | undefined {
    return this.#ready!.masterId;
  }

  get startSeconds(): number {
    return this.#ready!.startSeconds;
  }

  /** How the server thread's CPU time is read. */
  get cpuSource(): string {
    return this.#ready!.cpuSource;
  }

  openWindow(): void {
    this.#worker.postMessage({ kind: 'open' } satisfies ServerRequest);
  }

  closeWindow(): void {
    // Asked for now so that the reply is caught even if nobody awaits it yet.
    this.#window ??= this.#expect('window').then(({ kind: _, ...window }) => window as ServerWindow);
    this.#worker.postMessage({ kind: 'close' } satisfies ServerRequest);
  }

  /** The server's figures for the window the load generator closed. */
  window(): Promise<ServerWindow> {
    if (this.#window === undefined) throw new Error('the measured window was never closed');
    return this.#window;
  }

  /** Closes the server and ends the thread. */
  async close(): Promise<void> {
    try {
      const down = this.#expect('down');
      this.#worker.postMessage({ kind: 'shutdown' } satisfies ServerRequest);
      await down;
    } finally {
      await this.#worker.terminate();
    }
  }

  #expect(kind: ServerReply['kind']): Promise<ServerReply> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#waiter !== undefined) throw new Error(`already waiting for '${this.#waiter.kind}'`);
    return new Promise((resolve, reject) => {
      const seconds = REPLY_TIMEOUT_MS[kind] / 1000;
      const timer = setTimeout(
        () => this.#fail(new Error(`the server thread sent no '${kind}' in ${seconds} s`)),
        REPLY_TIMEOUT_MS[kind],
      );
      const settled =
        <T>(settle: (value: T) => void) =>
        (value: T) => (clearTimeout(timer), settle(value));
      this.#waiter = { kind, resolve: settled(resolve), reject: settled(reject) };
    });
  }

  #settle(reply: ServerReply): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter === undefined) return;
    if (waiter.kind === reply.kind) waiter.resolve(reply);
    else waiter.reject(new Error(`the server thread answered '${reply.kind}', expected '${waiter.kind}'`));
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }
}
