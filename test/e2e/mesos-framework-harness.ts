/**
 * Drives `mesos-framework` (a third-party Node scheduler library that speaks
 * JSON to the v1 scheduler API) from a test, without changing the library:
 * its events are recorded so a test can wait on them, its own logging is
 * silenced, and `dispose()` stops it for good.
 *
 * What the library does on its own (read from its source, 0.5.x):
 *   - SUBSCRIBE to http://<masterUrl>:<port>/api/v1/scheduler, then keeps
 *     `Mesos-Stream-Id` from the response for every later call;
 *   - launches the `tasks` it was given on the offers it gets, declines the
 *     rest (no filters: the master's default refuse time);
 *   - acknowledges every UPDATE that carries a uuid, and skips those without;
 *   - treats any answer to a call other than 202 as an error;
 *   - re-subscribes with its old framework id whenever the stream ends
 *     (after an exponential backoff), and on `masterConnectionTimeout`
 *     seconds without a byte on the stream asks the master for a redirect
 *     and exits the process if none comes.
 */
import type { ClientRequest } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { EventEmitter } from 'node:events';

/** The parts of a JSON `TaskStatus` the tests read. */
export interface LibraryStatus {
  task_id: { value: string };
  state: string;
  source?: string;
  reason?: string;
  message?: string;
  uuid?: string;
  agent_id?: { value: string };
  executor_id?: { value: string };
}

export interface LibraryTask {
  name: string;
  taskId?: string;
  runtimeInfo?: { agentId?: string; state?: string };
}

interface Logger {
  error(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  info(...args: unknown[]): void;
  verbose(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  silly(...args: unknown[]): void;
  log(...args: unknown[]): void;
}

/** The library's `Scheduler` as far as these tests use it. */
export interface LibraryScheduler extends EventEmitter {
  frameworkId: string | null;
  mesosStreamId: string | null | undefined;
  launchedTasks: LibraryTask[];
  pendingTasks: LibraryTask[];
  httpRequest: ClientRequest;
  logger: Logger;
  subscribe(): void;
  kill(taskId: string, agentId: string): void;
  reconcile(taskId?: string, agentId?: string): void;
  teardown(): void;
}

interface LibraryModule {
  Scheduler: new (options: Record<string, unknown>) => LibraryScheduler;
  Mesos: { getMesos(): { CommandInfo: new (...fields: unknown[]) => object } };
}

// The library is CommonJS without type declarations.
const library = createRequire(import.meta.url)('mesos-framework') as LibraryModule;

/** A `CommandInfo` of the library's protobuf schema: a shell command. */
export function shellCommand(command: string): object {
  const { CommandInfo } = library.Mesos.getMesos();
  // uris, environment, shell, value, arguments, user
  return new CommandInfo(null, null, true, command, null, null);
}

export interface Recorded {
  readonly index: number;
  readonly name: string;
  readonly data: unknown;
}

/** Every event the library emits, in order, by name. */
const EVENTS = [
  'ready',
  'sent_subscribe',
  'subscribed',
  'heartbeat',
  'offers',
  'rescind',
  'update',
  'failure',
  'message',
  'sent_accept',
  'sent_decline',
  'sent_acknowledge',
  'sent_kill',
  'sent_reconcile',
  'sent_teardown',
  'task_launched',
  'error',
] as const;

export interface Harness {
  readonly scheduler: LibraryScheduler;
  readonly events: readonly Recorded[];
  /** The library's log lines (it would otherwise print them and write log files). */
  readonly logLines: readonly string[];
  /** The first event at or after `from` with this name that satisfies `match`. */
  waitFor(
    name: string,
    match?: (data: any) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<Recorded>;
  updates(from?: number): LibraryStatus[];
  errorMessages(from?: number): string[];
  /** Stops re-subscription and closes the library's subscription sockets. */
  dispose(): void;
}

export function createHarness(masterUrl: string, options: Record<string, unknown>): Harness {
  const url = new URL(masterUrl);
  const scheduler = new library.Scheduler({
    masterUrl: url.hostname,
    port: Number(url.port),
    // Keep its logger quiet while constructing; it is replaced right after.
    logging: { level: 'error' },
    ...options,
  });
  const logLines: string[] = [];
  const line =
    (level: string) =>
    (...args: unknown[]) =>
      void logLines.push(`${level}: ${args.map(String).join(' ')}`);
  scheduler.logger = {
    error: line('error'),
    warn: line('warn'),
    info: line('info'),
    verbose: () => {},
    debug: () => {},
    silly: () => {},
    log: (level: unknown, ...args: unknown[]) => line(String(level))(...args),
  };

  const events: Recorded[] = [];
  const waiters = new Set<(event: Recorded) => void>();
  for (const name of EVENTS) {
    scheduler.on(name, (data: unknown) => {
      const event = { index: events.length, name, data };
      events.push(event);
      for (const waiter of [...waiters]) waiter(event);
    });
  }

  // Every subscription request's socket, so that dispose() can close them:
  // the library leaves its idle-timeout handler on them, and that handler
  // exits the process when it finds no master to redirect to.
  const sockets = new Set<Socket>();
  const subscribe = scheduler.subscribe.bind(scheduler);
  let disposed = false;
  scheduler.subscribe = () => {
    if (disposed) return;
    subscribe();
    scheduler.httpRequest.on('socket', (socket: Socket) => sockets.add(socket));
  };

  const describe = (event: Recorded): string => {
    if (event.name === 'update') {
      const s = (event.data as { status: LibraryStatus }).status;
      return `update ${s.task_id.value} ${s.state} ${s.reason ?? ''}`;
    }
    if (event.name === 'error') return `error ${errorText(event.data)}`;
    return event.name;
  };

  return {
    scheduler,
    events,
    logLines,
    waitFor(name, match = () => true, { from = 0, timeoutMs = 5000 } = {}) {
      const found = events.slice(from).find((e) => e.name === name && match(e.data));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<Recorded>((resolve, reject) => {
        const waiter = (event: Recorded): void => {
          if (event.index < from || event.name !== name || !match(event.data)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(event);
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const recent = events.slice(-20).map(describe).join('\n  ');
          reject(
            new Error(
              `no '${name}' event within ${timeoutMs} ms; last events:\n  ${recent}\nlibrary log:\n  ${logLines.slice(-10).join('\n  ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    updates(from = 0) {
      return events
        .slice(from)
        .filter((e) => e.name === 'update')
        .map((e) => (e.data as { status: LibraryStatus }).status);
    },
    errorMessages(from = 0) {
      return events
        .slice(from)
        .filter((e) => e.name === 'error')
        .map((e) => errorText(e.data));
    },
    dispose() {
      disposed = true;
      for (const socket of sockets) {
        socket.removeAllListeners('timeout');
        socket.setTimeout(0);
        socket.destroy();
      }
      sockets.clear();
    },
  };
}

/** The library emits errors as Error objects, `{ message }` objects or plain strings. */
export function errorText(data: unknown): string {
  if (typeof data === 'string') return data;
  if (typeof data === 'object' && data !== null && 'message' in data)
    return String((data as { message: unknown }).message);
  return JSON.stringify(data);
}
