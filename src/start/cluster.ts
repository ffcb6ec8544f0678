/**
 * The composition root of the library: starting a whole cluster in this
 * process wires the core, a time driver, the master's HTTP server and the
 * agents' (one per agent, or one for all with `loopback` addressing), all
 * on the given host. Nothing below imports this.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parseWeights } from '../core/master/weights.js';
import { Cluster } from '../core/cluster.js';
import { controlMethods, controlOf, type ControlMethods } from './control.js';
import type { MasterOptions } from '../core/master/ops.js';
import type { Acls } from '../core/model/authz.js';
import { agentResourcesOf } from './resources.js';
import { AGENT_READWRITE_REALM, READONLY_REALM, type Credentials } from '../http/auth.js';
import { containerFlagsOf, type ContainerOptions } from './cgroups.js';
import { listenMasters, type MasterListenOptions } from './masters.js';
import { advertisedHost } from './advertise.js';
import { startAgentsAddressed, type AgentEndpoint, type AgentsSpec, type DomainSocket, type Machine } from './agents.js';
import { closeDomainSocket, domainSocketPath } from '../http/domain-sockets.js';
import { Connections } from '../http/connections.js';
import { StreamBudget } from '../http/stream-budget.js';
import { DEFAULT_AGENT_FLAGS, type AgentFlags } from '../core/agent/flags.js';
import type { CustomExecutors } from '../core/model/executor-api.js';
import { ProcessContainers } from '../runtime/containers.js';
import { ExecutorTokens } from '../http/agent/executor-token.js';
import { createEngineServer, type EngineOptions } from '../http/engine/socket.js';
import { EngineHelpers } from '../http/agent/engine-helper.js';
import type { ContainerLaunch } from '../core/model/executor-api.js';
import type { AgentAddressing } from '../http/agent/listener.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../http/event-stream.js';
import { DEFAULT_AGENT_MAX_CONNECTIONS, DEFAULT_LISTENER_LIMITS, type ListenerLimits } from '../http/limits.js';
import {
  DEFAULT_MAX_FRAMEWORKS,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_STREAM_BUDGET_BYTES,
  type MasterAppOptions,
} from '../http/master/app.js';
import { RealtimeDriver, VirtualDriver, type ClusterDriver, type ClusterFailure, type TimeMode } from '../runtime/driver.js';
import { createLogger, logTrace, type LogLevel } from '../runtime/logging.js';
import { ClusterMetrics } from '../runtime/metrics.js';
import { loadAcls, loadCredentials, type AuthFileSource } from '../runtime/auth-files.js';
import { parseAttributes } from '../wire/convert-common.js';
import { VERSION } from '../wire/version.js';
import type { MisuseReport } from '../core/master/misuse-report.js';
import { checkStartOptions, type OPTION_RULES } from './options.js';
import { StartError } from './errors.js';

export const DEFAULT_AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';

const MIB = 1024 * 1024;

/** The defaults of the limits below, for `clustersim up` and docs/cli.md. */
export const DEFAULT_LIMITS = {
  idleTimeoutSeconds: DEFAULT_LISTENER_LIMITS.idleTimeoutSeconds,
  headersTimeoutSeconds: DEFAULT_LISTENER_LIMITS.headersTimeoutSeconds,
  requestTimeoutSeconds: DEFAULT_LISTENER_LIMITS.requestTimeoutSeconds,
  maxConnections: DEFAULT_LISTENER_LIMITS.maxConnections,
  agentMaxConnections: DEFAULT_AGENT_MAX_CONNECTIONS,
  maxSubscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
  maxFrameworks: DEFAULT_MAX_FRAMEWORKS,
  streamBufferLimitMiB: DEFAULT_MAX_BUFFERED_BYTES / MIB,
  streamBufferBudgetMiB: DEFAULT_STREAM_BUDGET_BYTES / MIB,
} as const;

/**
 * What a client may hold: connections and their timeouts on every listener,
 * event streams and the bytes waiting on them, frameworks. Past a limit the
 * server closes the connection, cuts the stream or refuses the SUBSCRIBE
 * (docs/cli.md, "Limits").
 */
export interface LimitOptions {
  /** Seconds a connection may sit silent (between keep-alive requests, a response unread); not event streams. */
  readonly idleTimeoutSeconds?: number;
  /** Seconds from a connection's first byte to the end of the request's headers. */
  readonly headersTimeoutSeconds?: number;
  /** Seconds from a connection's first byte to the end of the request's body. */
  readonly requestTimeoutSeconds?: number;
  /** Concurrent connections of the master's listener. */
  readonly maxConnections?: number;
  /** Concurrent connections of each agent's listener. */
  readonly agentMaxConnections?: number;
  /** Concurrent event streams (open SUBSCRIBE calls). */
  readonly maxSubscriptions?: number;
  /** Frameworks connected or within their failover timeout. */
  readonly maxFrameworks?: number;
  /** MiB waiting on one event stream before it is cut. */
  readonly streamBufferLimitMiB?: number;
  /** MiB waiting on all event streams together before the one with the most is cut. */
  readonly streamBufferBudgetMiB?: number;
}

export interface StartClusterOptions extends LimitOptions, ContainerOptions {
  /** Address every server binds to (default 127.0.0.1). */
  readonly host?: string;
  /** Master port; 0 picks a free one (default 0). With several masters, the first one's; the others follow. */
  readonly port?: number;
  /**
   * The ports the cluster advertises (upstream's `--advertise_port`): the
   * master's in MasterInfo, and the first agent's in AgentInfo and its pid
   * (the next agents follow), whatever ports the listeners got. Scenario
   * runs use it so that ephemeral ports stay out of the trace; clients must
   * then be given the listeners' real URLs.
   */
  readonly advertisePorts?: { readonly master: number; readonly firstAgent: number };
  /**
   * The host the cluster advertises (`--advertise-host`; default `host`):
   * in the master's MasterInfo and pid, `/redirect`, and each agent's
   * AgentInfo, pid and URL in offers, while the servers bind to `host`
   * (`0.0.0.0` in a container). Not with `loopback` agent addressing.
   */
  readonly advertiseHost?: string;
  /** Masters with a leader (`--masters`, default 1): master `i` on `port + i`; only the leader serves, the others redirect. */
  readonly masters?: number;
  /** From a leader's death to the next election, in seconds (upstream's `--zk_session_timeout`, default 10). */
  readonly electionDelaySeconds?: number;
  /** How long a new leader waits for the agents it recovered before they are unreachable (`--agent_reregister_timeout`, default 600). */
  readonly agentReregisterTimeoutSeconds?: number;
  /** Finished tasks kept per framework, the oldest dropped first (`--max_completed_tasks_per_framework`, default 1000). */
  readonly maxCompletedTasksPerFramework?: number;
  /** Removed frameworks kept, the oldest dropped first (`--max_completed_frameworks`, default 50). */
  readonly maxCompletedFrameworks?: number;
  readonly agents?: number;
  readonly agentResources?: string;
  readonly agentAttributes?: string;
  /**
   * Agents that differ: each group's count of agents with its own resources
   * and attributes (the defaults above where a group gives none). Replaces
   * `agents` when given.
   */
  readonly agentGroups?: readonly AgentGroupOptions[];
  /**
   * Port of the first agent, the next ones follow; 0 = ephemeral (default).
   * With `loopback` addressing, the one port of every agent.
   */
  readonly agentPort?: number;
  /**
   * `ports` (default): each agent listens on `host` with a port and a server
   * of its own. `loopback`: each agent has an address of its own in
   * 127.0.0.0/8 (127.0.0.2 and up), all on one port and served by one app;
   * on a loopback host one socket per address, on 0.0.0.0 one socket for
   * all. Where the host or the system cannot give agents their own
   * addresses, agents fall back to ports (and the log says so).
   */
  readonly agentAddressing?: AgentAddressing;
  readonly seed?: string | number;
  readonly heartbeatIntervalSeconds?: number;
  /** Seconds between batched allocations of recovered resources (upstream `--allocation_interval`, default 1). */
  readonly allocationIntervalSeconds?: number;
  /** Role weights, upstream's `--weights` form: `role1=2.5,role2=1`. */
  readonly weights?: string;
  /** Cluster time zero, ms since the Unix epoch (`--epoch`); default the wall clock at start in real time, a constant in virtual time. */
  readonly epochMs?: number;
  /** `realtime` (default) follows the wall clock; `virtual` moves only on `advance()`. */
  readonly time?: TimeMode;
  readonly logLevel?: LogLevel;
  readonly logger?: Logger;
  readonly recordTrace?: boolean;
  /** Without `recordTrace`: how many of the latest trace entries to keep (default 256; up to twice as many are held). */
  readonly traceWindow?: number;
  /**
   * Record every input (the trace gets an `input:` entry for each), so that
   * snapshot, restore and reset work and a recorded trace replays. Default:
   * on in virtual time or with `recordTrace`. `'trace'`: the entries only,
   * no record kept (the trace replays; snapshot, restore and reset do not work).
   */
  readonly recordInputs?: boolean | 'trace';
  /**
   * Called once if the core fails (a broken invariant is a bug): the
   * cluster has stopped serving, its listeners are closing, and `close()`
   * will reject with the same error. `clustersim up` exits non-zero.
   */
  readonly onFailure?: (failure: ClusterFailure) => void;
  /** Wall-clock silence after which an event stream sends a HEARTBEAT (default 5 s; 0: never). */
  readonly streamKeepaliveMs?: number;
  /**
   * `--credentials`: HTTP Basic on the scheduler and operator APIs, and on
   * the control API (`/sim/v1/`, http/sim/auth.ts). A file path, or
   * upstream's JSON (`{ credentials: [{ principal, secret }] }`). The
   * library's own control methods (`advance()`, `reset()`, ...) ask nothing.
   */
  readonly credentials?: AuthFileSource;
  /**
   * `--acls`: what principals may do (upstream's ACL JSON: `permissive`,
   * `register_frameworks`, `teardown_frameworks`, `update_quotas`, `view_*`,
   * and clustersim's `control_simulation` for the control API's changes).
   * A file path, the JSON text, or the parsed JSON.
   */
  readonly acls?: AuthFileSource;
  /**
   * `--authenticate-http-readonly`: HTTP Basic on the read-only endpoints
   * too (`/state`, `/frameworks`, `/flags`, `/metrics/snapshot`, ...), so
   * that the ACLs' `view_*` rules see who reads. Needs `credentials`.
   */
  readonly authenticateHttpReadonly?: boolean;
  /**
   * `--authenticate-http-readwrite`: HTTP Basic with the `credentials` on
   * each agent's operator API (`/api/v1`, realm `mesos-agent-readwrite`).
   */
  readonly authenticateHttpReadwrite?: boolean;
  /**
   * `--custom-executors`: how a task's custom executor (an ExecutorInfo of
   * its own) exists. `simulate` (default): the agent plays it. `spawn`: the
   * agent runs its command as a real process in a sandbox under `workDir`,
   * which subscribes on the agent's executor API. `await`: the agent waits
   * for an outside process to subscribe as it (a test harness, a debugger).
   */
  readonly customExecutors?: CustomExecutors;
  /**
   * `--switch-user` (default true, upstream's `--switch_user`): a spawned
   * executor runs as its command's user, else its framework's, its sandbox
   * given to that user; a user the host lacks, or one this process may not
   * switch to (not being root), fails the launch (TASK_DROPPED for a
   * partition-aware framework, else TASK_LOST). False: executors run as
   * this process' user.
   */
  readonly switchUser?: boolean;
  /** `--work-dir`: where executor sandboxes go (spawn); a temporary directory, removed on close, without. */
  readonly workDir?: string;
  /** `--executor-registration-timeout`: seconds a launched executor has to subscribe (default 60). */
  readonly executorRegistrationTimeoutSeconds?: number;
  /** `--executor-shutdown-grace-period`: seconds an executor has to exit after SHUTDOWN (default 5). */
  readonly executorShutdownGracePeriodSeconds?: number;
  /**
   * `--http-executor-domain-sockets`: each agent serves its executor API on
   * a Unix domain socket too, `<workDir>/agents/<agent>/agent.sock`, given
   * to its executors as `DOMAIN_SOCKET`.
   */
  readonly httpExecutorDomainSockets?: boolean;
  /**
   * `--containerizers`: `mesos,docker` (default) runs the simulated
   * container engine for DOCKER tasks; `mesos` leaves it out.
   */
  readonly containerizers?: string;
  /** `--engine-socket`: the engine API's Unix socket (default `<workDir>/engine.sock`), mode 0600. */
  readonly engineSocket?: string;
  /**
   * `--authenticate-http-executors`: each spawned executor gets a signed
   * token (`EXECUTOR_AUTHENTICATION_TOKEN`), and the executor API wants it
   * as `Authorization: Bearer` (401 without, 403 for another executor's).
   * The control API then asks for credentials: without `credentials`,
   * nobody can use it over HTTP.
   */
  readonly authenticateHttpExecutors?: boolean;
  /** `--jwt-secret-key`: a file whose bytes sign the tokens (default: 32 random bytes made at start). */
  readonly jwtSecretKey?: string;
}


export { type AgentEndpoint };

/** Holds the option checks (options.ts) to one rule for each option and none for another. */
type OptionRulesComplete = [keyof StartClusterOptions, keyof typeof OPTION_RULES] extends [keyof typeof OPTION_RULES, keyof StartClusterOptions] ? true : never;
export const OPTION_RULES_COMPLETE: OptionRulesComplete = true;

export interface AgentGroupOptions {
  readonly count: number;
  readonly resources?: string;
  readonly attributes?: string;
}

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


export async function startCluster(options: StartClusterOptions = {}): Promise<RunningCluster> {
  checkStartOptions(options);
  const host = options.host ?? '127.0.0.1';
  const { count: agentCount, machine, machines } = agentsOf(options);
  const limits = limitsOf(options);
  const { credentials, acls } = authOf(options);

  const time = options.time ?? 'realtime';
  const advertised = advertisedHost(options, host);
  const cluster = clusterOf(options, time, { ...masterOptionsOf(options, advertised), ...(acls === undefined ? {} : { acls }) });
  const driver: ClusterDriver = time === 'virtual' ? new VirtualDriver(cluster) : new RealtimeDriver(cluster);
  // The driver's cluster: a reset or a restore swaps it.
  const logger = options.logger ?? createLogger(options.logLevel ?? 'silent', time === 'virtual' ? () => driver.cluster.epochMs + driver.cluster.now() : undefined);
  logTrace(cluster, logger);

  const servers: FastifyInstance[] = [];
  stopOnFailure(driver, servers, logger, options.onFailure);
  const workDir = workDirOf(options, machine.flags);
  const sockets: DomainSocket[] = [];
  const tokens = await tokensOf(options);
  const { connections, streamBudget, containers } = outputsOf(driver, limits.master, machine.flags, { workDir, options, tokens }, logger);
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
    const masterUrls = await listenMasters(options.masters ?? 1, host, options.port ?? 0, {
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
    const executors = { connections, budget: streamBudget, ...(tokens === undefined ? {} : { tokens }), ...(engine === undefined ? {} : { engine: engine.helpers }) };
    const domainSockets = options.httpExecutorDomainSockets === true ? { domainSockets: { workDir: workDir!.path, servers: sockets } } : {};
    const readwrite = options.authenticateHttpReadwrite === true ? { credentials: credentials! } : {};
    const agentSpec: AgentsSpec = { count: agentCount, firstPort: options.agentPort ?? 0, machine, ...(machines === undefined ? {} : { machines }), ...(options.advertisePorts === undefined ? {} : { advertiseFirstPort: options.advertisePorts.firstAgent }), advertiseHost: advertised, listener: limits.agentListener, executors, ...readwrite, ...domainSockets };
    const agents = await startAgentsAddressed(options.agentAddressing ?? 'ports', driver, host, agentSpec, servers, logger);
    control.markStarted();
    // Assigned onto the control methods, so that `cluster` stays their getter.
    return Object.assign(controlMethods(driver, control), {
      masterUrl: masterUrls[0]!,
      masterUrls,
      leaderUrl: () => driver.read((view) => masterUrls[view.leaderIndex() ?? -1]),
      workDir: workDir?.path,
      engineSocket: engine?.path,
      agents,
      driver,
      misuse: () => driver.read((view) => view.misuse()),
      close: async () => {
        await stop();
        if (driver.failure !== undefined) throw driver.failure;
      },
    });
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The core, as the library's options make it. */
function clusterOf(options: StartClusterOptions, time: TimeMode, master: MasterOptions): Cluster {
  return new Cluster({
    seed: options.seed ?? 0,
    ...(options.epochMs !== undefined ? { epochMs: options.epochMs } : time === 'realtime' ? { epochMs: Date.now() } : {}),
    recordTrace: options.recordTrace ?? false,
    ...(options.traceWindow === undefined ? {} : { traceWindow: options.traceWindow }),
    recordInputs: options.recordInputs ?? (options.recordTrace === true || time === 'virtual'),
    master,
    ...mastersOf(options),
  });
}

/** The group of masters (checked by options.ts). */
function mastersOf(options: StartClusterOptions): { masters: number; electionDelayMs: number } {
  return { masters: options.masters ?? 1, electionDelayMs: (options.electionDelaySeconds ?? 10) * 1000 };
}

/** The master's options from the library's; a StartError names the option at fault. */
function masterOptionsOf(options: StartClusterOptions, host: string): MasterOptions {
  const heartbeat = options.heartbeatIntervalSeconds ?? 15;
  const allocation = options.allocationIntervalSeconds ?? 1;
  const weights = parseWeights(options.weights ?? '');
  if (typeof weights === 'string') throw new StartError(`weights: ${weights}`, ['weights']);
  return {
    hostname: host,
    ip: host,
    port: options.port ?? 0,
    version: VERSION,
    heartbeatIntervalMs: heartbeat * 1000,
    allocationIntervalMs: allocation * 1000,
    weights: new Map(weights.map((w) => [w.role, w.weight])),
    ...(options.agentReregisterTimeoutSeconds === undefined ? {} : { agentReregisterTimeoutMs: options.agentReregisterTimeoutSeconds * 1000 }),
    ...historyLimits(options),
  };
}

/** The bounds of the master's histories (whole numbers, checked by options.ts; zero keeps none). */
function historyLimits(options: StartClusterOptions): Pick<MasterOptions, 'maxCompletedTasksPerFramework' | 'maxCompletedFrameworks'> {
  const { maxCompletedTasksPerFramework: tasks, maxCompletedFrameworks: frameworks } = options;
  return { ...(tasks === undefined ? {} : { maxCompletedTasksPerFramework: tasks }), ...(frameworks === undefined ? {} : { maxCompletedFrameworks: frameworks }) };
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


/** How many agents, and what each is, from the library's options; a StartError names the option at fault. */
function agentsOf(options: StartClusterOptions): { count: number; machine: Machine; machines?: Machine[] } {
  const flags = agentFlagsOf(options);
  const machineOf = (resourceText: string | undefined, attributeText: string | undefined, where: string): Machine => {
    const resources = agentResourcesOf(resourceText ?? options.agentResources ?? DEFAULT_AGENT_RESOURCES);
    if (typeof resources === 'string') throw new StartError(`${where === '' ? 'agentResources' : `${where}.resources`}: ${resources}`, [where === '' ? 'agentResources' : 'agentGroups']);
    const attributes = parseAttributes(attributeText ?? options.agentAttributes ?? '');
    if (typeof attributes === 'string') throw new StartError(`${where === '' ? 'agentAttributes' : `${where}.attributes`}: ${attributes}`, [where === '' ? 'agentAttributes' : 'agentGroups']);
    return { resources, attributes, flags };
  };
  const machine = machineOf(undefined, undefined, '');
  if (options.agentGroups !== undefined) {
    const machines = options.agentGroups.flatMap((group, i) => {
      return Array<Machine>(group.count).fill(machineOf(group.resources, group.attributes, `agentGroups[${i}]`));
    });
    return { count: machines.length, machine, machines };
  }
  return { count: options.agents ?? 3, machine };
}

/** The agents' executor flags from the library's options (checked by options.ts). */
function agentFlagsOf(options: StartClusterOptions): AgentFlags {
  const seconds = (value: number | undefined, fallbackMs: number): number => (value === undefined ? fallbackMs : Math.round(value * 1000));
  return {
    ...DEFAULT_AGENT_FLAGS,
    customExecutors: options.customExecutors ?? 'simulate',
    executorRegistrationTimeoutMs: seconds(options.executorRegistrationTimeoutSeconds, DEFAULT_AGENT_FLAGS.executorRegistrationTimeoutMs),
    executorShutdownGracePeriodMs: seconds(options.executorShutdownGracePeriodSeconds, DEFAULT_AGENT_FLAGS.executorShutdownGracePeriodMs),
    ...containerFlagsOf(options),
    containerEngine: engineOn(options),
  };
}

/**
 * Where the core's output goes: the streams of every server in one id
 * space (the master's, and the agents' executor streams), and in spawn
 * mode the executor processes.
 */
function outputsOf(
  driver: ClusterDriver,
  master: { readonly maxBufferedBytes?: number; readonly streamBudgetBytes?: number },
  agentFlags: AgentFlags,
  where: { readonly workDir: WorkDir | undefined; readonly options: StartClusterOptions; readonly tokens: ExecutorTokens | undefined },
  logger: Logger,
): { connections: Connections; streamBudget: StreamBudget; containers: ProcessContainers | undefined } {
  const connections = new Connections();
  const streamBudget = new StreamBudget({ perStreamBytes: master.maxBufferedBytes!, totalBytes: master.streamBudgetBytes!, log: logger });
  driver.setOutput(connections.deliver);
  if (agentFlags.customExecutors !== 'spawn' || where.workDir === undefined) return { connections, streamBudget, containers: undefined };
  const workDir = where.workDir.path;
  const domainSocketOf = where.options.httpExecutorDomainSockets === true ? { domainSocketOf: (agentId: string) => domainSocketPath(workDir, agentId) } : {};
  const tokens = where.tokens;
  const tokenFor =
    tokens === undefined
      ? {}
      : { tokenFor: (l: ContainerLaunch) => tokens.signSync({ frameworkId: l.framework.id, executorId: l.executor.executorId, containerId: l.containerId }) };
  const containers = new ProcessContainers({ driver, logger, workDir, ...domainSocketOf, ...tokenFor, switchUser: where.options.switchUser !== false });
  driver.setContainerHost(containers.handle);
  return { connections, streamBudget, containers };
}

/** The executor tokens, with executor authentication on; a bad key file stops the start with one line naming it. */
async function tokensOf(options: StartClusterOptions): Promise<ExecutorTokens | undefined> {
  if (options.authenticateHttpExecutors !== true) {
    if (options.jwtSecretKey !== undefined) throw new StartError('jwtSecretKey: needs authenticateHttpExecutors', ['jwtSecretKey', 'authenticateHttpExecutors']);
    return undefined;
  }
  if (options.jwtSecretKey === undefined) return ExecutorTokens.create();
  try {
    return await ExecutorTokens.fromFile(options.jwtSecretKey);
  } catch (error) {
    throw new StartError(`jwtSecretKey: ${(error as Error).message}`, ['jwtSecretKey']);
  }
}

interface WorkDir {
  readonly path: string;
  /** Made for this run (a temporary directory): removed on close. */
  readonly own: boolean;
}

/** The work directory, when something needs one: spawned executors' sandboxes, the agents' domain sockets. */
function workDirOf(options: StartClusterOptions, flags: AgentFlags): WorkDir | undefined {
  const engineNeedsOne = engineOn(options) && options.engineSocket === undefined;
  if (flags.customExecutors !== 'spawn' && options.httpExecutorDomainSockets !== true && !engineNeedsOne) return undefined;
  if (options.workDir !== undefined) {
    // Made if it is not there yet, as upstream's agent makes its --work_dir.
    mkdirSync(options.workDir, { recursive: true });
    return { path: options.workDir, own: false };
  }
  const made = mkdtempSync(path.join(os.tmpdir(), 'clustersim-'));
  // Executors switched to other users reach their sandboxes (each 0750, theirs) through it, as through upstream's work dir.
  if (flags.customExecutors === 'spawn' && options.switchUser !== false) chmodSync(made, 0o755);
  return { path: made, own: true };
}

function engineOn(options: StartClusterOptions): boolean {
  const containerizers = (options.containerizers ?? 'mesos,docker').split(',').map((c) => c.trim());
  const unknown = containerizers.find((c) => c !== 'mesos' && c !== 'docker');
  if (unknown !== undefined) throw new StartError(`containerizers: takes mesos and docker, got '${unknown}'`, ['containerizers']);
  return containerizers.includes('docker');
}

/** The simulated container engine on its Unix socket (mode 0600), unless `containerizers` leaves it out; the listeners' timeouts hold on it. */
async function startEngine(
  options: StartClusterOptions,
  engine: EngineOptions,
  { headersTimeoutSeconds, requestTimeoutSeconds }: ListenerLimits,
  workDir: WorkDir | undefined,
): Promise<{ path: string; helpers: EngineHelpers; close: () => Promise<void> } | undefined> {
  if (!engineOn(options)) return undefined;
  const socketPath = options.engineSocket ?? path.join(workDir!.path, 'engine.sock');
  const server = createEngineServer({ ...engine, headersTimeoutMs: headersTimeoutSeconds * 1000, requestTimeoutMs: requestTimeoutSeconds * 1000 });
  mkdirSync(path.dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new StartError(`engineSocket: cannot listen on ${socketPath}: ${error.code ?? error.message}`, ['engineSocket'])));
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(socketPath, { force: true });
  };
  return { path: socketPath, helpers: new EngineHelpers(socketPath, engine.driver), close };
}

/** The limits with their defaults (checked by options.ts). */
function limitsOf(options: LimitOptions): { master: Omit<MasterAppOptions, 'driver' | 'logger'>; agentListener: ListenerLimits } {
  const value = { ...DEFAULT_LIMITS, ...definedOnly(options) };
  const timeouts = {
    idleTimeoutSeconds: value.idleTimeoutSeconds,
    headersTimeoutSeconds: value.headersTimeoutSeconds,
    requestTimeoutSeconds: value.requestTimeoutSeconds,
  };
  return {
    master: {
      listener: { ...timeouts, maxConnections: value.maxConnections },
      maxSubscriptions: value.maxSubscriptions,
      maxFrameworks: value.maxFrameworks,
      maxBufferedBytes: Math.round(value.streamBufferLimitMiB * MIB),
      streamBudgetBytes: Math.round(value.streamBufferBudgetMiB * MIB),
    },
    agentListener: { ...timeouts, maxConnections: value.agentMaxConnections },
  };
}

/**
 * What the masters' listeners authenticate: the scheduler and operator APIs
 * with credentials, the read endpoints with `authenticateHttpReadonly`, and
 * the control API once any authentication is on (http/sim/auth.ts).
 */
function masterAuthOf(options: StartClusterOptions, credentials: Credentials | undefined): Pick<MasterListenOptions, 'credentials' | 'authenticateReadonly' | 'authenticateControlApi'> {
  return {
    ...(credentials === undefined ? {} : { credentials }),
    authenticateReadonly: options.authenticateHttpReadonly === true,
    authenticateControlApi: options.authenticateHttpExecutors === true,
  };
}

/** The credentials and ACLs, read and checked; a bad file stops the start with one line naming it. */
function authOf(options: StartClusterOptions): { credentials?: Map<string, string>; acls?: Acls } {
  const out: { credentials?: Map<string, string>; acls?: Acls } = {};
  if (options.authenticateHttpReadonly === true && options.credentials === undefined) {
    // Upstream's master does not start either: its basic authenticator has no credentials for the realm.
    throw new StartError(`authenticateHttpReadonly: needs credentials: there are none for the realm '${READONLY_REALM}'`, ['authenticateHttpReadonly', 'credentials']);
  }
  if (options.authenticateHttpReadwrite === true && options.credentials === undefined) {
    throw new StartError(`authenticateHttpReadwrite: needs credentials: there are none for the realm '${AGENT_READWRITE_REALM}'`, ['authenticateHttpReadwrite', 'credentials']);
  }
  if (options.credentials !== undefined) {
    const loaded = loadCredentials(options.credentials);
    if (!loaded.ok) throw new StartError(loaded.error, ['credentials']);
    out.credentials = loaded.value;
  }
  if (options.acls !== undefined) {
    const loaded = loadAcls(options.acls);
    if (!loaded.ok) throw new StartError(loaded.error, ['acls']);
    out.acls = loaded.value;
  }
  return out;
}

/** The options given a value: an `undefined` must not hide a default. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
