/**
 * One HTTP app for every agent. Every agent keeps an endpoint of its own,
 * as real executor libraries build `http://<endpoint>/api/v1/executor`
 * from it, and a connection is dispatched to its agent (`AgentDirectory`)
 * by where it arrived:
 *
 *   ports      `host:P`, a port per agent: by the local port
 *   loopback   `127.0.0.N:P` (N per agent, P shared): by the local address
 *              (`socket.localAddress`); Linux routes the whole of
 *              127.0.0.0/8 to the loopback interface, so these addresses
 *              need no setup
 *
 * An agent's endpoint costs one listening socket that hands its
 * connections to the app's server, never an app of its own: a fastify app
 * (routes, schemas, hooks) takes tens of milliseconds to build and
 * megabytes to hold, a socket microseconds and a file descriptor.
 *
 * How many sockets listen with loopback addressing depends on the host the
 * cluster binds:
 *
 *   a loopback host   one listening socket per agent address, all feeding
 *                     the one app; the cluster listens on loopback only
 *   0.0.0.0           one socket on the wildcard address serves them all,
 *                     as the user asked to listen everywhere; a connection
 *                     to an address of no agent is closed at once
 *
 * Where an address of 127.0.0.0/8 other than 127.0.0.1 cannot be bound
 * (not Linux), `loopbackAvailable` says so and agents take a port each.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';

/** `--agent-addressing`: `loopback`, one address per agent and one app; `ports`, one port and app per agent. */
export const AGENT_ADDRESSINGS = ['ports', 'loopback'] as const;
export type AgentAddressing = (typeof AGENT_ADDRESSINGS)[number];

export const WILDCARD_HOST = '0.0.0.0';

/** Agents' addresses inside 127.0.0.0/8: 127.0.0.2 and up, skipping the master's. */
export function loopbackAddresses(count: number, masterHost: string): string[] {
  const out: string[] = [];
  for (let n = 2; out.length < count; n++) {
    if (n >= 1 << 24) throw new RangeError(`at most ${(1 << 24) - 3} agents fit in 127.0.0.0/8`);
    const address = `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    if (address !== masterHost) out.push(address);
  }
  return out;
}

/** Whether agents can be given addresses of their own on this host: an IPv4 loopback host, or the wildcard. */
export function loopbackHost(host: string): boolean {
  return host === WILDCARD_HOST || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A socket's local address, IPv4-mapped IPv6 spelled as IPv4. */
function localAddressOf(socket: net.Socket): string {
  const address = socket.localAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

/**
 * Which agent a connection is for, for the handlers of the shared app: by
 * the local address it reached (agents share one port) or by the local
 * port (agents share one host).
 */
export class AgentDirectory {
  readonly #byKey = new Map<string, string>();
  /** Agents that joined later at an address and port of their own (`address:port`), before the shared address. */
  readonly #byEndpoint = new Map<string, string>();

  constructor(readonly by: 'address' | 'port' = 'address') {}

  /** `where`: the agent's address, or its port. */
  add(where: string | number, agentId: string): void {
    this.#byKey.set(String(where), agentId);
  }

  /** An agent at an address and a port of its own: one added to agents that share their port. */
  addEndpoint(address: string, port: number, agentId: string): void {
    this.#byEndpoint.set(`${address}:${port}`, agentId);
  }

  /** Forgets an agent: its connections find none. */
  remove(agentId: string): void {
    for (const map of [this.#byKey, this.#byEndpoint]) for (const [key, id] of map) if (id === agentId) map.delete(key);
  }

  /** The agent a connection arrived for. */
  agentOf(socket: net.Socket): string | undefined {
    const address = localAddressOf(socket);
    const own = this.#byEndpoint.size === 0 ? undefined : this.#byEndpoint.get(`${address}:${socket.localPort}`);
    return own ?? this.#byKey.get(this.by === 'address' ? address : String(socket.localPort));
  }
}

export interface SharedListener {
  /** The port every agent address listens on. */
  readonly port: number;
}

/** The log line of the one listener of every agent. */
const LISTENING = (address: string): string => `the agent listener listening at ${address}`;

/**
 * Binds `addresses` on one port for `app` (ready, not listening): the app's
 * own server listens on the first address (so node runs its header and
 * request clocks), plain sockets on the others hand their connections to
 * it. Each address takes at most `maxConnections` connections. A `port` of
 * 0 takes the one the first address gets. Closing the app closes them all.
 */
export async function listenOnAddresses(
  app: FastifyInstance,
  addresses: readonly string[],
  port: number,
  maxConnections: number,
): Promise<SharedListener> {
  const [first, ...rest] = addresses;
  if (first === undefined) throw new RangeError('no address to listen on');
  const sockets = new FeedingSockets(app, maxConnections);
  const shared = await sockets.listenApp(first, port);
  // Binding is synchronous in libuv; waiting for each in turn only adds ticks, so they listen together.
  await Promise.all(rest.map((host) => sockets.listen(host, shared)));
  return { port: shared };
}

/**
 * Binds `count` ports on `host` for `app` (ready, not listening), the
 * app's own server on the first, plain sockets feeding it on the others:
 * `firstPort` and the ports after it, or with 0 an ephemeral first port
 * and the free ports after it. Asking the kernel for an ephemeral port
 * each time would cost a search of every port bound, and ten thousand of
 * them seconds; a port named costs a lookup. The ports bound, in order.
 */
export async function listenPorts(
  app: FastifyInstance,
  host: string,
  count: number,
  firstPort: number,
  maxConnections: number,
): Promise<number[]> {
  if (count < 1) throw new RangeError('no port to listen on');
  const sockets = new FeedingSockets(app, maxConnections);
  const ports = [await sockets.listenApp(host, firstPort)];
  if (firstPort !== 0) {
    const rest = Array.from({ length: count - 1 }, (_, i) => sockets.listen(host, firstPort + i + 1));
    return [...ports, ...(await Promise.all(rest))];
  }
  let next = ports[0]! + 1;
  while (ports.length < count) {
    // Past the last port, the kernel chooses the rest.
    const candidates = Array.from({ length: count - ports.length }, () => (next > MAX_PORT ? 0 : next++));
    const bound = await Promise.allSettled(candidates.map((port) => sockets.listen(host, port)));
    for (const result of bound) {
      if (result.status === 'fulfilled') ports.push(result.value);
      else if ((result.reason as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw result.reason;
    }
  }
  return ports;
}

const MAX_PORT = 65_535;

/**
 * The sockets of one app: its own server's, and plain ones that hand their
 * connections to it, each taking at most `maxConnections`. Closing the
 * app closes them all.
 */
class FeedingSockets {
  readonly #servers = new Set<net.Server>();
  readonly #connection: (socket: net.Socket) => void;
  readonly #drop: (data?: net.DropArgument) => void;

  constructor(
    private readonly app: FastifyInstance,
    private readonly maxConnections: number,
  ) {
    // One pair of handlers for every socket: thousands of closures would cost heap per agent.
    this.#connection = (socket) => app.server.emit('connection', socket);
    this.#drop = (data) => app.server.emit('drop', data);
    app.addHook('onClose', async () => {
      await Promise.all([...this.#servers].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    });
  }

  /** The app's own server listens (so node runs its header and request clocks); the port it got. */
  async listenApp(host: string, port: number): Promise<number> {
    await this.app.listen({ host, port, listenTextResolver: LISTENING });
    return (this.app.server.address() as net.AddressInfo).port;
  }

  /** A socket feeding the app listens; the port it got. One that cannot bind is dropped. */
  listen(host: string, port: number): Promise<number> {
    const server = net.createServer({ noDelay: true }, this.#connection);
    server.maxConnections = this.maxConnections;
    server.on('drop', this.#drop);
    this.#servers.add(server);
    return new Promise((resolve, reject) => {
      const failed = (error: Error): void => {
        this.#servers.delete(server);
        reject(error);
      };
      server.once('error', failed);
      server.listen({ host, port }, () => {
        server.off('error', failed);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }
}

/** A socket of its own for one agent that joined after the others: its port, and how to close it. */
export interface AgentSocket {
  readonly port: number;
  /** Stops listening and cuts the connections it took. */
  close(): Promise<void>;
}

/**
 * Binds `host:port` (0: an ephemeral port) for an agent that joined after
 * the start, feeding `app`, whose own server listens already: a socket of
 * its own, so that it closes alone when the agent goes.
 */
export function listenAgentSocket(
  app: FastifyInstance,
  host: string,
  port: number,
  maxConnections: number,
): Promise<AgentSocket> {
  const open = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    app.server.emit('connection', socket);
  });
  server.maxConnections = maxConnections;
  server.on('drop', (data) => app.server.emit('drop', data));
  const close = (): Promise<void> => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of open) socket.destroy();
    return closed;
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve({ port: (server.address() as net.AddressInfo).port, close });
    });
  });
}

/**
 * Only on the wildcard host: one socket for every agent address. The cap
 * applies per agent address; a connection to any other address is closed.
 */
export async function listenWildcard(
  app: FastifyInstance,
  directory: AgentDirectory,
  port: number,
  maxConnections: number,
  host: string = WILDCARD_HOST,
): Promise<SharedListener> {
  const open = new Map<string, number>();
  // The cap is per address, counted below; the server's own would count all agents together.
  app.server.maxConnections = Number.MAX_SAFE_INTEGER;
  app.server.prependListener('connection', (socket: net.Socket) => {
    const address = localAddressOf(socket);
    const count = open.get(address) ?? 0;
    if (directory.agentOf(socket) === undefined || count >= maxConnections) {
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => open.set(address, (open.get(address) ?? 1) - 1));
  });
  await app.listen({ host, port, listenTextResolver: LISTENING });
  return { port: (app.server.address() as net.AddressInfo).port };
}
