/**
 * The executor HTTP API as the core sees it: the calls an executor process
 * makes on its agent's `/api/v1/executor`, the events the agent puts on its
 * stream, and what the agent asks of the host to make an executor exist
 * (a container to launch or destroy). `src/wire/` turns these into
 * `mesos.v1.executor.Call` and `Event`; the runtime runs the processes.
 */
import type { FrameworkRef } from './messages.js';
import type { Resources } from './resources.js';
import type { Attribute, ExecutorSpec, TaskSpec, TaskStatus } from './types.js';

/** How the agent makes a custom executor exist (`--custom-executors`). */
export type CustomExecutors = 'simulate' | 'spawn' | 'await';
export const CUSTOM_EXECUTOR_MODES: readonly CustomExecutors[] = ['simulate', 'spawn', 'await'];

/** What an agent does with the executors it finds when it starts again (`--recover`). */
export type RecoverMode = 'reconnect' | 'cleanup';

/** An executor's status update as its process sends it (UPDATE). */
export type ExecutorStatus = Omit<TaskStatus, 'agentId' | 'uuid' | 'timestampMs'> & {
  readonly uuid: string;
  readonly timestampMs?: number;
};

export type ExecutorCall =
  | {
      readonly type: 'SUBSCRIBE';
      /** Tasks the executor was given and has sent no update for. */
      readonly unacknowledgedTaskIds: readonly string[];
      /** Updates it sent and has not seen acknowledged, oldest first. */
      readonly unacknowledgedUpdates: readonly ExecutorStatus[];
    }
  | { readonly type: 'UPDATE'; readonly status: ExecutorStatus }
  | { readonly type: 'MESSAGE'; readonly data: Uint8Array };

export interface ExecutorCallEnvelope {
  readonly frameworkId: string;
  readonly executorId: string;
  readonly call: ExecutorCall;
}

/** The agent as SUBSCRIBED describes it. */
export interface ExecutorAgentInfo {
  readonly agentId: string;
  readonly hostname: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
}

export type ExecutorEvent =
  | {
      readonly type: 'SUBSCRIBED';
      readonly executor: ExecutorSpec;
      readonly framework: FrameworkRef;
      readonly agent: ExecutorAgentInfo;
      readonly containerId: string;
    }
  | { readonly type: 'LAUNCH'; readonly framework: FrameworkRef; readonly task: TaskSpec }
  | { readonly type: 'LAUNCH_GROUP'; readonly tasks: readonly TaskSpec[] }
  | { readonly type: 'KILL'; readonly taskId: string; readonly gracePeriodMs?: number }
  | { readonly type: 'ACKNOWLEDGED'; readonly taskId: string; readonly uuid: string }
  | { readonly type: 'MESSAGE'; readonly data: Uint8Array }
  | { readonly type: 'SHUTDOWN' }
  | { readonly type: 'ERROR'; readonly message: string }
  | { readonly type: 'HEARTBEAT' };

/** Everything the host needs to start an executor's process in its container. */
export interface ContainerLaunch {
  readonly agentId: string;
  readonly containerId: string;
  readonly framework: FrameworkRef;
  readonly executor: ExecutorSpec;
  /** Its sandbox: `<work_dir>/slaves/<agent>/frameworks/<f>/executors/<e>/runs/<container>`. */
  readonly directory: string;
  /** `ip:port` of the agent's executor endpoint. */
  readonly agentEndpoint: string;
  readonly checkpoint: boolean;
  readonly shutdownGracePeriodMs: number;
  /** With checkpointing: how long the executor keeps trying to subscribe again. */
  readonly recoveryTimeoutMs: number;
  /** With checkpointing: the longest wait between two tries. */
  readonly subscriptionBackoffMaxMs: number;
}

/**
 * With executor authentication on, the check of the caller's credentials
 * against the executor the call names, made once the agent has found it:
 * undefined to allow, else the refusal's text (a 403).
 */
export type ExecutorAuthorizer = ((executor: {
  readonly frameworkId: string;
  readonly executorId: string;
  readonly containerId: string;
}) => string | undefined) & {
  /** What the check decides from (a token's claims): an input record keeps these, and a replay checks against them again. */
  readonly claims?: Readonly<Record<string, unknown>>;
};

/** What WAIT_CONTAINER answers about an ended container. */
export interface ContainerTermination {
  /** A wait(2) status: the exit code in the high byte, or the signal number. */
  readonly exitStatus: number;
  readonly message?: string;
}

/** A piece of a container's standard output or error. */
export interface ProcessOutput {
  readonly stream: 'STDOUT' | 'STDERR';
  readonly data: string;
}
