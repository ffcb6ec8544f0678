/**
 * The core's own domain types. Only `src/wire/` converts between these and
 * wire messages. Fields the core does not interpret (containers, health
 * checks, discovery, ...) travel as the opaque `raw` wire message, so the
 * HTTP layer can render them back unchanged.
 */
import type { Resources } from './resources.js';
import type { Range } from './ranges.js';
import type { Unavailability } from './maintenance.js';

export const TASK_STATES = [
  'TASK_STAGING',
  'TASK_STARTING',
  'TASK_RUNNING',
  'TASK_KILLING',
  'TASK_FINISHED',
  'TASK_FAILED',
  'TASK_KILLED',
  'TASK_ERROR',
  'TASK_LOST',
  'TASK_DROPPED',
  'TASK_UNREACHABLE',
  'TASK_GONE',
  'TASK_GONE_BY_OPERATOR',
  'TASK_UNKNOWN',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

export type StatusSource = 'SOURCE_MASTER' | 'SOURCE_AGENT' | 'SOURCE_EXECUTOR';

export type StatusReason =
  | 'REASON_COMMAND_EXECUTOR_FAILED'
  | 'REASON_EXECUTOR_TERMINATED'
  | 'REASON_FRAMEWORK_REMOVED'
  | 'REASON_INVALID_OFFERS'
  | 'REASON_RECONCILIATION'
  | 'REASON_TASK_INVALID'
  | 'REASON_TASK_GROUP_INVALID'
  | 'REASON_TASK_UNAUTHORIZED'
  | 'REASON_TASK_GROUP_UNAUTHORIZED'
  | 'REASON_TASK_UNKNOWN'
  | 'REASON_TASK_KILLED_DURING_LAUNCH'
  | 'REASON_CONTAINER_LAUNCH_FAILED'
  | 'REASON_EXECUTOR_UNREGISTERED'
  | 'REASON_AGENT_REMOVED'
  | 'REASON_AGENT_REMOVED_BY_OPERATOR'
  | 'REASON_AGENT_DRAINING'
  | 'REASON_AGENT_RESTARTED'
  | 'REASON_EXECUTOR_REGISTRATION_TIMEOUT'
  | 'REASON_EXECUTOR_REREGISTRATION_TIMEOUT'
  | 'REASON_CONTAINER_LIMITATION_MEMORY';

export interface TaskStatus {
  readonly taskId: string;
  readonly state: TaskState;
  readonly source: StatusSource;
  readonly reason?: StatusReason;
  readonly message?: string;
  readonly agentId?: string;
  readonly executorId?: string;
  /** Milliseconds since the Unix epoch in cluster time. */
  readonly timestampMs: number;
  /** 16 bytes as 32 hex digits; present only when the update must be acknowledged. */
  readonly uuid?: string;
  readonly data?: Uint8Array;
  readonly containerId?: string;
  /** When the master marked the task's agent unreachable (TASK_UNREACHABLE, TASK_LOST), in cluster wall time. */
  readonly unreachableTimeMs?: number;
  /** The resources whose limit the container passed (REASON_CONTAINER_LIMITATION_*). */
  readonly limitation?: Resources;
}

export interface Label {
  readonly key: string;
  readonly value?: string;
}

export interface Attribute {
  readonly name: string;
  readonly type: 'SCALAR' | 'RANGES' | 'SET' | 'TEXT';
  readonly milli?: number;
  readonly ranges?: readonly Range[];
  readonly set?: readonly string[];
  readonly text?: string;
}

export interface CommandSpec {
  readonly shell: boolean;
  readonly value?: string;
  readonly arguments: readonly string[];
  /** The user to run as (`CommandInfo.user`); the ACLs ask about it (run_tasks). */
  readonly user?: string;
}

export type ExecutorType = 'UNKNOWN' | 'DEFAULT' | 'CUSTOM';

export interface ExecutorSpec {
  readonly executorId: string;
  readonly type: ExecutorType;
  readonly name?: string;
  readonly command?: CommandSpec;
  readonly resources: Resources;
  /** Set when the wire message could not be turned into a valid executor. */
  readonly invalid?: string;
  readonly raw?: unknown;
}

export interface TaskSpec {
  readonly taskId: string;
  readonly name: string;
  readonly agentId: string;
  readonly resources: Resources;
  readonly command?: CommandSpec;
  readonly executor?: ExecutorSpec;
  readonly labels: readonly Label[];
  readonly killGracePeriodMs?: number;
  /** Limits by resource name; `Infinity` means unlimited. */
  readonly limits?: Readonly<Record<string, number>>;
  /** Run by the container engine (`container.type` DOCKER), from this image. */
  readonly engine?: { readonly image: string };
  /** Launched with a TTY (`container.tty_info`): a command task's process can be attached to. */
  readonly tty?: boolean;
  /** Set when the wire message could not be turned into a valid task. */
  readonly invalid?: string;
  readonly raw?: unknown;
}

export type Capability =
  | 'REVOCABLE_RESOURCES'
  | 'TASK_KILLING_STATE'
  | 'GPU_RESOURCES'
  | 'SHARED_RESOURCES'
  | 'PARTITION_AWARE'
  | 'MULTI_ROLE'
  | 'RESERVATION_REFINEMENT'
  | 'REGION_AWARE';

export interface FrameworkInfo {
  readonly user: string;
  readonly name: string;
  readonly id?: string;
  readonly failoverTimeoutMs: number;
  readonly checkpoint: boolean;
  /** The deprecated single role, for frameworks without MULTI_ROLE. */
  readonly role?: string;
  readonly roles: readonly string[];
  readonly principal?: string;
  readonly hostname?: string;
  readonly webuiUrl?: string;
  readonly capabilities: readonly Capability[];
  readonly labels: readonly Label[];
  /** Set when the wire message carries something upstream refuses (offer filters). */
  readonly invalid?: string;
  readonly raw?: unknown;
}

export type ConstraintSelector =
  | { readonly attributeName: string }
  | { readonly pseudo: 'HOSTNAME' | 'REGION' | 'ZONE' | 'UNKNOWN' };

export type ConstraintPredicate =
  | { readonly kind: 'exists' | 'not_exists' }
  | { readonly kind: 'text_equals' | 'text_not_equals'; readonly value: string }
  | { readonly kind: 'text_matches' | 'text_not_matches'; readonly regex: string };

export interface AttributeConstraint {
  readonly selector: ConstraintSelector;
  readonly predicate: ConstraintPredicate;
}

/** Per role: groups OR-ed together, constraints inside a group AND-ed. */
export type OfferConstraints = Readonly<Record<string, readonly (readonly AttributeConstraint[])[]>>;

export interface Url {
  readonly scheme: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly path?: string;
}

/** What a framework sees of an inverse offer: the agent asked back and when it will be unavailable. */
export interface InverseOfferView {
  readonly id: string;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly unavailability: Unavailability;
}

export interface OfferView {
  readonly id: string;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly hostname: string;
  /** Set only for MULTI_ROLE frameworks, as upstream strips it otherwise. */
  readonly allocationRole?: string;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
  readonly executorIds: readonly string[];
  readonly url: Url;
  /** The framework has RESERVATION_REFINEMENT: resources go out with `reservations`, else with `role` and `reservation`. */
  readonly reservationRefinement?: boolean;
  /** The agent's machine is scheduled for maintenance: when it will be unavailable. */
  readonly unavailability?: Unavailability;
}

export interface MasterInfo {
  readonly id: string;
  readonly ip: string;
  readonly port: number;
  readonly hostname: string;
  readonly pid: string;
  readonly version: string;
}

export type SchedulerEvent =
  | {
      readonly type: 'SUBSCRIBED';
      readonly frameworkId: string;
      readonly heartbeatIntervalSeconds: number;
      readonly masterInfo: MasterInfo;
    }
  | { readonly type: 'OFFERS'; readonly offers: readonly OfferView[] }
  | { readonly type: 'RESCIND'; readonly offerId: string }
  | { readonly type: 'INVERSE_OFFERS'; readonly inverseOffers: readonly InverseOfferView[] }
  | { readonly type: 'RESCIND_INVERSE_OFFER'; readonly inverseOfferId: string }
  | { readonly type: 'UPDATE'; readonly status: TaskStatus }
  | { readonly type: 'UPDATE_OPERATION_STATUS'; readonly status: OperationStatus }
  | { readonly type: 'MESSAGE'; readonly agentId: string; readonly executorId: string; readonly data: Uint8Array }
  | { readonly type: 'FAILURE'; readonly agentId?: string; readonly executorId?: string; readonly status?: number }
  | { readonly type: 'ERROR'; readonly message: string }
  | { readonly type: 'HEARTBEAT' };

export type OperationState =
  | 'OPERATION_PENDING'
  | 'OPERATION_FINISHED'
  | 'OPERATION_FAILED'
  | 'OPERATION_ERROR'
  | 'OPERATION_DROPPED'
  | 'OPERATION_UNREACHABLE'
  | 'OPERATION_GONE_BY_OPERATOR'
  | 'OPERATION_RECOVERING'
  | 'OPERATION_UNKNOWN';

export interface OperationStatus {
  readonly operationId?: string;
  readonly state: OperationState;
  readonly message?: string;
  readonly agentId?: string;
  readonly resourceProviderId?: string;
  /** 16 bytes as 32 hex digits; present only when the update must be acknowledged. */
  readonly uuid?: string;
}

/** Filters on ACCEPT and DECLINE, already defaulted and capped. */
export interface Filters {
  readonly refuseMs: number;
}

/**
 * The offer operations that change resources. `resources` are RESERVE's
 * and UNRESERVE's `resources`, CREATE's and DESTROY's `volumes`; `invalid`
 * is set when the wire resources could not be read.
 */
export type ResourceOperationType = 'RESERVE' | 'UNRESERVE' | 'CREATE' | 'DESTROY';

export interface ResourceOperation {
  readonly type: ResourceOperationType;
  readonly resources: Resources;
  readonly id?: string;
  readonly invalid?: string;
}

export type Operation =
  | { readonly type: 'LAUNCH'; readonly tasks: readonly TaskSpec[]; readonly id?: string }
  | {
      readonly type: 'LAUNCH_GROUP';
      readonly executor: ExecutorSpec;
      readonly tasks: readonly TaskSpec[];
      readonly id?: string;
    }
  | ResourceOperation
  | { readonly type: 'UNSUPPORTED'; readonly name: string; readonly id?: string };

export type SchedulerCall =
  | { readonly type: 'TEARDOWN' }
  | {
      readonly type: 'ACCEPT';
      readonly offerIds: readonly string[];
      readonly operations: readonly Operation[];
      readonly filters: Filters;
    }
  | { readonly type: 'DECLINE'; readonly offerIds: readonly string[]; readonly filters: Filters }
  | {
      readonly type: 'ACCEPT_INVERSE_OFFERS' | 'DECLINE_INVERSE_OFFERS';
      readonly offerIds: readonly string[];
      readonly filters: Filters;
    }
  | { readonly type: 'REVIVE'; readonly roles: readonly string[] }
  | { readonly type: 'SUPPRESS'; readonly roles: readonly string[] }
  | { readonly type: 'KILL'; readonly taskId: string; readonly agentId?: string; readonly gracePeriodMs?: number }
  | { readonly type: 'SHUTDOWN'; readonly executorId: string; readonly agentId: string }
  | { readonly type: 'ACKNOWLEDGE'; readonly agentId: string; readonly taskId: string; readonly uuid: string }
  | {
      readonly type: 'ACKNOWLEDGE_OPERATION_STATUS';
      readonly agentId?: string;
      readonly operationId: string;
      readonly uuid: string;
    }
  | { readonly type: 'RECONCILE'; readonly tasks: readonly { readonly taskId: string; readonly agentId?: string }[] }
  | {
      readonly type: 'RECONCILE_OPERATIONS';
      readonly operations: readonly { readonly operationId: string; readonly agentId?: string }[];
    }
  | { readonly type: 'MESSAGE'; readonly agentId: string; readonly executorId: string; readonly data: Uint8Array }
  | { readonly type: 'REQUEST' }
  | { readonly type: 'UPDATE_FRAMEWORK'; readonly subscription: Subscription };

export type SchedulerCallType = SchedulerCall['type'];

/** The payload of SUBSCRIBE and UPDATE_FRAMEWORK. */
export interface Subscription {
  readonly info: FrameworkInfo;
  readonly suppressedRoles: readonly string[];
  readonly offerConstraints?: OfferConstraints;
}

/** Scalar quantities by resource name, in thousandths. */
export type Quantities = ReadonlyMap<string, number>;

/** A role's quota: limits (and the deprecated guarantees) on scalar resources. */
export interface QuotaConfig {
  readonly role: string;
  readonly guarantees: Quantities;
  readonly limits: Quantities;
}

/** A quota config as the operator sent it: plain numbers, unchecked. */
export interface QuotaConfigRequest {
  readonly role: string;
  readonly guarantees: ReadonlyMap<string, number>;
  readonly limits: ReadonlyMap<string, number>;
}

/** UPDATE_QUOTA's payload. */
export interface QuotaUpdate {
  readonly force: boolean;
  readonly configs: readonly QuotaConfigRequest[];
}

/** A role's weight (UPDATE_WEIGHTS, GET_WEIGHTS, `--weights`). */
export interface WeightInfo {
  readonly role: string;
  readonly weight: number;
}
