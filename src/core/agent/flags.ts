/**
 * The agent's flags and limits, with upstream's defaults (wire-facts §10).
 */
import type { CustomExecutors } from '../model/executor-api.js';
import type { Resources } from '../model/resources.js';
import type { Attribute } from '../model/types.js';

/** The agent's flags about executors, with upstream's defaults in DEFAULT_AGENT_FLAGS. */
export interface AgentFlags {
  /** How a custom executor exists: played by the agent, a process it spawns, or one it waits for. */
  readonly customExecutors: CustomExecutors;
  /** `--executor_registration_timeout`: a launched executor that has not subscribed by then is destroyed. */
  readonly executorRegistrationTimeoutMs: number;
  /** `--executor_shutdown_grace_period`: how long an executor may take to exit after SHUTDOWN. */
  readonly executorShutdownGracePeriodMs: number;
  /** `--executor_reregistration_timeout`: how long a restarted agent waits for its executors to subscribe again. */
  readonly executorReregistrationTimeoutMs: number;
  /** `--recovery_timeout`: how long an executor of a checkpointing framework keeps trying to reach its agent. */
  readonly recoveryTimeoutMs: number;
  /** `--cgroups`: the cgroups version of the agent's host (cgroups.ts). */
  readonly cgroups: CgroupsVersion;
  /** `--isolation`: whether the memory isolator runs: memory limits are written to each container's cgroup and enforced. */
  readonly memoryIsolation: boolean;
  /** cgroups v2: whether the memory controller is delegated to the agent's hierarchy (without, no memory files). */
  readonly memoryControllerDelegated: boolean;
  /** `--containerizers` with `docker`: the agent runs the container engine, which DOCKER tasks need. */
  readonly containerEngine: boolean;
}

export type CgroupsVersion = 'v1' | 'v2';
export const CGROUPS_VERSIONS: readonly CgroupsVersion[] = ['v1', 'v2'];

export const DEFAULT_AGENT_FLAGS: AgentFlags = {
  customExecutors: 'simulate',
  executorRegistrationTimeoutMs: 60_000,
  executorShutdownGracePeriodMs: 5_000,
  executorReregistrationTimeoutMs: 2_000,
  recoveryTimeoutMs: 15 * 60_000,
  cgroups: 'v2',
  memoryIsolation: true,
  memoryControllerDelegated: true,
  containerEngine: true,
};

export const EXECUTOR_SHUTDOWN_GRACE_MS = DEFAULT_AGENT_FLAGS.executorShutdownGracePeriodMs;
/** How often a registering agent repeats its (re-)registration until answered. */
export const REGISTRATION_RETRY_MS = 2_000;
/** Upstream's master ping timeout: `--agent_ping_timeout` times `--max_agent_ping_timeouts`. */
export const MASTER_PING_TIMEOUT_MS = 75_000;

/** How many finished tasks an agent remembers, to ignore repeated launches of them. */
export const MAX_FINISHED_TASKS = 1_000;

/** How many exited executors an agent shows per framework (upstream's `--max_completed_executors_per_framework` default). */
export const MAX_COMPLETED_EXECUTORS_PER_FRAMEWORK = 150;

/** How many completed frameworks an agent shows (upstream's `MAX_COMPLETED_FRAMEWORKS`). */
export const MAX_COMPLETED_FRAMEWORKS = 50;

/** A machine and its agent process's flags. */
export interface AgentConfig {
  readonly id: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
  readonly flags: AgentFlags;
}
