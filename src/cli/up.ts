/** `clustersim up`: a cluster on real sockets, in real time, until a signal. */
import type { Argv } from 'yargs';
import type { Logger } from 'pino';
import { createLogger, LOG_LEVELS, type LogLevel } from '../runtime/logging.js';
import type { TimeMode } from '../runtime/driver.js';
import { AGENT_ADDRESSINGS, type AgentAddressing } from '../http/agent/listener.js';
import { CUSTOM_EXECUTOR_MODES, type CustomExecutors } from '../core/model/executor-api.js';
import { refusal } from './option-flags.js';
import { DEFAULT_AGENT_RESOURCES, DEFAULT_LIMITS, startCluster, type StartClusterOptions } from '../start/cluster.js';
import { DEFAULT_ISOLATION, ISOLATORS } from '../start/cgroups.js';
import { CGROUPS_VERSIONS, type CgroupsVersion } from '../core/agent/flags.js';
import { startWith, withOptions, type WithArgs } from './up-with.js';
import { COUNT, COUNT_OR_ZERO, MIB, numberFlag, PORT, SECONDS, SECONDS_OR_ZERO, textFlag, USAGE_EXIT_CODE, type NumberRule } from './flags.js';
import { logFormatOption, type LogFormat } from './log-options.js';
import { agentResourcesOf } from '../start/resources.js';
import { parseAttributes } from '../wire/convert-common.js';
import { parseWeights } from '../core/master/weights.js';

export interface UpArgs extends WithArgs {
  host: string;
  'advertise-host': string | undefined;
  port: number;
  masters: number;
  'election-delay': number;
  'agent-reregister-timeout': number;
  'max-completed-tasks-per-framework': number;
  'max-completed-frameworks': number;
  agents: number;
  'agent-resources': string;
  'agent-attributes': string;
  'agent-port': number;
  'agent-addressing': AgentAddressing;
  seed: string;
  'heartbeat-interval': number;
  'allocation-interval': number;
  weights: string;
  'log-level': LogLevel;
  'log-format': LogFormat;
  'idle-timeout': number;
  'headers-timeout': number;
  'request-timeout': number;
  'max-connections': number;
  'agent-max-connections': number;
  'max-subscriptions': number;
  'max-frameworks': number;
  'stream-buffer-limit': number;
  'stream-buffer-budget': number;
  credentials?: string;
  acls?: string;
  'authenticate-http-readonly': boolean;
  'custom-executors': CustomExecutors;
  'work-dir': string | undefined;
  'executor-registration-timeout': number;
  'executor-shutdown-grace-period': number;
  'http-executor-domain-sockets': boolean;
  time: TimeMode;
  epoch: number | undefined;
  'record-trace': boolean | undefined;
  'authenticate-http-executors': boolean;
  'switch-user': boolean;
  'jwt-secret-key': string | undefined;
  containerizers: string;
  'engine-socket': string | undefined;
  'authenticate-http-readwrite': boolean;
  cgroups: CgroupsVersion;
  isolation: string;
  'memory-controller-delegated': boolean;
}

const L = DEFAULT_LIMITS;
const MASTERS: NumberRule = { whole: true, min: 1, max: 64 };
const EPOCH: NumberRule = { whole: true, min: 0, unit: 'ms' };

const CONTAINERIZERS = ['mesos', 'docker'] as const;

/** A comma list's first unknown item, as a reason. */
function unknownIn(text: string, known: readonly string[], what: string): string | undefined {
  const unknown = text.split(',').map((w) => w.trim()).find((w) => w !== '' && !known.includes(w));
  return unknown === undefined ? undefined : `unknown ${what} ${JSON.stringify(unknown)} (known: ${known.join(', ')})`;
}

/** The reason a parser gives, or undefined where it parsed. */
const reasonOf = (parsed: unknown): string | undefined => (typeof parsed === 'string' ? parsed : undefined);
const LIMIT_FLAGS = [
  'idle-timeout',
  'headers-timeout',
  'request-timeout',
  'max-connections',
  'agent-max-connections',
  'max-subscriptions',
  'max-frameworks',
  'stream-buffer-limit',
  'stream-buffer-budget',
];

/** The agents' containers: cgroups version, isolators, delegation of the v2 memory controller. */
function containerOptions(y: Argv): Argv {
  return y
    .option('cgroups', { choices: CGROUPS_VERSIONS, default: 'v2' as CgroupsVersion, describe: "The cgroups version of the agents' hosts: the memory files each container has" })
    .option('isolation', textFlag('isolation', (t) => unknownIn(t, ISOLATORS, 'isolator'), {
      default: DEFAULT_ISOLATION,
      describe: `The agents' isolators (${ISOLATORS.join(', ')}); with cgroups/mem, memory limits are enforced (OOM kill) and UPDATE_CONTAINER_MEMORY_LIMIT can change them`,
    }))
    .option('memory-controller-delegated', {
      type: 'boolean',
      default: true,
      describe: "cgroups v2: the memory controller is delegated to the agents' hierarchy (--no-memory-controller-delegated: no memory files, limits cannot be changed)",
    })
    .group(['cgroups', 'isolation', 'memory-controller-delegated'], 'Containers (docs/agent-api.md, "Containers and cgroups"):');
}

/** How executors exist and are reached, and the container engine. */
/** The bounds of the master's histories (upstream's flags of the same names). */
function historyOptions(y: Argv): Argv {
  return y
    .option('max-completed-tasks-per-framework', { type: 'number', default: 1000, describe: 'Finished tasks the master keeps per framework, the oldest dropped first' })
    .option('max-completed-frameworks', { type: 'number', default: 50, describe: 'Removed frameworks the master keeps, the oldest dropped first' });
}

function executorOptions(y: Argv): Argv {
  return y
    .option('custom-executors', {
      choices: CUSTOM_EXECUTOR_MODES,
      default: 'simulate' as CustomExecutors,
      describe:
        "A task's own executor (ExecutorInfo): simulate: the agent plays it; spawn: its command runs as a real process that speaks the executor API; await: the agent waits for an outside process to subscribe as it",
    })
    .option('work-dir', { type: 'string', describe: 'Where spawned executors get their sandboxes (default: a temporary directory, removed on exit)' })
    .option('executor-registration-timeout', numberFlag('executor-registration-timeout', SECONDS, { default: 60, describe: 'Seconds a launched executor has to subscribe before it is destroyed and its tasks fail' }))
    .option('executor-shutdown-grace-period', numberFlag('executor-shutdown-grace-period', SECONDS, { default: 5, describe: 'Seconds an executor has to exit after SHUTDOWN before it is destroyed and its tasks are lost' }))
    .option('http-executor-domain-sockets', {
      type: 'boolean',
      default: false,
      describe: "Each agent serves its executor API on a Unix domain socket too (<work-dir>/agents/<agent>/agent.sock), given to executors as DOMAIN_SOCKET",
    })
    .option('switch-user', {
      type: 'boolean',
      default: true,
      describe: "Spawned executors run as their command's user, else their framework's (--no-switch-user: as this process' user)",
    })
    .option('authenticate-http-executors', {
      type: 'boolean',
      default: false,
      describe: 'Each spawned executor gets a signed token (EXECUTOR_AUTHENTICATION_TOKEN); the executor API wants it as Authorization: Bearer. The control API /sim/v1 then asks for credentials: without --credentials nobody can use it',
    })
    .option('containerizers', textFlag('containerizers', (t) => unknownIn(t, CONTAINERIZERS, 'containerizer'), { default: 'mesos,docker', describe: 'mesos,docker runs the simulated container engine for DOCKER tasks; mesos leaves it out' }))
    .option('engine-socket', { type: 'string', describe: "The container engine API's Unix socket (default <work-dir>/engine.sock), mode 0600" })
    .option('jwt-secret-key', { type: 'string', describe: 'File whose bytes sign executor tokens (default: 32 random bytes made at start)' })
    .group(EXECUTOR_FLAGS, 'Executors (docs/executor-api.md; docs/agent-api.md, "Container engine"):');
}

const EXECUTOR_FLAGS = [
  'custom-executors',
  'work-dir',
  'executor-registration-timeout',
  'executor-shutdown-grace-period',
  'http-executor-domain-sockets',
  'switch-user',
  'authenticate-http-executors',
  'containerizers',
  'engine-socket',
  'jwt-secret-key',
];

export function upOptions(y: Argv): Argv<UpArgs> {
  return withOptions(executorOptions(containerOptions(historyOptions(y))))
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address the master and agents listen on' })
    .option('advertise-host', {
      type: 'string',
      describe: "Host written in master_info, pids, offers and /redirect, where clients go (default --host); e.g. localhost with --host 0.0.0.0 in a container",
    })
    .option('port', numberFlag('port', PORT, { default: 5050, describe: 'Master port (0 picks a free port); with --masters N, the first of N consecutive ones' }))
    .option('masters', numberFlag('masters', MASTERS, { default: 1, describe: 'Masters with a leader: only the leader serves, the others answer 307 to it' }))
    .option('election-delay', numberFlag('election-delay', SECONDS_OR_ZERO, { default: 10, describe: "Seconds from a leader's death to the next election (upstream's --zk_session_timeout)" }))
    .option('agent-reregister-timeout', numberFlag('agent-reregister-timeout', SECONDS, { default: 600, describe: 'Seconds a new leader waits for the agents it recovered before they are unreachable' }))
    .option('agents', numberFlag('agents', COUNT_OR_ZERO, { default: 3, describe: 'Number of agents' }))
    .option('agent-resources', textFlag('agent-resources', (t) => reasonOf(agentResourcesOf(t)), { default: DEFAULT_AGENT_RESOURCES, describe: 'Resources of each agent (cpus, mem, disk, gpus, ports, or custom names)' }))
    .option('agent-attributes', textFlag('agent-attributes', (t) => reasonOf(parseAttributes(t)), { default: '', describe: "Attributes of each agent, e.g. 'rack:r1;zone:z1'" }))
    .option('agent-port', numberFlag('agent-port', PORT, { default: 0, describe: 'Port of the first agent, the next ones follow (0 = ephemeral)' }))
    .option('agent-addressing', {
      choices: AGENT_ADDRESSINGS,
      default: 'ports' as AgentAddressing,
      describe: 'ports: a port and listener per agent; loopback: an address per agent (127.0.0.2 and up, Linux) on one port, one listener',
    })
    .option('seed', { type: 'string', default: '0', describe: 'Seed of every random choice (ids, allocation order)' })
    .option('time', {
      choices: ['realtime', 'virtual'] as const,
      default: 'realtime' as TimeMode,
      describe: 'realtime: cluster time follows the wall clock; virtual: it moves only through the control API (POST /sim/v1/advance), and a run replays from its seed',
    })
    .option('record-trace', {
      type: 'boolean',
      describe: 'Keep the whole trace, so that GET /sim/v1/trace replays with clustersim replay (default: on in virtual time; --no-record-trace keeps only the recent entries)',
    })
    .option('epoch', numberFlag('epoch', EPOCH, { describe: 'Cluster time zero, ms since the Unix epoch (default: the wall clock at start in real time, 1700000000000 in virtual time)' }))
    .option('heartbeat-interval', numberFlag('heartbeat-interval', SECONDS, { default: 15, describe: 'Seconds between HEARTBEAT events' }))
    .option('allocation-interval', numberFlag('allocation-interval', SECONDS, { default: 1, describe: 'Seconds between batched allocations of declined and freed resources' }))
    .option('weights', textFlag('weights', (t) => reasonOf(parseWeights(t)), { default: '', describe: "Role weights for fair sharing, e.g. 'dev=2,prod=3.5' (default 1 each)" }))
    .option('log-level', { choices: LOG_LEVELS, default: 'info' as LogLevel, requiresArg: true, describe: 'Log level (logs go to stderr)' })
    .option('log-format', logFormatOption())
    .option('credentials', {
      type: 'string',
      describe: 'File of principals and secrets (upstream JSON: {"credentials":[{"principal":..,"secret":..}]}); turns on HTTP Basic on the scheduler and operator APIs, and on the control API /sim/v1 (its reads in the realm mesos-master-readonly, its changes in mesos-master-readwrite); without any authentication flag the control API is open',
    })
    .option('acls', {
      type: 'string',
      describe: "File of ACLs (upstream JSON: permissive and every action of acls.proto) deciding what principals may do; clustersim's own control_simulation (objects ANY or NONE) decides who may change the simulation through /sim/v1 (clock, faults, reset, snapshot, restore), and view_* what /sim/v1/trace, /events and /misuse show",
    })
    .option('authenticate-http-readonly', {
      type: 'boolean',
      default: false,
      describe: 'HTTP Basic (with --credentials) on the read-only endpoints too (/state, /frameworks, /flags, /metrics/snapshot, ...), so view_* ACLs see who reads',
    })
    .option('authenticate-http-readwrite', { type: 'boolean', default: false, describe: "HTTP Basic (with --credentials) on each agent's operator API /api/v1 (realm mesos-agent-readwrite)" })
    .group(LIMIT_FLAGS, 'Limits (docs/cli.md, "Limits"):')
    .option('idle-timeout', numberFlag('idle-timeout', SECONDS, { default: L.idleTimeoutSeconds, describe: 'Seconds a connection may sit silent before it is closed (not event streams)' }))
    .option('headers-timeout', numberFlag('headers-timeout', SECONDS, { default: L.headersTimeoutSeconds, describe: "Seconds a client has to send a request's headers" }))
    .option('request-timeout', numberFlag('request-timeout', SECONDS, { default: L.requestTimeoutSeconds, describe: 'Seconds a client has to send a whole request, body included' }))
    .option('max-connections', numberFlag('max-connections', COUNT, { default: L.maxConnections, describe: "Concurrent connections of the master's listener" }))
    .option('agent-max-connections', numberFlag('agent-max-connections', COUNT, { default: L.agentMaxConnections, describe: "Concurrent connections of each agent's listener" }))
    .option('max-subscriptions', numberFlag('max-subscriptions', COUNT, { default: L.maxSubscriptions, describe: 'Concurrent event streams; a SUBSCRIBE past it gets 503' }))
    .option('max-frameworks', numberFlag('max-frameworks', COUNT, { default: L.maxFrameworks, describe: 'Frameworks connected or within failover; a new one past it gets 503' }))
    .option('stream-buffer-limit', numberFlag('stream-buffer-limit', MIB, { default: L.streamBufferLimitMiB, describe: 'MiB waiting on one event stream before it is cut' }))
    .option('stream-buffer-budget', numberFlag('stream-buffer-budget', MIB, { default: L.streamBufferBudgetMiB, describe: 'MiB waiting on all event streams before the fullest is cut' }))
    .example('$0 up', 'A master on 127.0.0.1:5050 with 3 agents')
    .example('$0 up --time virtual', 'Cluster time moves only when told: POST /sim/v1/advance with {"ms": 15000}')
    .example('$0 up --masters 3', 'Three masters on 5050-5052: 5050 leads, the others redirect; POST /sim/v1/faults {"type":"crash_master"} fails it over')
    .example("$0 up --port 0 --agents 1 --agent-attributes 'rack:r1'", 'One agent, any free port')
    .example('$0 up --agents 10000 --agent-addressing loopback', 'Ten thousand agents at 127.0.0.2:P and up, served by one listener')
    .example('$0 up --custom-executors spawn --work-dir /tmp/sandboxes', "Tasks' own executors run as real processes, each in a sandbox with its stdout and stderr")
    .example('$0 up --credentials creds.json --acls acls.json', 'Schedulers authenticate (HTTP Basic) and subscribe only with the roles the ACLs allow; /sim/v1 asks for credentials, its changes for control_simulation')
    .example('$0 up --cgroups v1 --agents 1', 'Containers get cgroups v1 memory files (memory.limit_in_bytes, memory.soft_limit_in_bytes)')
    .example('$0 up --credentials creds.json --acls acls.json --authenticate-http-readonly', '/state and the other read endpoints ask for credentials too, and show each reader what view_* allows') as unknown as Argv<UpArgs>;
}

export async function runUp(args: UpArgs): Promise<void> {
  const logger = createLogger(args['log-level'], undefined, args['log-format']);
  let running;
  try {
    running = await startCluster(clusterOptionsOf(args, logger));
  } catch (error) {
    process.stderr.write(`clustersim up: ${refusal(error)}\n`);
    process.exitCode = USAGE_EXIT_CODE;
    return;
  }
  const standbys = running.masterUrls.length > 1 ? ` (leader; standby masters at ${running.masterUrls.slice(1).join(', ')})` : '';
  process.stdout.write(`clustersim: master at ${running.masterUrl}${standbys} with ${running.agents.length} agent${running.agents.length === 1 ? '' : 's'}\n`);
  // The ready line stays the one line on stdout; where the engine listens is a log line.
  if (running.engineSocket !== undefined) logger.info({ engineSocket: running.engineSocket, workDir: running.workDir }, 'container engine listening');
  const services = await startWith(args, running.masterUrl, args.host, logger);
  if (typeof services === 'string') {
    process.stderr.write(`clustersim: ${services}\n`);
    await running.close();
    process.exitCode = 1;
    return;
  }
  for (const line of services.lines) process.stdout.write(`clustersim: ${line}\n`);
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    void services.close().then(() => running.close()).then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/** The library's options from the command's. */
function clusterOptionsOf(args: UpArgs, logger: Logger): StartClusterOptions {
  return {
    host: args.host,
    ...(args['advertise-host'] === undefined ? {} : { advertiseHost: args['advertise-host'] }),
    port: args.port,
    masters: args.masters,
    electionDelaySeconds: args['election-delay'],
    agentReregisterTimeoutSeconds: args['agent-reregister-timeout'],
    maxCompletedTasksPerFramework: args['max-completed-tasks-per-framework'],
    maxCompletedFrameworks: args['max-completed-frameworks'],
    agents: args.agents,
    agentResources: args['agent-resources'],
    agentAttributes: args['agent-attributes'],
    agentPort: args['agent-port'],
    agentAddressing: args['agent-addressing'],
    seed: args.seed,
    heartbeatIntervalSeconds: args['heartbeat-interval'],
    allocationIntervalSeconds: args['allocation-interval'],
    weights: args.weights,
    idleTimeoutSeconds: args['idle-timeout'],
    headersTimeoutSeconds: args['headers-timeout'],
    requestTimeoutSeconds: args['request-timeout'],
    maxConnections: args['max-connections'],
    agentMaxConnections: args['agent-max-connections'],
    maxSubscriptions: args['max-subscriptions'],
    maxFrameworks: args['max-frameworks'],
    streamBufferLimitMiB: args['stream-buffer-limit'],
    streamBufferBudgetMiB: args['stream-buffer-budget'],
    ...(args.credentials === undefined ? {} : { credentials: args.credentials }),
    ...(args.acls === undefined ? {} : { acls: args.acls }),
    authenticateHttpReadonly: args['authenticate-http-readonly'],
    customExecutors: args['custom-executors'],
    ...(args['work-dir'] === undefined ? {} : { workDir: args['work-dir'] }),
    executorRegistrationTimeoutSeconds: args['executor-registration-timeout'],
    executorShutdownGracePeriodSeconds: args['executor-shutdown-grace-period'],
    httpExecutorDomainSockets: args['http-executor-domain-sockets'],
    switchUser: args['switch-user'],
    authenticateHttpExecutors: args['authenticate-http-executors'],
    containerizers: args.containerizers,
    ...(args['engine-socket'] === undefined ? {} : { engineSocket: args['engine-socket'] }),
    ...(args['jwt-secret-key'] === undefined ? {} : { jwtSecretKey: args['jwt-secret-key'] }),
    authenticateHttpReadwrite: args['authenticate-http-readwrite'],
    cgroups: args.cgroups,
    isolation: args.isolation,
    memoryControllerDelegated: args['memory-controller-delegated'],
    time: args.time,
    recordTrace: args['record-trace'] ?? args.time === 'virtual',
    ...(args.epoch === undefined ? {} : { epochMs: args.epoch }),
    logger,
    // A failed core is a bug: the fatal line is logged; stop with a non-zero status.
    onFailure: (failure) => {
      process.stderr.write(`clustersim: ${failure.message}\n`);
      process.exit(70);
    },
  };
}
