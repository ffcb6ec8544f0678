/**
 * The options of `startCluster()`: what each does. Each one's default,
 * unit, limits and `clustersim up` flag are in the option table
 * (option-table.ts, and docs/cli.md made from it), written once there.
 */
import type { Logger } from 'pino';
import type { AgentAddressing } from '../http/agent/listener.js';
import type { CustomExecutors } from '../core/model/executor-api.js';
import type { ClusterFailure, TimeMode } from '../runtime/driver.js';
import type { LogLevel } from '../runtime/logging.js';
import type { AuthFileSource } from '../runtime/auth-files.js';
import type { ContainerOptions } from './cgroups.js';

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
  /** Address every server binds to. */
  readonly host?: string;
  /** Master port; 0 picks a free one. With several masters, the first one's; the others follow. */
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
  /** Masters with a leader (`--masters`): master `i` on `port + i`; only the leader serves, the others redirect. */
  readonly masters?: number;
  /** From a leader's death to the next election, in seconds (upstream's `--zk_session_timeout`). */
  readonly electionDelaySeconds?: number;
  /** How long a new leader waits for the agents it recovered before they are unreachable (upstream's `--agent_reregister_timeout`). */
  readonly agentReregisterTimeoutSeconds?: number;
  /** Finished tasks kept per framework, the oldest dropped first (upstream's `--max_completed_tasks_per_framework`). */
  readonly maxCompletedTasksPerFramework?: number;
  /** Removed frameworks kept, the oldest dropped first (upstream's `--max_completed_frameworks`). */
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
   * Port of the first agent, the next ones follow; 0 = ephemeral.
   * With `loopback` addressing, the one port of every agent.
   */
  readonly agentPort?: number;
  /**
   * `ports`: each agent listens on `host` with a port and a server
   * of its own. `loopback`: each agent has an address of its own in
   * 127.0.0.0/8 (127.0.0.2 and up), all on one port and served by one app;
   * on a loopback host one socket per address, on 0.0.0.0 one socket for
   * all. Where the host or the system cannot give agents their own
   * addresses, agents fall back to ports (and the log says so).
   */
  readonly agentAddressing?: AgentAddressing;
  readonly seed?: string | number;
  readonly heartbeatIntervalSeconds?: number;
  /** Seconds between batched allocations of recovered resources (upstream `--allocation_interval`). */
  readonly allocationIntervalSeconds?: number;
  /** Role weights, upstream's `--weights` form: `role1=2.5,role2=1`. */
  readonly weights?: string;
  /** Cluster time zero, ms since the Unix epoch (`--epoch`); default the wall clock at start in real time, a constant in virtual time. */
  readonly epochMs?: number;
  /** `realtime` follows the wall clock; `virtual` moves only on `advance()`. */
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
   * the control API (`/sim/v1/`, http/sim-auth.ts). A file path, or
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
   * its own) exists. `simulate`: the agent plays it. `spawn`: the
   * agent runs its command as a real process in a sandbox under `workDir`,
   * which subscribes on the agent's executor API. `await`: the agent waits
   * for an outside process to subscribe as it (a test harness, a debugger).
   */
  readonly customExecutors?: CustomExecutors;
  /**
   * `--switch-user` (upstream's `--switch_user`): a spawned
   * executor runs as its command's user, else its framework's, its sandbox
   * given to that user; a user the host lacks, or one this process may not
   * switch to (not being root), fails the launch (TASK_DROPPED for a
   * partition-aware framework, else TASK_LOST). False: executors run as
   * this process' user.
   */
  readonly switchUser?: boolean;
  /**
   * `--work-dir`: the agents' `--work_dir`, where executor sandboxes are
   * (`<workDir>/slaves/<agent>/frameworks/...`); spawned executors' are
   * real directories there. Without: a temporary directory, removed on
   * close, for spawned executors; simulated sandboxes report `/var/lib/mesos`.
   */
  readonly workDir?: string;
  /** `--sandbox-limit`: MiB one simulated sandbox holds (default 1). */
  readonly sandboxLimitMiB?: number;
  /** `--sandbox-budget`: MiB all simulated sandboxes hold together (default 256). */
  readonly sandboxBudgetMiB?: number;
  /** `--executor-registration-timeout`: seconds a launched executor has to subscribe. */
  readonly executorRegistrationTimeoutSeconds?: number;
  /** `--executor-shutdown-grace-period`: seconds an executor has to exit after SHUTDOWN. */
  readonly executorShutdownGracePeriodSeconds?: number;
  /**
   * `--http-executor-domain-sockets`: each agent serves its executor API on
   * a Unix domain socket too, `<workDir>/agents/<agent>/agent.sock`, given
   * to its executors as `DOMAIN_SOCKET`.
   */
  readonly httpExecutorDomainSockets?: boolean;
  /**
   * `--containerizers`: `mesos,docker` runs the simulated
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

export interface AgentGroupOptions {
  readonly count: number;
  readonly resources?: string;
  readonly attributes?: string;
}
