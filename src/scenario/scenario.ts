/** A scenario as the runner takes it: the file read, checked and typed. */
import type { Bounds, Condition } from '../core/conditions.js';
import type { CustomExecutors } from '../core/model/executor-api.js';

export type { Bounds } from '../core/conditions.js';

/**
 * What holds at an instant: a condition of the shared vocabulary
 * (wire/sim/conditions.ts), each framework named as in the file (the
 * runner resolves the name to the framework's id).
 */
export type { Condition } from '../core/conditions.js';

export type Expectation = (
  | Condition
  | { readonly events: { readonly framework: string; readonly sequence: readonly string[] } }
  | { readonly resubscribed: { readonly framework: string; readonly within: number; readonly min?: number } }
  | { readonly metric: { readonly name: string } & Bounds }
  | { readonly invariants: true }
  | { readonly misuse: { readonly framework?: string; readonly kind?: string } & Bounds }
  | { readonly service: ServiceCheck }
  | { readonly process: ProcessCheck }
) & { readonly at?: number; readonly line: number };

/** A GET of a bundled framework's API and what its answer must be. */
export interface ServiceCheck {
  readonly name: string;
  readonly get: string;
  /** The answer's status (default 200). */
  readonly status?: number;
  /** A dotted path into the JSON answer, e.g. `status.state`, and the value it must have. */
  readonly field?: string;
  readonly equals?: string | number | boolean;
}

/** What an external framework's process must be: still running at the end, or ended with this code. */
export interface ProcessCheck {
  readonly framework: string;
  readonly running?: boolean;
  readonly exit_code?: number;
}

/**
 * A framework the user wrote, in a process of its own: started from
 * `command` (a string for `sh -c`, or an argument list), or started by the
 * user (`attach`). The runner knows its subscription by FrameworkInfo.name
 * (`match`).
 */
export interface ExternalSpec {
  readonly name: string;
  readonly command: string | readonly string[] | undefined;
  readonly attach: boolean;
  /** Where its command runs: an absolute path (the file's directory, or `cwd` from there); none when attached. */
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  /** The FrameworkInfo.name its subscription carries. */
  readonly match: string;
  /** How long (wall clock) the runner waits for it to subscribe. */
  readonly subscribeTimeoutMs: number;
  readonly line: number;
}

/** How a run meets time: `virtual` (the default, replayable) or `realtime` (the wall clock, for processes of their own). */
export type TimeMode = 'virtual' | 'realtime';

/** The bundled frameworks a run can start beside its cluster. */
export const SERVICE_KINDS = ['workflow', 'orchestrator'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

/**
 * A bundled framework started for the run, conducted by the runner like
 * the scripted ones: `config` is the workflow service's `[cluster]`
 * settings or the orchestration framework's environment.
 */
export interface ServiceSpec {
  readonly name: string;
  readonly kind: ServiceKind;
  readonly config: Readonly<Record<string, string>>;
}

/** A request to a bundled framework's API, as its users send them. */
export interface ServiceRequest {
  readonly service: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
}

export interface TaskPlan {
  /** Keep this many running (replace those that end), or launch `total` in all. */
  readonly keepRunning?: number;
  readonly total?: number;
  readonly command: string;
  readonly cpus: number;
  readonly mem: number;
  readonly disk: number;
}

export interface FrameworkSpec {
  readonly name: string;
  readonly role: string;
  readonly encoding: 'json' | 'protobuf';
  readonly checkpoint: boolean;
  readonly failoverTimeoutMs: number | undefined;
  readonly partitionAware: boolean;
  readonly startAtMs: number;
  readonly tasks: TaskPlan | undefined;
  readonly failoverEveryMs: number | undefined;
  /** When its process exits for good, if it does. */
  readonly stopAtMs: number | undefined;
  readonly reconnectAfterMs: number;
  readonly acknowledge: boolean;
  readonly reconcile: boolean;
  /** On inverse offers: kill its tasks on those agents, accept, and decline offers of agents whose machine is scheduled for maintenance. */
  readonly drainOnInverseOffers: boolean;
}

export interface AgentGroup {
  readonly count: number;
  readonly resources?: string;
  readonly attributes?: string;
}

export interface AgentFlagsSpec {
  readonly isolation?: string;
  readonly cgroups?: 'v1' | 'v2';
  readonly executorRegistrationTimeoutMs?: number;
  readonly executorShutdownGracePeriodMs?: number;
}

export interface TimelineEntry {
  readonly at?: number;
  readonly when?: Condition;
  /** The fault as the control API takes it, with `agent: N` and `framework: NAME` still to resolve. */
  readonly fault?: Readonly<Record<string, unknown>>;
  /** Or a request to a bundled framework's API. */
  readonly request?: ServiceRequest;
  readonly line: number;
}

/** The cluster a scenario runs on: what its start needs, then the quota set once it runs. */
export interface ClusterSpec {
  readonly masters: number;
  readonly agents: readonly AgentGroup[];
  readonly agentFlags?: AgentFlagsSpec;
  readonly heartbeatIntervalMs?: number;
  readonly allocationIntervalMs?: number;
  readonly weights?: string;
  /** The agents' containerizers, e.g. `docker,mesos` for engine containers (default `mesos`). */
  readonly containerizers?: string;
  /** What the agents do with a task's own executor (default `simulate`). */
  readonly customExecutors?: CustomExecutors;
  readonly quota: readonly { readonly role: string; readonly limits: Readonly<Record<string, number>> }[];
}

export interface Scenario {
  readonly file: string;
  readonly name: string;
  readonly description: string;
  readonly seed: string | number;
  readonly durationMs: number;
  readonly cluster: ClusterSpec;
  readonly time: TimeMode;
  readonly frameworks: readonly FrameworkSpec[];
  /** The frameworks of the file that run as processes of their own. */
  readonly externals: readonly ExternalSpec[];
  readonly services: readonly ServiceSpec[];
  readonly timeline: readonly TimelineEntry[];
  readonly expect: readonly Expectation[];
}

export function agentCount(scenario: Scenario): number {
  return scenario.cluster.agents.reduce((n, g) => n + g.count, 0);
}
