/**
 * Messages between nodes: master <-> agent <-> executor. Plain data,
 * addressed by node id and carried by the simulated network, so a fault can
 * inspect, drop, delay, duplicate or reorder any of them, and a crashed
 * node simply stops receiving. No message holds a live object or a
 * closure; what a receiver needs travels in it.
 *
 *   master -> agent    RUN_TASK, RUN_TASK_GROUP, KILL_TASK, SHUTDOWN_EXECUTOR,
 *                      SHUTDOWN_FRAMEWORK, SHUTDOWN_AGENT, STATUS_UPDATE_ACK, FRAMEWORK_TO_EXECUTOR,
 *                      AGENT_REGISTERED, AGENT_REREGISTERED, PING,
 *                      APPLY_OPERATION, OPERATION_STATUS_ACK
 *   agent -> master    REGISTER_AGENT, REREGISTER_AGENT, STATUS_UPDATE,
 *                      EXITED_EXECUTOR, EXECUTOR_TO_FRAMEWORK, PONG, UPDATE_OPERATION_STATUS
 *   agent -> executor  LAUNCH, LAUNCH_GROUP, KILL, SHUTDOWN, ACKNOWLEDGED,
 *                      FRAMEWORK_MESSAGE, AGENT_RECONNECTED
 *   executor -> agent  EXECUTOR_UPDATE, EXECUTOR_SUBSCRIBE
 *   network -> node    EXITED (the peer's connection broke: it crashed)
 */
import type { Resources } from './resources.js';
import type { Conversion } from './conversions.js';
import type {
  Attribute,
  ExecutorSpec,
  FrameworkInfo,
  OperationStatus,
  TaskSpec,
  TaskState,
  TaskStatus,
} from './types.js';

/** The master's node id; agents use their agent id, executors `executor:<containerId>`. */
/**
 * An agent retries an unacknowledged status or operation update from 10 s,
 * doubling to 10 min, as upstream's status update manager does; the master's
 * misuse report reads the first interval too.
 */
export const RETRY_MIN_MS = 10_000;
export const RETRY_MAX_MS = 600_000;

export const MASTER_NODE = 'master';

export type FrameworkRef = FrameworkInfo & { readonly id: string };

/** What an agent tells the master about itself when it (re-)registers. */
export interface AgentDescription {
  readonly agentId: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
}

/** A task as a re-registering agent reports it. */
export interface ReportedTask {
  readonly frameworkId: string;
  readonly taskId: string;
  readonly executorId: string;
  readonly state: TaskState;
  /** The task as it was launched, for a master that must learn it anew (after a failover); absent when only an update is left of it. */
  readonly spec?: TaskSpec;
  /** Run by a command executor (the master knows such a task without an executor). */
  readonly command?: boolean;
}

/** An executor as a re-registering agent reports it; `resources` as launched, when the agent still has them. */
export interface ReportedExecutor {
  readonly frameworkId: string;
  readonly executorId: string;
  readonly resources?: Resources;
}

export type MasterToAgent =
  | { readonly type: 'RUN_TASK'; readonly launchId: string; readonly framework: FrameworkRef; readonly task: TaskSpec }
  | {
      readonly type: 'RUN_TASK_GROUP';
      readonly launchId: string;
      readonly framework: FrameworkRef;
      readonly executor: ExecutorSpec;
      readonly tasks: readonly TaskSpec[];
    }
  /** `gracePeriodMs`: the KILL call's kill policy, which overrides the task's. */
  | {
      readonly type: 'KILL_TASK';
      readonly frameworkId: string;
      readonly taskId: string;
      readonly gracePeriodMs?: number;
    }
  | { readonly type: 'SHUTDOWN_EXECUTOR'; readonly frameworkId: string; readonly executorId: string }
  | { readonly type: 'SHUTDOWN_FRAMEWORK'; readonly frameworkId: string }
  /** The operator marked the agent gone: it shuts down every framework's executors. */
  | { readonly type: 'SHUTDOWN_AGENT'; readonly message: string }
  | { readonly type: 'STATUS_UPDATE_ACK'; readonly frameworkId: string; readonly taskId: string; readonly uuid: string }
  | {
      readonly type: 'FRAMEWORK_TO_EXECUTOR';
      readonly frameworkId: string;
      readonly executorId: string;
      readonly data: Uint8Array;
    }
  | { readonly type: 'AGENT_REGISTERED'; readonly agentId: string }
  | { readonly type: 'AGENT_REREGISTERED'; readonly agentId: string }
  | { readonly type: 'PING' }
  | ApplyOperation
  | { readonly type: 'OPERATION_STATUS_ACK'; readonly operationUuid: string; readonly statusUuid: string };

/**
 * A speculative operation (RESERVE, UNRESERVE, CREATE, DESTROY) the master
 * has applied to its books, for the agent to apply to its checkpointed
 * resources. `version` counts the master's changes to the agent's
 * resources; `total` is the master's view of them after this one, the
 * truth an agent that missed an earlier operation adopts.
 */
export interface ApplyOperation {
  readonly type: 'APPLY_OPERATION';
  readonly frameworkId?: string;
  readonly operationUuid: string;
  readonly operationId?: string;
  readonly conversions: readonly Conversion[];
  readonly version: number;
  readonly total: Resources;
}

export type AgentToMaster =
  | { readonly type: 'REGISTER_AGENT'; readonly agent: AgentDescription }
  | {
      readonly type: 'REREGISTER_AGENT';
      readonly agent: AgentDescription;
      readonly tasks: readonly ReportedTask[];
      readonly executors: readonly ReportedExecutor[];
      /** The frameworks it runs something of (upstream's ReregisterSlaveMessage carries them for a new master). */
      readonly frameworks?: readonly FrameworkRef[];
      /** The last operation version the agent's checkpointed resources include. */
      readonly resourceVersion: number;
    }
  | {
      readonly type: 'UPDATE_OPERATION_STATUS';
      readonly agentId: string;
      readonly frameworkId?: string;
      readonly operationUuid: string;
      readonly status: OperationStatus;
    }
  | {
      readonly type: 'STATUS_UPDATE';
      readonly agentId: string;
      readonly frameworkId: string;
      readonly status: TaskStatus;
      readonly latestState: TaskState;
    }
  | {
      readonly type: 'EXITED_EXECUTOR';
      readonly agentId: string;
      readonly frameworkId: string;
      readonly executorId: string;
      readonly waitStatus: number;
    }
  /** An executor's MESSAGE call, on its way to the framework's scheduler. */
  | {
      readonly type: 'EXECUTOR_TO_FRAMEWORK';
      readonly agentId: string;
      readonly frameworkId: string;
      readonly executorId: string;
      readonly data: Uint8Array;
    }
  | { readonly type: 'PONG' };

export type AgentToExecutor =
  | { readonly type: 'LAUNCH'; readonly task: TaskSpec }
  | { readonly type: 'LAUNCH_GROUP'; readonly tasks: readonly TaskSpec[] }
  | { readonly type: 'KILL'; readonly taskId: string; readonly gracePeriodMs?: number }
  | { readonly type: 'SHUTDOWN' }
  | { readonly type: 'ACKNOWLEDGED'; readonly taskId: string; readonly uuid: string }
  | { readonly type: 'FRAMEWORK_MESSAGE'; readonly data: Uint8Array }
  /** The agent came back after a restart; the executor subscribes again. */
  | { readonly type: 'AGENT_RECONNECTED' };

export type ExecutorToAgent =
  | {
      readonly type: 'EXECUTOR_UPDATE';
      readonly frameworkId: string;
      readonly executorId: string;
      readonly status: TaskStatus;
    }
  | {
      readonly type: 'EXECUTOR_SUBSCRIBE';
      readonly frameworkId: string;
      readonly executorId: string;
      /** Updates sent and not yet acknowledged, oldest first. */
      readonly unacknowledged: readonly TaskStatus[];
    };

/** The network's own notice that the connection to `node` broke. */
export interface Exited {
  readonly type: 'EXITED';
  readonly node: string;
}

export type Message = MasterToAgent | AgentToMaster | AgentToExecutor | ExecutorToAgent | Exited;
export type MessageType = Message['type'];

/** A node of the simulation: it receives messages, one at a time, from the network. */
export interface SimNode {
  readonly nodeId: string;
  receive(from: string, message: Message): void;
}

/** What the trace keeps of a message: its type and the ids it concerns. */
export function messageSummary(message: Message): Record<string, unknown> {
  switch (message.type) {
    case 'RUN_TASK':
      return { frameworkId: message.framework.id, taskId: message.task.taskId };
    case 'RUN_TASK_GROUP':
      return { frameworkId: message.framework.id, tasks: message.tasks.map((t) => t.taskId) };
    case 'STATUS_UPDATE':
      return { taskId: message.status.taskId, state: message.status.state, uuid: message.status.uuid };
    case 'EXECUTOR_UPDATE':
      return { taskId: message.status.taskId, state: message.status.state, uuid: message.status.uuid };
    case 'REGISTER_AGENT':
    case 'REREGISTER_AGENT':
      return { agentId: message.agent.agentId };
    case 'FRAMEWORK_TO_EXECUTOR':
    case 'FRAMEWORK_MESSAGE':
      return { bytes: message.data.length };
    case 'EXECUTOR_TO_FRAMEWORK':
      return { executorId: message.executorId, bytes: message.data.length };
    case 'LAUNCH':
      return { taskId: message.task.taskId };
    case 'LAUNCH_GROUP':
      return { tasks: message.tasks.map((t) => t.taskId) };
    case 'EXECUTOR_SUBSCRIBE':
      return { executorId: message.executorId, unacknowledged: message.unacknowledged.length };
    case 'APPLY_OPERATION':
      return { operationUuid: message.operationUuid, operationId: message.operationId, version: message.version };
    case 'UPDATE_OPERATION_STATUS':
      return { operationUuid: message.operationUuid, state: message.status.state, uuid: message.status.uuid };
    default: {
      const { type: _type, ...rest } = message;
      return rest;
    }
  }
}
