/**
 * Faults as ordinary inputs: each is a plain record naming what breaks and
 * how, so the control API, scenario timelines and the fault-schedule search
 * speak one vocabulary, and a trace can carry a fault as data. `Cluster.inject`
 * applies one; `describeFault` is its one-line form for reports.
 */
import type { RecoverMode } from '../model/executor-api.js';
import type { NetworkRule } from '../network/network.js';
import type { Resources } from '../model/resources.js';
import type { Attribute } from '../model/types.js';

export type Fault =
  /** The agent process dies; its connection to the master breaks. */
  | { readonly type: 'crash_agent'; readonly agentId: string }
  /** A crashed agent starts again from its checkpoint. */
  | { readonly type: 'restart_agent'; readonly agentId: string; readonly recover: RecoverMode }
  /**
   * A new agent joins with these resources and attributes, as the cluster's
   * first agent was started otherwise (faults/agents.ts); a host name and a
   * port, when given, are its own (the library gives the port its listener got).
   */
  | {
      readonly type: 'add_agent';
      readonly resources: Resources;
      readonly attributes: readonly Attribute[];
      readonly hostname?: string;
      readonly port?: number;
    }
  /** The agent is decommissioned for good: the master marks it gone (faults/agents.ts). */
  | { readonly type: 'remove_agent'; readonly agentId: string }
  /** The agent's machine is scheduled for maintenance: DRAINING from now, unavailable from `startInMs` on for `durationMs` (faults/agents.ts). */
  | {
      readonly type: 'schedule_maintenance';
      readonly agentId: string;
      readonly startInMs: number;
      readonly durationMs: number;
    }
  /** Messages between two nodes are lost both ways until healed. */
  | { readonly type: 'partition'; readonly nodes: readonly [string, string] }
  | { readonly type: 'heal'; readonly nodes: readonly [string, string] }
  /** Messages matching the rule are dropped, delayed or repeated. */
  | { readonly type: 'network_rule'; readonly rule: NetworkRule }
  | { readonly type: 'remove_network_rule'; readonly ruleId: number }
  | SubscriberFault
  | ProcessFault
  /** The cluster's wall clock steps `ms` forward (an NTP step); see faults/actions.ts. */
  | { readonly type: 'clock_jump'; readonly ms: number }
  /** A master process dies: the leader unless `master` (an index) names another. */
  | { readonly type: 'crash_master'; readonly master?: number }
  /** A master that is down starts again, as a standby (`master` required: the leader is never down). */
  | { readonly type: 'restart_master'; readonly master: number }
  /** The leader (or `master`) dies and starts again at once: a new one is elected after the election delay. */
  | { readonly type: 'master_failover'; readonly master?: number };

/** Faults of a framework's subscription stream. */
export type SubscriberFault =
  /** The stream breaks as if its TCP connection died: the master takes the framework for disconnected. */
  | { readonly type: 'drop_framework_connection'; readonly frameworkId: string }
  /** The stream stays open, but nothing (heartbeats included) reaches the framework for `durationMs`, or until resumed. */
  | { readonly type: 'stall_heartbeats'; readonly frameworkId: string; readonly durationMs?: number }
  | { readonly type: 'resume_heartbeats'; readonly frameworkId: string };

/**
 * Faults of executors and tasks. A task is named by its id, with its
 * framework's where two frameworks use the same task id.
 */
export type ProcessFault =
  /** The executor's process dies (SIGKILL): named by executor id (on an agent, of a framework), or by a task it runs. */
  | ({ readonly type: 'crash_executor' } & ExecutorTarget)
  /** The task's process exits now with `exitCode` (non-zero). */
  | ({ readonly type: 'fail_task'; readonly exitCode: number; readonly message?: string } & TaskTarget)
  /** The task stops progressing: it never ends by itself, and only SIGKILL after a kill's grace period ends it. */
  | ({ readonly type: 'hang_task' } & TaskTarget)
  /** The task's memory use rises by `mib` MiB, for `durationMs` or for good. */
  | ({ readonly type: 'memory_spike'; readonly mib: number; readonly durationMs?: number } & TaskTarget)
  /** UPDATE_CONTAINER_MEMORY_LIMIT of a container (or the container of a task) on an agent. */
  | {
      readonly type: 'set_memory_limit';
      readonly agentId: string;
      readonly containerId?: string;
      readonly taskId?: string;
      readonly mib: number;
    };

export interface TaskTarget {
  readonly taskId: string;
  readonly frameworkId?: string;
}

export type ExecutorTarget =
  | {
      readonly executorId: string;
      readonly agentId?: string;
      readonly frameworkId?: string;
      readonly taskId?: undefined;
    }
  | (TaskTarget & { readonly executorId?: undefined; readonly agentId?: undefined });

export type FaultType = Fault['type'];

/** What a fault gives back: the id of a rule it added, or nothing. */
export interface FaultResult {
  readonly ruleId?: number;
  /** The index of the master a master fault applied to. */
  readonly master?: number;
  /** The id of the agent `add_agent` added. */
  readonly agentId?: string;
}

export function describeFault(fault: Fault): string {
  switch (fault.type) {
    case 'crash_agent':
      return `crash agent ${fault.agentId}`;
    case 'restart_agent':
      return `restart agent ${fault.agentId} (${fault.recover})`;
    case 'add_agent':
      return `add an agent of ${fault.resources.map((r) => r.name).join(', ')}`;
    case 'remove_agent':
      return `remove agent ${fault.agentId}`;
    case 'schedule_maintenance':
      return `schedule maintenance of the machine of agent ${fault.agentId} in ${fault.startInMs} ms for ${fault.durationMs} ms`;
    case 'partition':
    case 'heal':
      return `${fault.type} ${fault.nodes[0]} from ${fault.nodes[1]}`;
    case 'network_rule':
      return `network rule: ${fault.rule.action} ${fault.rule.from ?? '*'} -> ${fault.rule.to ?? '*'}`;
    case 'remove_network_rule':
      return `remove network rule ${fault.ruleId}`;
    case 'drop_framework_connection':
    case 'stall_heartbeats':
    case 'resume_heartbeats':
      return `${fault.type.replaceAll('_', ' ')} of framework ${fault.frameworkId}${'durationMs' in fault && fault.durationMs !== undefined ? ` for ${fault.durationMs} ms` : ''}`;
    case 'crash_executor':
      return fault.executorId === undefined
        ? `crash the executor of task ${fault.taskId}`
        : `crash executor ${fault.executorId}`;
    case 'fail_task':
      return `fail task ${fault.taskId} with exit code ${fault.exitCode}`;
    case 'hang_task':
      return `hang task ${fault.taskId}`;
    case 'memory_spike':
      return `memory spike of ${fault.mib} MiB in task ${fault.taskId}`;
    case 'set_memory_limit':
      return `memory limit of ${fault.containerId ?? `the container of task ${fault.taskId}`} set to ${fault.mib} MiB`;
    case 'clock_jump':
      return `wall clock jumps ${fault.ms} ms forward`;
    case 'crash_master':
    case 'master_failover':
      return `${fault.type === 'crash_master' ? 'crash' : 'fail over'} master ${fault.master ?? '(the leader)'}`;
    case 'restart_master':
      return `restart master ${fault.master}`;
  }
}
