/**
 * The master's records as data: what it keeps of a framework's offers,
 * tasks and executors and of an operation. The master's classes hold and
 * change them (master/framework.ts, master/operation-store.ts); the read
 * model and the operator events show them.
 */
import type { TimerId } from '../kernel/event-loop.js';
import type { Resources } from './resources.js';
import type { Conversion } from './conversions.js';
import type { OperationStatus, ResourceOperation, TaskSpec, TaskState, TaskStatus } from './types.js';

/** A framework's registration state (the machine is master/framework.ts's). */
export type FrameworkState = 'subscribed' | 'disconnected' | 'removed';

export interface Offer {
  readonly id: string;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly role: string;
  /** Tagged with the allocation role. */
  readonly resources: Resources;
  timer?: TimerId;
}

export interface Task {
  readonly spec: TaskSpec;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly executorId?: string;
  readonly role: string;
  /** Tagged with the allocation role. */
  readonly resources: Resources;
  state: TaskState;
  /** Replaced as it grows (an exact-size list: most tasks have two or three). */
  statuses: TaskStatus[];
  statusUpdateState?: TaskState;
  statusUpdateUuid?: string;
  /** Launch accepted but not yet delivered to the agent. */
  pending: boolean;
  resourcesRecovered: boolean;
}

export interface ExecutorRecord {
  readonly executorId: string;
  readonly agentId: string;
  readonly resources: Resources;
  readonly raw?: unknown;
}

export interface OperationRecord {
  readonly uuid: string;
  readonly frameworkId?: string;
  readonly agentId: string;
  /** The operation as accepted (its resources tagged with the offer's role) or as the operator asked it. */
  readonly info: ResourceOperation;
  /** What it did to the agent's resources, without allocation roles. */
  readonly conversions: readonly Conversion[];
  /** The agent's resource version this operation produced, and the total after it. */
  readonly version: number;
  readonly total: Resources;
  latest: OperationStatus;
  readonly statuses: OperationStatus[];
}
