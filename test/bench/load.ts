/**
 * A closed-loop HTTP load generator: one worker per keep-alive connection of
 * an undici Pool (no pipelining), each sending the next body as soon as the
 * previous reply has been read, for a warm-up and then a measured window.
 * Only calls that start and finish inside the window count towards the
 * rate and the latencies; errors are counted over the whole run. The
 * server under test runs on another thread (server-thread.ts): the window
 * hooks tell it when the window opens and closes, so that it can report its
 * own CPU time, which is steadier than the rate on a busy machine. This
 * thread's own CPU time and busy share are measured too: a load generator
 * busy near 100% means the rate is the client's limit, not the server's.
 */
import { Pool } from 'undici';
import { percentile, sortedCopy } from './stats.js';
import { measureThread, threadClock, type ThreadWindow } from './thread-cpu.js';

/** Called when the measured window opens and when it closes (once each). */
export interface WindowHooks {
  openWindow(): void;
  closeWindow(): void;
}

export interface LoadOptions {
  /** Origin, e.g. `http://127.0.0.1:5050`. */
  readonly origin: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The next request body; called once per call, in sending order. */
  readonly nextBody: () => string;
  /** The status every reply must have; anything else is an error. */
  readonly expectStatus: number;
  readonly window: WindowHooks;
}

export interface LoadResult {
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The load generator's thread (this one) in the window. */
  readonly loadThread: ThreadWindow;
  /** Calls per second during the warm-up, i.e. before the JIT has settled. */
  readonly warmupCallsPerSecond: number;
  readonly errors: number;
  /** Count per unexpected status (0 = no reply), with the first body seen. */
  readonly unexpected: ReadonlyMap<number, { count: number; firstBody: string }>;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.origin, {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
  });
  const latenciesMs: number[] = [];
  const unexpected = new Map<number, { count: number; firstBody: string }>();
  let errors = 0;
  let warmupCalls = 0;
  const startMs = performance.now();
  const windowStartMs = startMs + options.warmupMs;
  const endMs = windowStartMs + options.durationMs;
  const clock = threadClock();
  let endWindow: (() => ThreadWindow) | undefined;
  let loadThread: ThreadWindow | undefined;
  const open = () => {
    endWindow = measureThread(clock);
    options.window.openWindow();
  };
  // Also run after the last call when that ends before the timer fires.
  const close = () => {
    if (loadThread !== undefined) return;
    loadThread = (endWindow ?? measureThread(clock))();
    options.window.closeWindow();
  };
  const timers = [setTimeout(open, options.warmupMs), setTimeout(close, options.warmupMs + options.durationMs)];

  const note = (status: number, body: string) => {
    errors++;
    const seen = unexpected.get(status);
    if (seen === undefined) unexpected.set(status, { count: 1, firstBody: body });
    else seen.count++;
  };

  const worker = async () => {
    while (performance.now() < endMs) {
      const sentMs = performance.now();
      try {
        const res = await pool.request({
          path: options.path,
          method: 'POST',
          headers: options.headers,
          body: options.nextBody(),
        });
        if (res.statusCode === options.expectStatus) await res.body.dump();
        else note(res.statusCode, (await res.body.text()).slice(0, 200));
      } catch (error) {
        note(0, error instanceof Error ? error.message : String(error));
        continue;
      }
      const doneMs = performance.now();
      if (sentMs >= windowStartMs && doneMs <= endMs) latenciesMs.push(doneMs - sentMs);
      else if (doneMs < windowStartMs) warmupCalls++;
    }
  };

  try {
    await Promise.all(Array.from({ length: options.connections }, worker));
  } finally {
    for (const timer of timers) clearTimeout(timer);
    close();
    await pool.close();
  }
  const sorted = sortedCopy(latenciesMs);
  return {
    calls: sorted.length,
    callsPerSecond: sorted.length / (options.durationMs / 1000),
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    // Set by close(), which the finally block above always runs.
    loadThread: loadThread!,
    warmupCallsPerSecond: warmupCalls / (options.warmupMs / 1000),
    errors,
    unexpected,
  };
}
