/**
 * One HTTP app for many agents. Every agent keeps an endpoint of its own,
 * `127.0.0.N:P` (N per agent, P shared), as real executor libraries build
 * `http://<endpoint>/api/v1/executor` from it; Linux routes the whole of
 * 127.0.0.0/8 to the loopback interface, so these addresses need no setup.
 * A connection is dispatched by the local address it arrived on
 * (`socket.localAddress`) to its agent (`AgentDirectory`).
 *
 * How many sockets listen depends on the host the cluster binds:
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

/** Which agent an address belongs to, for the handlers of a shared app (its agents share one port). */
export class AgentDirectory {
  readonly #byAddress = new Map<string, string>();

  add(ip: string, agentId: string): void {
    this.#byAddress.set(ip, agentId);
  }

  /** The agent a connection arrived for, by the address it reached. */
  agentOf(socket: net.Socket): string | undefined {
    return this.#byAddress.get(localAddressOf(socket));
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
export async function listenOnAddresses(app: FastifyInstance, addresses: readonly string[], port: number, maxConnections: number): Promise<SharedListener> {
  const [first, ...rest] = addresses;
  if (first === undefined) throw new RangeError('no address to listen on');
  const extra: net.Server[] = [];
  app.addHook('onClose', async () => {
    await Promise.all(extra.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });
  await app.listen({ host: first, port, listenTextResolver: LISTENING });
  const shared = (app.server.address() as net.AddressInfo).port;
  // One pair of handlers for every socket: thousands of closures would cost heap per agent.
  const feed: Feed = {
    connection: (socket) => app.server.emit('connection', socket),
    drop: (data) => app.server.emit('drop', data),
  };
  // Binding is synchronous in libuv; waiting for each in turn only adds ticks, so they listen together.
  await Promise.all(rest.map((address) => listenFeeding(feed, address, shared, maxConnections, extra)));
  return { port: shared };
}

interface Feed {
  readonly connection: (socket: net.Socket) => void;
  readonly drop: (data?: net.DropArgument) => void;
}

function listenFeeding(feed: Feed, host: string, port: number, maxConnections: number, into: net.Server[]): Promise<void> {
  const server = net.createServer({ noDelay: true }, feed.connection);
  server.maxConnections = maxConnections;
  server.on('drop', feed.drop);
  into.push(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
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
