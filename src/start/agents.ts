/**
 * Starting the agents' server: one app for every agent, each agent at an
 * endpoint of its own, a port (`ports`) or a loopback address
 * (`loopback`), listened on by a socket that feeds the app
 * (http/agent/listener.ts); with `--http-executor-domain-sockets` a Unix
 * domain socket per agent for its executors. Part of the composition root,
 * with cluster.ts.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AgentFlags } from '../core/agent/flags.js';
import type { Resources } from '../core/model/resources.js';
import type { Attribute } from '../core/model/types.js';
import { buildAgentApp } from '../http/agent/app.js';
import type { Credentials } from '../http/auth.js';
import {
  AgentDirectory,
  listenOnAddresses,
  listenPorts,
  listenWildcard,
  loopbackAddresses,
  loopbackHost,
  WILDCARD_HOST,
  type AgentAddressing,
} from '../http/agent/listener.js';
import type { AgentBinding } from '../http/agent/operator-route.js';
import { agentOfDomainSocket, domainSocketPath, listenDomainSocket, MAX_SOCKET_PATH } from '../http/domain-sockets.js';
import type { ListenerLimits } from '../http/limits.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { StartError } from './errors.js';

export interface AgentEndpoint {
  readonly id: string;
  readonly url: string;
  readonly pid: string;
  readonly hostname: string;
  readonly port: number;
  /** The Unix domain socket its executors may use, with `--http-executor-domain-sockets`. */
  readonly domainSocket?: string;
}

export interface AgentsSpec {
  readonly count: number;
  /** Port of the first agent, the next ones follow; 0 = ephemeral. */
  readonly firstPort: number;
  /** What every agent is: its resources, attributes and flags. */
  readonly machine: Machine;
  /** What the agent of each index is, where agents differ (`agentGroups`); `machine` for the rest. */
  readonly machines?: readonly Machine[];
  /** The port the first agent advertises, the next ones following, instead of their listeners' (`advertisePorts`). */
  readonly advertiseFirstPort?: number;
  /** The host the agents advertise in AgentInfo and their pids, instead of the one they bind to (`advertiseHost`; ports addressing). */
  readonly advertiseHost?: string;
  readonly listener: ListenerLimits;
  /** Where the agents' executor streams go. */
  readonly executors: NonNullable<AgentBinding['executors']>;
  /** `--authenticate-http-readwrite`: the credentials each agent's operator API asks for. */
  readonly credentials?: Credentials;
  /** `--authenticate-http-readonly`: the credentials each agent's files API asks for. */
  readonly readonlyCredentials?: Credentials;
  /** `--http-executor-domain-sockets`: the work directory their sockets go under, and where their servers are kept for closing. */
  readonly domainSockets?: { readonly workDir: string; readonly servers: DomainSocket[] };
}

export interface Machine {
  readonly resources: Resources;
  readonly attributes: Attribute[];
  readonly flags: AgentFlags;
}

export interface DomainSocket {
  readonly server: http.Server;
  readonly path: string;
}

/**
 * The agents' server as it runs, for the agents that join after the start
 * (added-agents.ts): the one app every agent's endpoint feeds, and the
 * directory that tells it which agent a connection is for.
 */
export interface AgentServer {
  /** The app, its own server listening: made on first use when the cluster started with no agent. */
  app(): Promise<FastifyInstance>;
  readonly directory: AgentDirectory;
  /** The host the agents' sockets bind. */
  readonly host: string;
}

/** The started agents' endpoints, and their server. */
export interface StartedAgents {
  readonly endpoints: AgentEndpoint[];
  readonly server: AgentServer;
}

/** What each way of starting the agents made: their endpoints, the app (none for no agent), the directory. */
interface Started {
  readonly endpoints: AgentEndpoint[];
  readonly app: FastifyInstance | undefined;
  readonly directory: AgentDirectory;
}

/** Agents by the addressing asked for, falling back to ports where loopback addresses are not available. */
export async function startAgentsAddressed(
  addressing: AgentAddressing,
  driver: ClusterDriver,
  host: string,
  spec: AgentsSpec,
  servers: FastifyInstance[],
  logger: Logger,
): Promise<StartedAgents> {
  const started = await startAgentsBy(addressing, { driver, host, spec, servers, logger });
  let app: Promise<FastifyInstance> | undefined = started.app === undefined ? undefined : Promise.resolve(started.app);
  const server: AgentServer = {
    // With no agent at the start, the app's own server listens on a port of no agent's (node runs its clocks there).
    app: () =>
      (app ??= (async () => {
        const made = sharedApp(driver, started.directory, spec, servers, logger);
        await listenPorts(made, host, 1, 0, spec.listener.maxConnections);
        return made;
      })()),
    directory: started.directory,
    host,
  };
  return { endpoints: started.endpoints, server };
}

async function startAgentsBy(
  addressing: AgentAddressing,
  {
    driver,
    host,
    spec,
    servers,
    logger,
  }: {
    driver: ClusterDriver;
    host: string;
    spec: AgentsSpec;
    servers: FastifyInstance[];
    logger: Logger;
  },
): Promise<Started> {
  if (addressing === 'ports' || spec.count === 0) return startAgents(driver, host, spec, servers, logger);
  if (!loopbackHost(host)) {
    logger.warn({ host }, 'agent addressing: loopback needs an IPv4 loopback host or 0.0.0.0; agents take a port each');
    return startAgents(driver, host, spec, servers, logger);
  }
  try {
    return await startLoopbackAgents(driver, host, spec, servers, logger);
  } catch (error) {
    // Only Linux routes all of 127.0.0.0/8 to loopback; elsewhere 127.0.0.2 cannot be bound.
    if ((error as NodeJS.ErrnoException).code !== 'EADDRNOTAVAIL') throw bindError(error, spec.count);
    logger.warn(
      { host },
      'agent addressing: loopback addresses other than 127.0.0.1 cannot be bound here; agents take a port each',
    );
    return startAgents(driver, host, spec, servers, logger);
  }
}

/** A failure to bind agent addresses, as a StartError naming the option where a user can act. */
/** Which agent a port that could not be had was for: ports follow `firstPort` in agent order. */
function agentLabel(error: unknown, spec: AgentsSpec): string | undefined {
  const port = (error as { port?: number }).port;
  if (spec.firstPort === 0 || port === undefined) return undefined;
  return `agent ${port - spec.firstPort + 1}${spec.count > 1 ? ` of ${spec.count}` : ''}`;
}

function bindError(error: unknown, count: number, label = 'the agent listener'): unknown {
  const { code, address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (code === 'EADDRINUSE' || code === 'EACCES')
    return listenError(error, { label, option: 'agentPort' }, address ?? '', port ?? 0);
  if (code !== 'EMFILE') return error;
  return new StartError(
    `agentAddressing: loopback: out of file descriptors for ${count} agent addresses, a socket each on a loopback host; ` +
      `raise the limit (ulimit -n) or listen on ${WILDCARD_HOST} (host), one socket for all`,
    'agentAddressing',
  );
}

/**
 * One app for every agent, each at an address of its own on one port
 * (http/agent/listener.ts); the agents join the core once the port is known.
 */
async function startLoopbackAgents(
  driver: ClusterDriver,
  host: string,
  spec: AgentsSpec,
  servers: FastifyInstance[],
  logger: Logger,
): Promise<Started> {
  const addresses = loopbackAddresses(spec.count, host);
  const directory = new AgentDirectory('address');
  const app = sharedApp(driver, directory, spec, servers, logger);
  const cap = spec.listener.maxConnections;
  const listener =
    host === WILDCARD_HOST
      ? await listenWildcard(app, directory, spec.firstPort, cap)
      : await listenOnAddresses(app, addresses, spec.firstPort, cap);
  const port = listener.port;
  const joining = addresses.map((ip) => ({ hostname: ip, ip, port, key: ip }));
  return { endpoints: await joinAgents(driver, app, spec, directory, joining), app, directory };
}

/**
 * One app for every agent, each on a port of its own (`firstPort` and up,
 * or free ones after an ephemeral first), a socket each; the agents join the core once their
 * ports are known. Each server joins `servers` before it listens, to be
 * closed on failure.
 */
async function startAgents(
  driver: ClusterDriver,
  host: string,
  spec: AgentsSpec,
  servers: FastifyInstance[],
  logger: Logger,
): Promise<Started> {
  const directory = new AgentDirectory('port');
  if (spec.count === 0) return { endpoints: [], app: undefined, directory };
  const app = sharedApp(driver, directory, spec, servers, logger);
  let ports: number[];
  try {
    ports = await listenPorts(app, host, spec.count, spec.firstPort, spec.listener.maxConnections);
  } catch (error) {
    throw bindError(error, spec.count, agentLabel(error, spec));
  }
  const hostname = spec.advertiseHost ?? host;
  const joining = ports.map((port) => ({ hostname, ip: hostname, port, key: port, url: `http://${host}:${port}` }));
  return { endpoints: await joinAgents(driver, app, spec, directory, joining), app, directory };
}

/** The app every agent's endpoint feeds; until an agent joins, its endpoint answers as a recovering agent. */
function sharedApp(
  driver: ClusterDriver,
  directory: AgentDirectory,
  spec: AgentsSpec,
  servers: FastifyInstance[],
  logger: Logger,
): FastifyInstance {
  const binding = {
    driver,
    agentId: (req: FastifyRequest) => agentOfDomainSocket(req) ?? directory.agentOf(req.socket),
    executors: spec.executors,
  };
  const app = buildAgentApp({
    logger,
    name: 'agents',
    listener: spec.listener,
    agent: binding,
    ...credentialsOf(spec),
  });
  servers.push(app);
  return app;
}

interface Joining {
  readonly hostname: string;
  readonly ip: string;
  /** The port its listener got. */
  readonly port: number;
  /** Where the directory finds it: its address or its port. */
  readonly key: string | number;
  /** Where clients reach it, when not at `ip:port`. */
  readonly url?: string;
}

/** The agents join the core at their endpoints, in order, and the directory learns where each is. */
async function joinAgents(
  driver: ClusterDriver,
  app: FastifyInstance,
  spec: AgentsSpec,
  directory: AgentDirectory,
  joining: readonly Joining[],
): Promise<AgentEndpoint[]> {
  const agents: AgentEndpoint[] = [];
  for (const [i, j] of joining.entries()) {
    const agent = driver.input((c) =>
      c.addAgent({
        hostname: j.hostname,
        ip: j.ip,
        port: advertised(spec, i, j.port),
        ...(spec.machines?.[i] ?? spec.machine),
      }),
    );
    directory.add(j.key, agent.id);
    const domainSocket = await serveDomainSocket(app, agent.id, spec);
    agents.push({
      id: agent.id,
      url: j.url ?? `http://${j.ip}:${j.port}`,
      pid: agent.pid,
      hostname: j.hostname,
      port: j.port,
      ...domainSocket,
    });
  }
  return agents;
}

/** With domain sockets on, the agent's socket: listening, kept for closing, its path for the endpoint. */
export async function serveDomainSocket(
  app: FastifyInstance,
  agentId: string,
  spec: AgentsSpec,
): Promise<{ domainSocket?: string }> {
  if (spec.domainSockets === undefined) return {};
  const path = domainSocketPath(spec.domainSockets.workDir, agentId);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new StartError(
      `workDir: the agents' socket paths (${path}) pass the ${MAX_SOCKET_PATH} bytes a Unix socket address holds; choose a shorter one`,
      ['workDir'],
    );
  }
  const server = await listenDomainSocket(app, path, agentId);
  spec.domainSockets.servers.push({ server, path });
  return { domainSocket: path };
}

const credentialsOf = (spec: AgentsSpec) => ({
  ...(spec.credentials === undefined ? {} : { credentials: spec.credentials }),
  ...(spec.readonlyCredentials === undefined ? {} : { readonlyCredentials: spec.readonlyCredentials }),
});

/** Which server listens, for its log line and a refused start: `master 2 of 3`, `agent 1`; `option` chose its port. */
export interface ServerName {
  readonly label: string;
  readonly option: 'port' | 'agentPort';
}

/** Listens, logging `<server> listening at <url>`; a port that cannot be had is a StartError naming the server and the port. */
export async function listen(app: FastifyInstance, host: string, port: number, server: ServerName): Promise<number> {
  try {
    await app.listen({ host, port, listenTextResolver: (address) => `${server.label} listening at ${address}` });
  } catch (error) {
    throw listenError(error, server, host, port);
  }
  return (app.server.address() as AddressInfo).port;
}

/** Why a server could not listen, as a StartError where the user can act; other errors as they are. */
export function listenError(error: unknown, server: ServerName, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${server.label} cannot listen on ${host}:${port}`;
  if (code === 'EADDRINUSE') return new StartError(`${where}: the port is in use`, server.option);
  if (code === 'EACCES')
    return new StartError(`${where}: permission denied (ports below 1024 need privileges)`, server.option);
  if (code === 'EADDRNOTAVAIL') return new StartError(`${where}: ${host} is not an address of this machine`, 'host');
  return error;
}

function advertised(spec: AgentsSpec, index: number, port: number): number {
  return spec.advertiseFirstPort === undefined ? port : spec.advertiseFirstPort + index;
}
