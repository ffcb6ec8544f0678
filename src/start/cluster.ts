/**
 * The composition root of the library: starting a whole cluster in this
 * process wires the core, a time driver, the master's HTTP server and the
 * agents' (one per agent, or one for all with `loopback` addressing), all
 * on the given host. Nothing below imports this. What the core is given
 * comes from core-options.ts, the limits from limits.ts, authentication
 * from auth.ts, executors' surroundings from executors.ts.
 */
import { rmSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { controlMethods, controlOf, type ControlMethods } from './control.js';
import { listenMasters } from './masters.js';
import { advertisedHost } from './advertise.js';
import { startAgentsAddressed, type AgentEndpoint, type AgentsSpec, type DomainSocket } from './agents.js';
import { closeDomainSocket } from '../http/domain-sockets.js';
import { RealtimeDriver, VirtualDriver, type ClusterDriver, type ClusterFailure } from '../runtime/driver.js';
import { createLogger, logTrace } from '../runtime/logging.js';
import { ClusterMetrics } from '../runtime/metrics.js';
import type { MisuseReport } from '../core/master/misuse-report.js';
import { resolveStartOptions } from './options.js';
import type { StartClusterOptions } from './cluster-options.js';
import { agentsOf, clusterOf, masterOptionsOf } from './core-options.js';
import { limitsOf } from './limits.js';
import { authOf, masterAuthOf, tokensOf } from './auth.js';
import { outputsOf, startEngine, workDirOf } from './executors.js';

export type { AgentGroupOptions, LimitOptions, StartClusterOptions } from './cluster-options.js';
export { DEFAULT_AGENT_RESOURCES } from './option-table.js';
export { DEFAULT_LIMITS } from './limits.js';
export { type AgentEndpoint };

export interface RunningCluster extends ControlMethods {
  /** The first master's URL (the leader at start). */
  readonly masterUrl: string;
  /** Every master's URL, by index (`--masters`). */
  readonly masterUrls: readonly string[];
  /** The URL of the master that leads now; undefined while an election is on. */
  leaderUrl(): string | undefined;
  /** Where spawned executors' sandboxes are (spawn mode). */
  readonly workDir: string | undefined;
  /** The container engine's Unix socket, when it runs. */
  readonly engineSocket: string | undefined;
  readonly agents: readonly AgentEndpoint[];
  readonly driver: ClusterDriver;
  /** The protocol-misuse report: what the frameworks did that the cluster tolerates but they should not. */
  misuse(): MisuseReport;
  close(): Promise<void>;
}

/**
 * Starts a cluster: the options checked and given their defaults, the
 * core and its driver made (nothing listens yet), then the masters'
 * listeners and the agents'. A refused start (a StartError) or a listener
 * that cannot bind closes what was started.
 */
export async function startCluster(given: StartClusterOptions = {}): Promise<RunningCluster> {
  const options = resolveStartOptions(given);
  const agents = agentsOf(options);
  const limits = limitsOf(options);
  const { credentials, acls } = authOf(options);
  const advertised = advertisedHost(options, options.host);
  const cluster = clusterOf(options, { ...masterOptionsOf(options, advertised), ...(acls === undefined ? {} : { acls }) });
  const driver: ClusterDriver = options.time === 'virtual' ? new VirtualDriver(cluster) : new RealtimeDriver(cluster);
  // The driver's cluster: a reset or a restore swaps it.
  const logger = options.logger ?? createLogger(options.logLevel, options.time === 'virtual' ? () => driver.cluster.epochMs + driver.cluster.now() : undefined);
  logTrace(cluster, logger);

  const servers: FastifyInstance[] = [];
  stopOnFailure(driver, servers, logger, options.onFailure);
  const workDir = workDirOf(options, agents.machine.flags);
  const sockets: DomainSocket[] = [];
  const tokens = await tokensOf(options);
  const { connections, streamBudget, containers } = outputsOf(driver, limits.master, agents.machine.flags, { workDir, options, tokens }, logger);
  const engine = await startEngine(options, { driver, connections }, limits.agentListener, workDir);
  const control = controlOf(driver, connections, logger);
  const metrics = new ClusterMetrics(driver);
  const stop = async (): Promise<void> => {
    driver.close();
    metrics.close();
    await Promise.all([...servers.map((s) => s.close()), ...sockets.map((d) => closeDomainSocket(d.server, d.path)), engine?.close()]);
    await containers?.close();
    if (workDir?.own === true) rmSync(workDir.path, { recursive: true, force: true });
  };
  try {
    const masterUrls = await listenMasters(options.masters, options.host, options.port, {
      driver,
      simControl: control,
      metrics,
      logger,
      connections,
      streamBudget,
      ...limits.master,
      ...(options.streamKeepaliveMs === undefined ? {} : { keepaliveMs: options.streamKeepaliveMs }),
      ...masterAuthOf(options, credentials),
    }, servers, options.advertisePorts?.master);
    const agentSpec: AgentsSpec = {
      ...agents,
      firstPort: options.agentPort,
      ...(options.advertisePorts === undefined ? {} : { advertiseFirstPort: options.advertisePorts.firstAgent }),
      advertiseHost: advertised,
      listener: limits.agentListener,
      executors: { connections, budget: streamBudget, ...(tokens === undefined ? {} : { tokens }), ...(engine === undefined ? {} : { engine: engine.helpers }) },
      ...(options.authenticateHttpReadwrite ? { credentials: credentials! } : {}),
      ...(options.httpExecutorDomainSockets ? { domainSockets: { workDir: workDir!.path, servers: sockets } } : {}),
    };
    const endpoints = await startAgentsAddressed(options.agentAddressing, driver, options.host, agentSpec, servers, logger);
    control.markStarted();
    return running(driver, control, { masterUrls, agents: endpoints, workDir: workDir?.path, engineSocket: engine?.path }, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The running cluster: the control methods, with what was started and how to stop it. */
function running(
  driver: ClusterDriver,
  control: ReturnType<typeof controlOf>,
  started: Pick<RunningCluster, 'masterUrls' | 'agents' | 'workDir' | 'engineSocket'>,
  stop: () => Promise<void>,
): RunningCluster {
  const { masterUrls } = started;
  // Assigned onto the control methods, so that `cluster` stays their getter.
  return Object.assign(controlMethods(driver, control), {
    ...started,
    masterUrl: masterUrls[0]!,
    leaderUrl: () => driver.read((view) => masterUrls[view.leaderIndex() ?? -1]),
    driver,
    misuse: () => driver.read((view) => view.misuse()),
    close: async () => {
      await stop();
      if (driver.failure !== undefined) throw driver.failure;
    },
  });
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
