/**
 * The options of a cluster's start, one row each: the library's name
 * (`startCluster({ executorShutdownGracePeriodSeconds })`), the flag of
 * `clustersim up` (`--executor-shutdown-grace-period`, and so the
 * environment variable `CLUSTERSIM_EXECUTOR_SHUTDOWN_GRACE_PERIOD`), the
 * kind of value and its limits, the default, the group of `--help` and the
 * line that describes it. Everything else is made from the table: the
 * flags of `clustersim up` (cli/up.ts), the checks of `startCluster()`
 * (options.ts), the defaults it applies, the names a scenario file's
 * errors use (scenario.ts) and the option table of docs/cli.md
 * (`npm run gen:docs`).
 *
 * Rows without a flag are the library's alone (objects, functions, knobs
 * of the scenario runner). Flags of `clustersim up` that are no library
 * option stay with the command: `--log-format` (cli/log-options.ts) and
 * `--with`, `--workflow-config`, `--workflow-port` (cli/up-with.ts).
 *
 * The order is the order of `--help` (within each group) and of the docs.
 */
import { DEFAULT_AGENT_FLAGS, CGROUPS_VERSIONS } from '../core/agent/flags.js';
import { CUSTOM_EXECUTOR_MODES } from '../core/model/executor-api.js';
import { DEFAULT_ELECTION_DELAY_MS } from '../core/master/group.js';
import { MAX_COMPLETED_TASKS_PER_FRAMEWORK } from '../core/master/framework.js';
import { MAX_COMPLETED_FRAMEWORKS } from '../core/master/master.js';
import { DEFAULT_AGENT_REREGISTER_TIMEOUT_MS } from '../core/master/recovery.js';
import { parseWeights } from '../core/master/weights.js';
import { AGENT_ADDRESSINGS } from '../http/agent/listener.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../http/event-stream.js';
import { DEFAULT_AGENT_MAX_CONNECTIONS, DEFAULT_LISTENER_LIMITS } from '../http/limits.js';
import { DEFAULT_MAX_FRAMEWORKS, DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_STREAM_BUDGET_BYTES } from '../http/master/app.js';
import { LOG_LEVELS } from '../runtime/logging.js';
import { parseAttributes } from '../wire/convert-common.js';
import { DEFAULT_ISOLATION, ISOLATORS } from './cgroups.js';
import * as check from './option-checks.js';
import type { OptionGroup, OptionRow } from './option-row.js';
import {
  COUNT,
  COUNT_OR_ZERO,
  MIB as MIB_RULE,
  PORT,
  SECONDS,
  SECONDS_OR_ZERO,
  type NumberRule,
} from './number-rules.js';
import { agentResourcesOf } from './resources.js';
import { sandboxOptions } from './sandbox-options.js';

export const DEFAULT_AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';
export const TIME_MODES = ['realtime', 'virtual'] as const;
const CONTAINERIZERS = ['mesos', 'docker'] as const;
const MIB = 1024 * 1024;
const MASTERS: NumberRule = { whole: true, min: 1, max: 64 };
const EPOCH: NumberRule = { whole: true, min: 0, unit: 'ms' };

export { OPTION_GROUPS, type OptionGroup, type OptionName, type OptionRow } from './option-row.js';

/** A comma list's first unknown item, as a reason. */
function unknownIn(text: string, known: readonly string[], what: string): string | undefined {
  const unknown = text
    .split(',')
    .map((w) => w.trim())
    .find((w) => w !== '' && !known.includes(w));
  return unknown === undefined ? undefined : `unknown ${what} ${JSON.stringify(unknown)} (known: ${known.join(', ')})`;
}

/** The reason a parser gives, or undefined where it parsed. */
const reasonOf = (parsed: unknown): string | undefined => (typeof parsed === 'string' ? parsed : undefined);

const masterOptions = [
  {
    name: 'maxCompletedTasksPerFramework',
    flag: 'max-completed-tasks-per-framework',
    kind: 'number',
    rule: COUNT_OR_ZERO,
    flagUnchecked: true,
    default: MAX_COMPLETED_TASKS_PER_FRAMEWORK,
    coreDefault: true,
    describe: 'Finished tasks the master keeps per framework, the oldest dropped first',
  },
  {
    name: 'maxCompletedFrameworks',
    flag: 'max-completed-frameworks',
    kind: 'number',
    rule: COUNT_OR_ZERO,
    flagUnchecked: true,
    default: MAX_COMPLETED_FRAMEWORKS,
    coreDefault: true,
    describe: 'Removed frameworks the master keeps, the oldest dropped first',
  },
  {
    name: 'host',
    flag: 'host',
    kind: 'text',
    check: check.nonEmpty,
    default: '127.0.0.1',
    describe: 'Address the master and agents listen on',
  },
  {
    name: 'advertiseHost',
    flag: 'advertise-host',
    kind: 'text',
    describe:
      'Host written in master_info, pids, offers and /redirect, where clients go (default --host); e.g. localhost with --host 0.0.0.0 in a container',
  },
  { name: 'advertisePorts', kind: 'value', check: check.advertisePorts },
  {
    name: 'port',
    flag: 'port',
    kind: 'number',
    rule: PORT,
    default: 0,
    flagDefault: 5050,
    describe: 'Master port (0 picks a free port); with --masters N, the first of N consecutive ones',
  },
  {
    name: 'masters',
    flag: 'masters',
    kind: 'number',
    rule: MASTERS,
    default: 1,
    scenarioField: 'cluster.masters',
    describe: 'Masters with a leader: only the leader serves, the others answer 307 to it',
  },
  {
    name: 'electionDelaySeconds',
    flag: 'election-delay',
    kind: 'number',
    rule: SECONDS_OR_ZERO,
    default: DEFAULT_ELECTION_DELAY_MS / 1000,
    describe: "Seconds from a leader's death to the next election (upstream's --zk_session_timeout)",
  },
  {
    name: 'agentReregisterTimeoutSeconds',
    flag: 'agent-reregister-timeout',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_AGENT_REREGISTER_TIMEOUT_MS / 1000,
    coreDefault: true,
    describe: 'Seconds a new leader waits for the agents it recovered before they are unreachable',
  },
] as const satisfies readonly OptionRow[];

const agentOptions = [
  { name: 'agents', flag: 'agents', kind: 'number', rule: COUNT_OR_ZERO, default: 3, describe: 'Number of agents' },
  {
    name: 'agentResources',
    flag: 'agent-resources',
    kind: 'text',
    parse: (t: string) => reasonOf(agentResourcesOf(t)),
    default: DEFAULT_AGENT_RESOURCES,
    describe: 'Resources of each agent (cpus, mem, disk, gpus, ports, or custom names)',
  },
  {
    name: 'agentAttributes',
    flag: 'agent-attributes',
    kind: 'text',
    parse: (t: string) => reasonOf(parseAttributes(t)),
    default: '',
    describe: "Attributes of each agent, e.g. 'rack:r1;zone:z1'",
  },
  { name: 'agentGroups', kind: 'value', check: check.agentGroups, scenarioField: 'cluster.agents' },
  {
    name: 'agentPort',
    flag: 'agent-port',
    kind: 'number',
    rule: PORT,
    default: 0,
    describe: 'Port of the first agent, the next ones follow (0 = ephemeral)',
  },
  {
    name: 'agentAddressing',
    flag: 'agent-addressing',
    kind: 'choice',
    choices: AGENT_ADDRESSINGS,
    default: 'ports',
    describe:
      'ports: a port and listener per agent; loopback: an address per agent (127.0.0.2 and up, Linux) on one port, one listener',
  },
] as const satisfies readonly OptionRow[];

const runOptions = [
  {
    name: 'seed',
    flag: 'seed',
    kind: 'text',
    check: check.seed,
    default: 0,
    flagDefault: '0',
    scenarioField: 'seed',
    describe: 'Seed of every random choice (ids, allocation order)',
  },
  {
    name: 'time',
    flag: 'time',
    kind: 'choice',
    choices: TIME_MODES,
    default: 'realtime',
    describe:
      'realtime: cluster time follows the wall clock; virtual: it moves only through the control API (POST /sim/v1/advance), and a run replays from its seed',
  },
  {
    name: 'recordTrace',
    flag: 'record-trace',
    kind: 'boolean',
    default: false,
    flagDefault: null,
    describe:
      'Keep the whole trace, so that GET /sim/v1/trace replays with clustersim replay (default: on in virtual time; --no-record-trace keeps only the recent entries)',
  },
  { name: 'recordInputs', kind: 'value', check: check.recordInputs },
  { name: 'traceWindow', kind: 'number', rule: COUNT },
  {
    name: 'epochMs',
    flag: 'epoch',
    kind: 'number',
    rule: EPOCH,
    check: check.finite,
    describe:
      'Cluster time zero, ms since the Unix epoch (default: the wall clock at start in real time, 1700000000000 in virtual time)',
  },
  {
    name: 'heartbeatIntervalSeconds',
    flag: 'heartbeat-interval',
    kind: 'number',
    rule: SECONDS,
    default: 15,
    scenarioField: 'cluster.heartbeat_interval',
    describe: 'Seconds between HEARTBEAT events',
  },
  {
    name: 'allocationIntervalSeconds',
    flag: 'allocation-interval',
    kind: 'number',
    rule: SECONDS,
    default: 1,
    scenarioField: 'cluster.allocation_interval',
    describe: 'Seconds between batched allocations of declined and freed resources',
  },
  {
    name: 'weights',
    flag: 'weights',
    kind: 'text',
    parse: (t: string) => reasonOf(parseWeights(t)),
    default: '',
    scenarioField: 'cluster.weights',
    describe: "Role weights for fair sharing, e.g. 'dev=2,prod=3.5' (default 1 each)",
  },
  {
    name: 'logLevel',
    flag: 'log-level',
    kind: 'choice',
    choices: LOG_LEVELS,
    default: 'silent',
    flagDefault: 'info',
    describe: 'Log level (logs go to stderr)',
  },
  { name: 'logger', kind: 'value', check: check.logger },
  { name: 'onFailure', kind: 'value', check: check.func },
  { name: 'streamKeepaliveMs', kind: 'number', rule: COUNT_OR_ZERO },
] as const satisfies readonly OptionRow[];

const authOptions = [
  {
    name: 'credentials',
    flag: 'credentials',
    kind: 'text',
    check: check.authSource,
    describe:
      'File of principals and secrets (upstream JSON: {"credentials":[{"principal":..,"secret":..}]}); turns on HTTP Basic on the scheduler and operator APIs, and on the control API /sim/v1 (its reads in the realm mesos-master-readonly, its changes in mesos-master-readwrite); without any authentication flag the control API is open',
  },
  {
    name: 'acls',
    flag: 'acls',
    kind: 'text',
    check: check.authSource,
    describe:
      "File of ACLs (upstream JSON: permissive and every action of acls.proto) deciding what principals may do; clustersim's own control_simulation (objects ANY or NONE) decides who may change the simulation through /sim/v1 (clock, faults, reset, snapshot, restore), and view_* what /sim/v1/trace, /events and /misuse show",
  },
  {
    name: 'authenticateHttpReadonly',
    flag: 'authenticate-http-readonly',
    kind: 'boolean',
    default: false,
    describe:
      'HTTP Basic (with --credentials) on the read-only endpoints too (/state, /frameworks, /flags, /metrics/snapshot, ...), so view_* ACLs see who reads',
  },
  {
    name: 'authenticateHttpReadwrite',
    flag: 'authenticate-http-readwrite',
    kind: 'boolean',
    default: false,
    describe: "HTTP Basic (with --credentials) on each agent's operator API /api/v1 (realm mesos-agent-readwrite)",
  },
] as const satisfies readonly OptionRow[];

const limitOptions = [
  {
    name: 'idleTimeoutSeconds',
    flag: 'idle-timeout',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_LISTENER_LIMITS.idleTimeoutSeconds,
    describe: 'Seconds a connection may sit silent before it is closed (not event streams)',
  },
  {
    name: 'headersTimeoutSeconds',
    flag: 'headers-timeout',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_LISTENER_LIMITS.headersTimeoutSeconds,
    describe: "Seconds a client has to send a request's headers",
  },
  {
    name: 'requestTimeoutSeconds',
    flag: 'request-timeout',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_LISTENER_LIMITS.requestTimeoutSeconds,
    describe: 'Seconds a client has to send a whole request, body included',
  },
  {
    name: 'maxConnections',
    flag: 'max-connections',
    kind: 'number',
    rule: COUNT,
    default: DEFAULT_LISTENER_LIMITS.maxConnections,
    describe: "Concurrent connections of the master's listener",
  },
  {
    name: 'agentMaxConnections',
    flag: 'agent-max-connections',
    kind: 'number',
    rule: COUNT,
    default: DEFAULT_AGENT_MAX_CONNECTIONS,
    describe: "Concurrent connections of each agent's listener",
  },
  {
    name: 'maxSubscriptions',
    flag: 'max-subscriptions',
    kind: 'number',
    rule: COUNT,
    default: DEFAULT_MAX_SUBSCRIPTIONS,
    describe: 'Concurrent event streams; a SUBSCRIBE past it gets 503',
  },
  {
    name: 'maxFrameworks',
    flag: 'max-frameworks',
    kind: 'number',
    rule: COUNT,
    default: DEFAULT_MAX_FRAMEWORKS,
    describe: 'Frameworks connected or within failover; a new one past it gets 503',
  },
  {
    name: 'streamBufferLimitMiB',
    flag: 'stream-buffer-limit',
    kind: 'number',
    rule: MIB_RULE,
    default: DEFAULT_MAX_BUFFERED_BYTES / MIB,
    describe: 'MiB waiting on one event stream before it is cut',
  },
  {
    name: 'streamBufferBudgetMiB',
    flag: 'stream-buffer-budget',
    kind: 'number',
    rule: MIB_RULE,
    default: DEFAULT_STREAM_BUDGET_BYTES / MIB,
    describe: 'MiB waiting on all event streams before the fullest is cut',
  },
] as const satisfies readonly OptionRow[];

const executorOptions = [
  {
    name: 'customExecutors',
    flag: 'custom-executors',
    kind: 'choice',
    choices: CUSTOM_EXECUTOR_MODES,
    default: DEFAULT_AGENT_FLAGS.customExecutors,
    scenarioField: 'cluster.custom_executors',
    describe:
      "A task's own executor (ExecutorInfo): simulate: the agent plays it; spawn: its command runs as a real process that speaks the executor API; await: the agent waits for an outside process to subscribe as it",
  },
  {
    name: 'workDir',
    flag: 'work-dir',
    kind: 'text',
    describe:
      "The agents' --work_dir, where executors' sandboxes are (<work-dir>/slaves/...): spawned executors' real ones (default: a temporary directory, removed on exit; simulated sandboxes report /var/lib/mesos)",
  },
  {
    name: 'executorRegistrationTimeoutSeconds',
    flag: 'executor-registration-timeout',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_AGENT_FLAGS.executorRegistrationTimeoutMs / 1000,
    scenarioField: 'cluster.agent_flags.executor_registration_timeout',
    describe: 'Seconds a launched executor has to subscribe before it is destroyed and its tasks fail',
  },
  {
    name: 'executorShutdownGracePeriodSeconds',
    flag: 'executor-shutdown-grace-period',
    kind: 'number',
    rule: SECONDS,
    default: DEFAULT_AGENT_FLAGS.executorShutdownGracePeriodMs / 1000,
    scenarioField: 'cluster.agent_flags.executor_shutdown_grace_period',
    describe: 'Seconds an executor has to exit after SHUTDOWN before it is destroyed and its tasks are lost',
  },
  {
    name: 'httpExecutorDomainSockets',
    flag: 'http-executor-domain-sockets',
    kind: 'boolean',
    default: false,
    describe:
      'Each agent serves its executor API on a Unix domain socket too (<work-dir>/agents/<agent>/agent.sock), given to executors as DOMAIN_SOCKET',
  },
  {
    name: 'switchUser',
    flag: 'switch-user',
    kind: 'boolean',
    default: true,
    describe:
      "Spawned executors run as their command's user, else their framework's (--no-switch-user: as this process' user)",
  },
  {
    name: 'authenticateHttpExecutors',
    flag: 'authenticate-http-executors',
    kind: 'boolean',
    default: false,
    describe:
      'Each spawned executor gets a signed token (EXECUTOR_AUTHENTICATION_TOKEN); the executor API wants it as Authorization: Bearer. The control API /sim/v1 then asks for credentials: without --credentials nobody can use it',
  },
  {
    name: 'containerizers',
    flag: 'containerizers',
    kind: 'text',
    parse: (t: string) => unknownIn(t, CONTAINERIZERS, 'containerizer'),
    default: 'mesos,docker',
    scenarioField: 'cluster.containerizers',
    describe: 'mesos,docker runs the simulated container engine for DOCKER tasks; mesos leaves it out',
  },
  {
    name: 'engineSocket',
    flag: 'engine-socket',
    kind: 'text',
    describe: "The container engine API's Unix socket (default <work-dir>/engine.sock), mode 0600",
  },
  {
    name: 'jwtSecretKey',
    flag: 'jwt-secret-key',
    kind: 'text',
    describe: 'File whose bytes sign executor tokens (default: 32 random bytes made at start)',
  },
] as const satisfies readonly OptionRow[];

const containerOptions = [
  {
    name: 'cgroups',
    flag: 'cgroups',
    kind: 'choice',
    choices: CGROUPS_VERSIONS,
    default: DEFAULT_AGENT_FLAGS.cgroups,
    scenarioField: 'cluster.agent_flags.cgroups',
    describe: "The cgroups version of the agents' hosts: the memory files each container has",
  },
  {
    name: 'isolation',
    flag: 'isolation',
    kind: 'text',
    parse: (t: string) => unknownIn(t, ISOLATORS, 'isolator'),
    default: DEFAULT_ISOLATION,
    scenarioField: 'cluster.agent_flags.isolation',
    describe: `The agents' isolators (${ISOLATORS.join(', ')}); with cgroups/mem, memory limits are enforced (OOM kill) and UPDATE_CONTAINER_MEMORY_LIMIT can change them`,
  },
  {
    name: 'memoryControllerDelegated',
    flag: 'memory-controller-delegated',
    kind: 'boolean',
    default: DEFAULT_AGENT_FLAGS.memoryControllerDelegated,
    describe:
      "cgroups v2: the memory controller is delegated to the agents' hierarchy (--no-memory-controller-delegated: no memory files, limits cannot be changed)",
  },
] as const satisfies readonly OptionRow[];

const grouped = <R extends OptionRow, G extends OptionGroup>(rows: readonly R[], group: G) =>
  rows.map((row) => ({ ...row, group }));

/** Every option of `startCluster()`, once. */
export const OPTION_TABLE = [
  ...grouped(masterOptions, 'masters'),
  ...grouped(agentOptions, 'agents'),
  ...grouped(runOptions, 'run'),
  ...grouped(authOptions, 'auth'),
  ...grouped(limitOptions, 'limits'),
  ...grouped([...executorOptions, ...sandboxOptions], 'executors'),
  ...grouped(containerOptions, 'containers'),
];

export type TableRow = (typeof OPTION_TABLE)[number];
/** The rows of `clustersim up`'s flags. */
export type FlagRow = Extract<TableRow, { flag: string }>;
export const FLAG_ROWS: readonly FlagRow[] = OPTION_TABLE.filter((row): row is FlagRow => 'flag' in row);
