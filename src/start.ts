/**
 * The composition root of the library: starting a whole cluster in this
 * process wires the core, a time driver, the master's HTTP server and one
 * server per agent, all on the given host. Nothing below imports this.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Cluster } from './core/cluster.js';
import { parseResources } from './core/resources.js';
import { buildAgentApp } from './http/agent-app.js';
import { buildMasterApp } from './http/master-app.js';
import { RealtimeDriver, VirtualDriver, type ClusterDriver, type ClusterFailure, type TimeMode } from './runtime/driver.js';
import { createLogger, logTrace, type LogLevel } from './runtime/logging.js';
import { parseAttributes } from './wire/convert-common.js';
import { VERSION } from './wire/version.js';

export const DEFAULT_AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';

export interface StartClusterOptions {
  /** Address every server binds to (default 127.0.0.1). */
  readonly host?: string;
  /** Master port; 0 picks a free one (default 0). */
  readonly port?: number;
  readonly agents?: number;
  readonly agentResources?: string;
  readonly agentAttributes?: string;
  /** Port of the first agent, the next ones follow; 0 = ephemeral (default). */
  readonly agentPort?: number;
  readonly seed?: string | number;
  readonly heartbeatIntervalSeconds?: number;
  /** Seconds between batched allocations of recovered resources (upstream `--allocation_interval`, default 1). */
  readonly allocationIntervalSeconds?: number;
  /** `realtime` (default) follows the wall clock; `virtual` moves only on `advance()`. */
  readonly time?: TimeMode;
  readonly logLevel?: LogLevel;
  readonly logger?: Logger;
  readonly recordTrace?: boolean;
  /**
   * Called once if the core fails (a broken invariant is a bug): the
   * cluster has stopped serving, its listeners are closing, and `close()`
   * will reject with the same error. `clustersim up` exits non-zero.
   */
  readonly onFailure?: (failure: ClusterFailure) => void;
  /** Wall-clock silence after which an event stream sends a HEARTBEAT (default 5 s). */
  readonly streamKeepaliveMs?: number;
}

export interface AgentEndpoint {
  readonly id: string;
  readonly url: string;
  readonly pid: string;
  readonly hostname: string;
  readonly port: number;
}

export interface RunningCluster {
  readonly masterUrl: string;
  readonly agents: readonly AgentEndpoint[];
  readonly cluster: Cluster;
  readonly driver: ClusterDriver;
  /** Moves virtual time forward (virtual time only). */
  advance(ms: number): void;
  close(): Promise<void>;
}

export class StartError extends Error {}

export async function startCluster(options: StartClusterOptions = {}): Promise<RunningCluster> {
  const host = options.host ?? '127.0.0.1';
  const resources = parseResources(options.agentResources ?? DEFAULT_AGENT_RESOURCES);
  if (typeof resources === 'string') throw new StartError(`--agent-resources: ${resources}`);
  const attributes = parseAttributes(options.agentAttributes ?? '');
  if (typeof attributes === 'string') throw new StartError(`--agent-attributes: ${attributes}`);
  const agentCount = options.agents ?? 3;
  if (!Number.isInteger(agentCount) || agentCount < 0) throw new StartError(`--agents must be a whole number, got ${agentCount}`);
  const heartbeat = options.heartbeatIntervalSeconds ?? 15;
  if (!(heartbeat > 0)) throw new StartError(`--heartbeat-interval must be positive, got ${heartbeat}`);
  const allocation = options.allocationIntervalSeconds ?? 1;
  if (!(allocation > 0)) throw new StartError(`--allocation-interval must be positive, got ${allocation}`);

  const time = options.time ?? 'realtime';
  const cluster = new Cluster({
    seed: options.seed ?? 0,
    ...(time === 'realtime' ? { epochMs: Date.now() } : {}),
    recordTrace: options.recordTrace ?? false,
    master: {
      hostname: host,
      ip: host,
      port: options.port ?? 0,
      version: VERSION,
      heartbeatIntervalMs: heartbeat * 1000,
      allocationIntervalMs: allocation * 1000,
    },
  });
  const logger = options.logger ?? createLogger(options.logLevel ?? 'silent', time === 'virtual' ? () => cluster.epochMs + cluster.now() : undefined);
  logTrace(cluster, logger);
  const driver: ClusterDriver = time === 'virtual' ? new VirtualDriver(cluster) : new RealtimeDriver(cluster);

  const servers: FastifyInstance[] = [];
  stopOnFailure(driver, servers, logger, options.onFailure);
  try {
    const masterApp = buildMasterApp({
      driver,
      logger,
      ...(options.streamKeepaliveMs === undefined ? {} : { keepaliveMs: options.streamKeepaliveMs }),
    });
    servers.push(masterApp);
    const masterPort = await listen(masterApp, host, options.port ?? 0);
    // A port of 0 is known only now.
    driver.input((c) => c.bindMasterPort(masterPort));
    const agents: AgentEndpoint[] = [];
    for (let i = 0; i < agentCount; i++) {
      const app = buildAgentApp({ logger });
      servers.push(app);
      const wanted = options.agentPort === undefined || options.agentPort === 0 ? 0 : options.agentPort + i;
      const port = await listen(app, host, wanted);
      const agent = driver.input((c) => c.addAgent({ hostname: host, ip: host, port, resources, attributes }));
      agents.push({ id: agent.id, url: `http://${host}:${port}`, pid: agent.pid, hostname: host, port });
    }
    return {
      masterUrl: `http://${host}:${masterPort}`,
      agents,
      cluster,
      driver,
      advance: (ms) => driver.advance(ms),
      close: async () => {
        driver.close();
        await Promise.all(servers.map((s) => s.close()));
        if (driver.failure !== undefined) throw driver.failure;
      },
    };
  } catch (error) {
    driver.close();
    await Promise.all(servers.map((s) => s.close()));
    throw error;
  }
}

/**
 * A failed core stops the whole cluster loudly: one fatal log line with
 * the seed, the error and the last trace entries, then every listener
 * closes (open streams are cut), so no client is served a broken state.
 */
function stopOnFailure(driver: ClusterDriver, servers: FastifyInstance[], logger: Logger, onFailure?: (f: ClusterFailure) => void): void {
  driver.onFailure((failure) => {
    logger.fatal({ seed: failure.seed, lastEntries: failure.lastEntries, err: failure.cause }, failure.message);
    driver.close();
    for (const server of servers) void server.close();
    onFailure?.(failure);
  });
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<number> {
  await app.listen({ host, port });
  return (app.server.address() as AddressInfo).port;
}
