/**
 * The master operator API as the core sees it: the calls that change or
 * read something only the core can answer (`Cluster.operator`), what they
 * return, and the events of the operator event stream. Calls rendered from
 * the read model alone (GET_STATE, GET_AGENTS, ...) never reach the core;
 * `src/wire/` renders them from `cluster.view`.
 */
import type { AgentDescription } from './messages.js';
import type { MachineId, MaintenanceSchedule } from './maintenance.js';
import type { Resources } from './resources.js';
import type {
  FrameworkInfo,
  OfferConstraints,
  QuotaConfig,
  QuotaUpdate,
  TaskSpec,
  TaskState,
  TaskStatus,
  WeightInfo,
} from './types.js';
import type { OperationRecord } from './records.js';
import type { FrameworkState, Offer, Task } from './records.js';

export type OperatorCall =
  | { readonly type: 'TEARDOWN'; readonly frameworkId: string }
  | { readonly type: 'MARK_AGENT_GONE'; readonly agentId: string }
  | { readonly type: 'DEACTIVATE_AGENT'; readonly agentId: string }
  | { readonly type: 'REACTIVATE_AGENT'; readonly agentId: string }
  | {
      readonly type: 'DRAIN_AGENT';
      readonly agentId: string;
      readonly maxGracePeriodMs?: number;
      readonly markGone: boolean;
    }
  | ({ readonly type: 'UPDATE_QUOTA' } & QuotaUpdate)
  | { readonly type: 'GET_QUOTA' }
  | { readonly type: 'UPDATE_WEIGHTS'; readonly weights: readonly WeightInfo[] }
  | { readonly type: 'GET_WEIGHTS' }
  | {
      readonly type: 'RESERVE_RESOURCES';
      readonly agentId: string;
      readonly source: Resources;
      readonly resources: Resources;
    }
  | { readonly type: 'UNRESERVE_RESOURCES'; readonly agentId: string; readonly resources: Resources }
  | { readonly type: 'CREATE_VOLUMES'; readonly agentId: string; readonly volumes: Resources }
  | { readonly type: 'DESTROY_VOLUMES'; readonly agentId: string; readonly volumes: Resources }
  | { readonly type: 'GET_OPERATIONS' }
  | { readonly type: 'UPDATE_MAINTENANCE_SCHEDULE'; readonly schedule: MaintenanceSchedule }
  | { readonly type: 'START_MAINTENANCE' | 'STOP_MAINTENANCE'; readonly machines: readonly MachineId[] };

export type OperatorCallType = OperatorCall['type'];

/** What a call answers with a body; the other calls answer an empty 200. */
export type OperatorValue =
  | { readonly type: 'GET_QUOTA'; readonly configs: readonly QuotaConfig[] }
  | { readonly type: 'GET_WEIGHTS'; readonly weights: readonly WeightInfo[] }
  | { readonly type: 'GET_OPERATIONS'; readonly operations: readonly OperationRecord[] };

/** The state of an agent's drain (upstream DrainInfo). */
export interface DrainInfo {
  readonly state: 'DRAINING' | 'DRAINED';
  readonly maxGracePeriodMs?: number;
  readonly markGone: boolean;
}

/** A framework at one instant, as GET_FRAMEWORKS and the framework events show it. */
export interface FrameworkSnapshot {
  readonly info: FrameworkInfo & { readonly id: string };
  readonly state: FrameworkState;
  /** Learnt from its agents after a master failover, not re-subscribed since. */
  readonly recovered: boolean;
  readonly registeredTimeMs: number;
  readonly reregisteredTimeMs: number | undefined;
  readonly unregisteredTimeMs: number | undefined;
  readonly offers: readonly Offer[];
  /** What its tasks and executors use, tagged with the allocation role. */
  readonly allocated: Resources;
  readonly offered: Resources;
  readonly constraints: OfferConstraints | undefined;
}

/** An agent at one instant, as GET_AGENTS and AGENT_ADDED show it. */
export interface AgentSnapshot {
  readonly id: string;
  readonly info: AgentDescription;
  readonly pid: string;
  /** Registered and connected, and not deactivated by the operator. */
  readonly active: boolean;
  readonly deactivated: boolean;
  readonly registeredTimeMs: number;
  readonly reregisteredTimeMs: number | undefined;
  readonly allocated: Resources;
  readonly offered: Resources;
  readonly drain: DrainInfo | undefined;
  readonly drainStartTimeMs: number | undefined;
}

export type OperatorEvent =
  /** The first record: the wire layer renders the whole state from the read model at delivery. */
  | { readonly type: 'SUBSCRIBED'; readonly heartbeatIntervalSeconds: number }
  | { readonly type: 'TASK_ADDED'; readonly task: Task; readonly user: string }
  /** `spec` and `user` (the framework's) are not sent: they let the wire layer ask the view ACLs about the task. */
  | {
      readonly type: 'TASK_UPDATED';
      readonly frameworkId: string;
      readonly status: TaskStatus;
      readonly state: TaskState;
      readonly spec: TaskSpec;
      readonly user: string;
    }
  | { readonly type: 'AGENT_ADDED'; readonly agent: AgentSnapshot }
  | { readonly type: 'AGENT_REMOVED'; readonly agentId: string }
  | { readonly type: 'FRAMEWORK_ADDED' | 'FRAMEWORK_UPDATED'; readonly framework: FrameworkSnapshot }
  | { readonly type: 'FRAMEWORK_REMOVED'; readonly info: FrameworkInfo & { readonly id: string } }
  | { readonly type: 'HEARTBEAT' };
