/**
 * The composition root of the library: starting a whole cluster in this
 * process wires the core, a time driver, the master's HTTP server and the
 * agents' (one per agent, or one for all with `loopback` addressing), all
 * on the given host. Nothing below imports this. What the core is given
 * comes from core-options.ts, the limits from limits.ts, authentication
 * from auth.ts, executors' surroundings from executors.ts.
 */
import { rmSync } from 'node:fs';
import type { ProcessContainers } from '../runtime/containers.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { controlMethods, controlOf, type ControlMethods } from './control.js';
import { listenMasters, type MasterListenOptions } from './masters.js';
import { advertisedHost } from './advertise.js';
import { startAgentsAddressed, type AgentEndpoint, type AgentsSpec, type DomainSocket } from './agents.js';
import { AddedAgents, newAgentOf, type AddAgentOptions } from './added-agents.js';
import { closeDomainSocket } from '../http/domain-sockets.js';
import { RealtimeDriver, VirtualDriver, type ClusterDriver, type ClusterFailure } from '../runtime/driver.js';
import { createLogger, logTrace } from '../runtime/logging.js';
import { ClusterMetrics } from '../runtime/metrics.js';
import type { MisuseReport } from '../core/master/misuse-report.js';
import { resolveStartOptions, type ResolvedOptions } from './options.js';
import type { StartClusterOptions } from './cluster-options.js';
import { agentsOf, clusterOf, masterOptionsOf } from './core-options.js';
import { limitsOf } from './limits.js';
import { authOf, masterAuthOf, tokensOf } from './auth.js';
import { outputsOf, startEngine, workDirOf, type WorkDir } from './executors.js';
import type { Acls } from '../core/model/authz.js';
import type { AgentFlags } from '../core/agent/flags.js';
import type { Credentials } from '../http/auth.js';
import type { ExecutorTokens } from '../http/agent/executor-token.js';
import type { SimControl } from '../runtime/sim-control.js';
import { InProcessTransport } from '../http/in-process.js';
import type { Transport } from '../client/transport.js';

export type { AgentGroupOptions, LimitOptions, StartClusterOptions } from './cluster-options.js';
export { DEFAULT_AGENT_RESOURCES } from './option-table.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { AddAgentOptions, AgentEndpoint };

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
  /** The agents' endpoints: those the cluster started with, then each an `add_agent` fault adds once it listens (until it is gone). */
  readonly agents: readonly AgentEndpoint[];
  /**
   * Adds an agent while the cluster runs (an `add_agent` fault): it boots
   * and registers as the others did; resolves to its endpoint once its
   * agent API is served. Where the agents took ephemeral ports, so does it.
   */
  addAgent(options?: AddAgentOptions): Promise<AgentEndpoint>;
  /** Removes an agent for good (a `remove_agent` fault: the master marks it gone); resolves once its endpoint has closed. */
  removeAgent(agentId: string): Promise<void>;
  readonly driver: ClusterDriver;
  /**
   * A client transport to this cluster's masters without sockets, for a
   * client in this process: `new SchedulerClient(cluster.masterUrl, {
   * transport: cluster.inProcess })`. The same API, answers and trace as
   * over HTTP (http/in-process.ts), at a fraction of the cost a call.
   */
  readonly inProcess: Transport;
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
  const workDir = workDirOf(options, agents.machine.flags);
  const spawned = agents.machine.flags.customExecutors === 'spawn' ? workDir?.path : undefined;
  const { driver, logger, advertised } = withWorkDir(workDir, () => coreOf(options, acls, spawned));
  const servers: FastifyInstance[] = [];
  stopOnFailure(driver, servers, logger, options.onFailure);
  const around = await executorSurroundings(options, driver, agents.machine.flags, workDir, limits, logger);
  const control = controlOf(driver, around.connections, logger);
  const metrics = new ClusterMetrics(driver);
  const sockets: DomainSocket[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stop = stopper(driver, metrics, around, servers, sockets, closers);
  // The agents' server is made after the masters': the control API's add_agent finds it here once it is.
  let added: AddedAgents | undefined;
  const addAgent = (fault: Parameters<AddedAgents['inject']>[0]) =>
    added === undefined ? Promise.resolve(driver.input((c) => c.inject(fault))) : added.inject(fault);
  try {
    const masterApps = {
      ...masterListenOptions(options, credentials, { driver, control, metrics, logger }, around, limits),
      addAgent,
    };
    const masterUrls = await listenMasters(
      options.masters,
      options.host,
      options.port,
      masterApps,
      servers,
      options.advertisePorts?.master,
    );
    const agentSpec = agentsSpecOf(options, agents, { advertised, credentials, sockets }, around, limits);
    const { endpoints, server } = await startAgentsAddressed(
      options.agentAddressing,
      driver,
      options.host,
      agentSpec,
      servers,
      logger,
    );
    const following = new AddedAgents(driver, server, agentSpec, endpoints, logger);
    added = following;
    closers.push(() => following.close());
    control.markStarted();
    // The masters' apps are the first servers, by index.
    const inProcess = new InProcessTransport(
      new Map(masterUrls.map((url, index) => [new URL(url).origin, servers[index]!] as const)),
      () => ({ virtual: driver.mode === 'virtual', nowMs: driver.cluster.now() }),
    );
    const started = {
      masterUrls,
      agents: endpoints,
      addAgent: async (options: AddAgentOptions = {}) => following.add(newAgentOf(options, agentSpec.machine)),
      removeAgent: (agentId: string) => following.remove(agentId),
      workDir: around.workDir?.path,
      engineSocket: around.engine?.path,
      inProcess,
    };
    return running(driver, control, started, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

type Limits = ReturnType<typeof limitsOf>;

/** What the executors work in and the core's output goes to (executors.ts), made before anything listens. */
interface ExecutorSurroundings extends ReturnType<typeof outputsOf> {
  readonly workDir: WorkDir | undefined;
  readonly tokens: ExecutorTokens | undefined;
  readonly engine: Awaited<ReturnType<typeof startEngine>>;
}

/**
 * The core and its driver, nothing listening yet, and the logger of the
 * run: its timestamps are virtual time when time is virtual.
 */
function coreOf(
  options: ResolvedOptions,
  acls: Acls | undefined,
  workDir: string | undefined,
): { driver: ClusterDriver; logger: Logger; advertised: string } {
  const advertised = advertisedHost(options, options.host);
  const cluster = clusterOf(
    options,
    { ...masterOptionsOf(options, advertised), ...(acls === undefined ? {} : { acls }) },
    workDir,
  );
  const driver: ClusterDriver = options.time === 'virtual' ? new VirtualDriver(cluster) : new RealtimeDriver(cluster);
  // The driver's cluster: a reset or a restore swaps it.
  const virtualNowMs = options.time === 'virtual' ? () => driver.cluster.epochMs + driver.cluster.now() : undefined;
  const logger = options.logger ?? createLogger(options.logLevel, virtualNowMs);
  logTrace(cluster, logger);
  return { driver, logger, advertised };
}

/** What `make` returns; a work directory made for this run goes if it throws (a refused start leaves nothing behind). */
function withWorkDir<T>(workDir: WorkDir | undefined, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (workDir?.own === true) rmSync(workDir.path, { recursive: true, force: true });
    throw error;
  }
}

/** The work directory, the executors' tokens, the streams (and spawned executors) the core's output goes to, the container engine. */
async function executorSurroundings(
  options: ResolvedOptions,
  driver: ClusterDriver,
  agentFlags: AgentFlags,
  workDir: WorkDir | undefined,
  limits: Limits,
  logger: Logger,
): Promise<ExecutorSurroundings> {
  // A start refused from here on leaves nothing behind: not the driver's timers, not the directory made for it.
  const undo = async (error: unknown, containers?: ProcessContainers): Promise<never> => {
    driver.close();
    await containers?.close();
    if (workDir?.own === true) rmSync(workDir.path, { recursive: true, force: true });
    throw error;
  };
  const tokens = await tokensOf(options).catch((error: unknown) => undo(error));
  const outputs = outputsOf(driver, limits.master, agentFlags, { workDir, options, tokens }, logger);
  const engine = await startEngine(
    options,
    { driver, connections: outputs.connections },
    limits.agentListener,
    workDir,
  ).catch((error: unknown) => undo(error, outputs.containers));
  return { ...outputs, workDir, tokens, engine };
}

/** Closes what was started, listeners and sockets together (`closers`: those made after the start), and removes a work directory made for this run. */
function stopper(
  driver: ClusterDriver,
  metrics: ClusterMetrics,
  around: ExecutorSurroundings,
  servers: FastifyInstance[],
  sockets: DomainSocket[],
  closers: readonly (() => Promise<void>)[],
): () => Promise<void> {
  const { engine, containers, workDir } = around;
  return async () => {
    driver.close();
    metrics.close();
    // First what came after the start: an app made for it then joins `servers`, closed next.
    await Promise.all(closers.map((close) => close()));
    await Promise.all([
      ...servers.map((s) => s.close()),
      ...sockets.map((d) => closeDomainSocket(d.server, d.path)),
      engine?.close(),
    ]);
    await containers?.close();
    if (workDir?.own === true) rmSync(workDir.path, { recursive: true, force: true });
  };
}

/** The masters' apps: the core and its control, the streams, the limits, the keepalive and what they authenticate. */
function masterListenOptions(
  options: ResolvedOptions,
  credentials: Credentials | undefined,
  core: { driver: ClusterDriver; control: SimControl; metrics: ClusterMetrics; logger: Logger },
  { connections, streamBudget }: ExecutorSurroundings,
  limits: Limits,
): MasterListenOptions {
  return {
    driver: core.driver,
    simControl: core.control,
    metrics: core.metrics,
    logger: core.logger,
    connections,
    streamBudget,
    ...limits.master,
    ...(options.streamKeepaliveMs === undefined ? {} : { keepaliveMs: options.streamKeepaliveMs }),
    ...masterAuthOf(options, credentials),
  };
}

/** The agents: what they are, where they listen and advertise, where their executors' streams go, what they authenticate. */
function agentsSpecOf(
  options: ResolvedOptions,
  agents: ReturnType<typeof agentsOf>,
  {
    advertised,
    credentials,
    sockets,
  }: { advertised: string; credentials: Credentials | undefined; sockets: DomainSocket[] },
  { connections, streamBudget, tokens, engine, workDir }: ExecutorSurroundings,
  limits: Limits,
): AgentsSpec {
  return {
    ...agents,
    firstPort: options.agentPort,
    ...(options.advertisePorts === undefined ? {} : { advertiseFirstPort: options.advertisePorts.firstAgent }),
    advertiseHost: advertised,
    listener: limits.agentListener,
    executors: {
      connections,
      budget: streamBudget,
      ...(tokens === undefined ? {} : { tokens }),
      ...(engine === undefined ? {} : { engine: engine.helpers }),
    },
    ...(options.authenticateHttpReadwrite ? { credentials: credentials! } : {}),
    ...(options.authenticateHttpReadonly ? { readonlyCredentials: credentials! } : {}),
    ...(options.httpExecutorDomainSockets ? { domainSockets: { workDir: workDir!.path, servers: sockets } } : {}),
  };
}

/** The running cluster: the control methods, with what was started and how to stop it. */
function running(
  driver: ClusterDriver,
  control: ReturnType<typeof controlOf>,
  started: Pick<
    RunningCluster,
    'masterUrls' | 'agents' | 'addAgent' | 'removeAgent' | 'workDir' | 'engineSocket' | 'inProcess'
  >,
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
function stopOnFailure(
  driver: ClusterDriver,
  servers: FastifyInstance[],
  logger: Logger,
  onFailure?: (f: ClusterFailure) => void,
): void {
  driver.onFailure((failure) => {
    logger.fatal({ seed: failure.seed, lastEntries: failure.lastEntries, err: failure.cause }, failure.message);
    driver.close();
    for (const server of servers) void server.close();
    onFailure?.(failure);
  });
}
