/**
 * A fault as the control API and scenario files write it (JSON, snake_case)
 * read into the core's `Fault`, or the reason it is not one. Nodes are
 * named by id: `master`, or an agent id.
 *
 *   {"type": "crash_agent", "agent_id"}
 *   {"type": "add_agent", "resources", "attributes"?, "hostname"?}   upstream's --resources and --attributes forms
 *   {"type": "remove_agent", "agent_id"}                 decommissioned for good: the master marks it gone
 *   {"type": "schedule_maintenance", "agent_id", "start_in_ms"? (default 0), "duration_ms"}
 *                                                        the agent's machine is DRAINING, unavailable from then on
 *   {"type": "restart_agent", "agent_id", "recover": "reconnect" | "cleanup"}
 *   {"type": "partition" | "heal", "agent_id"}          the agent's link to the master
 *   {"type": "partition" | "heal", "nodes": [a, b]}     any two nodes
 *   {"type": "network_rule", "action": "drop" | "delay" | "duplicate", "from", "to",
 *    "messages": [TYPE...], "delay_ms", "jitter_ms", "probability"}
 *   {"type": "remove_network_rule", "rule_id"}
 *   {"type": "drop_framework_connection", "framework_id"}
 *   {"type": "stall_heartbeats", "framework_id", "duration_ms"?}   until "resume_heartbeats" without a duration
 *   {"type": "resume_heartbeats", "framework_id"}
 *   {"type": "crash_executor", "executor_id", "agent_id"?, "framework_id"?}  or  {"type": "crash_executor", "task_id", "framework_id"?}
 *   {"type": "fail_task", "task_id", "framework_id"?, "exit_code"? (1 to 255, default 1), "message"?}
 *   {"type": "hang_task", "task_id", "framework_id"?}
 *   {"type": "memory_spike", "task_id", "framework_id"?, "mib", "duration_ms"?}
 *   {"type": "set_memory_limit", "agent_id", "container_id" | "task_id", "mib"}
 *   {"type": "clock_jump", "ms"}                         the wall clock steps forward, at most a day
 *   {"type": "crash_master", "master"?}     the leader, or the master of that index (0, 1, ...)
 *   {"type": "restart_master", "master"}    a master that is down starts again, as a standby
 *   {"type": "master_failover", "master"?}  the leader (or that master) dies and starts again at once
 *
 * A task is named by its id, with its framework's where two frameworks use
 * the same id.
 */
import type { Fault } from '../../core/faults/vocabulary.js';
import { MASTER_NODE, type MessageType } from '../../core/model/messages.js';
import { parseResources } from '../../core/model/resources.js';
import { parseAttributes } from '../convert-common.js';

/** The largest span of time a fault or a clock move may name: a day. */
export const MAX_SPAN_MS = 86_400_000;

export const FAULT_TYPES = [
  'crash_agent',
  'restart_agent',
  'add_agent',
  'remove_agent',
  'schedule_maintenance',
  'partition',
  'heal',
  'network_rule',
  'remove_network_rule',
  'drop_framework_connection',
  'stall_heartbeats',
  'resume_heartbeats',
  'crash_executor',
  'fail_task',
  'hang_task',
  'memory_spike',
  'set_memory_limit',
  'clock_jump',
  'crash_master',
  'restart_master',
  'master_failover',
] as const;
const RULE_ACTIONS = ['drop', 'delay', 'duplicate'] as const;

/** The fields each fault type reads, besides `type` (the table above): any other is a slip of the writer's. */
export const FAULT_FIELDS: Readonly<Record<(typeof FAULT_TYPES)[number], readonly string[]>> = {
  crash_agent: ['agent_id'],
  restart_agent: ['agent_id', 'recover'],
  add_agent: ['resources', 'attributes', 'hostname'],
  remove_agent: ['agent_id'],
  schedule_maintenance: ['agent_id', 'start_in_ms', 'duration_ms'],
  partition: ['agent_id', 'nodes'],
  heal: ['agent_id', 'nodes'],
  network_rule: ['action', 'from', 'to', 'messages', 'delay_ms', 'jitter_ms', 'probability'],
  remove_network_rule: ['rule_id'],
  drop_framework_connection: ['framework_id'],
  stall_heartbeats: ['framework_id', 'duration_ms'],
  resume_heartbeats: ['framework_id'],
  crash_executor: ['executor_id', 'agent_id', 'framework_id', 'task_id'],
  fail_task: ['task_id', 'framework_id', 'exit_code', 'message'],
  hang_task: ['task_id', 'framework_id'],
  memory_spike: ['task_id', 'framework_id', 'mib', 'duration_ms'],
  set_memory_limit: ['agent_id', 'container_id', 'task_id', 'mib'],
  clock_jump: ['ms'],
  crash_master: ['master'],
  restart_master: ['master'],
  master_failover: ['master'],
};

type Body = Readonly<Record<string, unknown>>;
type Parsed = Fault | string;

export function parseFault(body: Body): Parsed {
  const type = body['type'];
  if (typeof type !== 'string' || !(FAULT_TYPES as readonly string[]).includes(type)) {
    return `Expecting 'type' to be one of ${FAULT_TYPES.join(', ')}`;
  }
  switch (type as (typeof FAULT_TYPES)[number]) {
    case 'crash_agent':
      return withAgent(body, (agentId) => ({ type: 'crash_agent', agentId }));
    case 'restart_agent':
      return restartAgent(body);
    case 'add_agent':
      return addAgent(body);
    case 'remove_agent':
      return withAgent(body, (agentId) => ({ type: 'remove_agent', agentId }));
    case 'schedule_maintenance':
      return scheduleMaintenance(body);
    case 'partition':
    case 'heal':
      return link(body, type as 'partition' | 'heal');
    case 'network_rule':
      return networkRule(body);
    case 'remove_network_rule': {
      const ruleId = body['rule_id'];
      if (typeof ruleId !== 'number' || !Number.isInteger(ruleId)) return "Expecting 'rule_id' to be present";
      return { type: 'remove_network_rule', ruleId };
    }
    case 'drop_framework_connection':
    case 'stall_heartbeats':
    case 'resume_heartbeats':
      return subscriberFault(body, type as 'drop_framework_connection' | 'stall_heartbeats' | 'resume_heartbeats');
    case 'crash_executor':
      return crashExecutor(body);
    case 'fail_task':
    case 'hang_task':
    case 'memory_spike':
      return taskFault(body, type as 'fail_task' | 'hang_task' | 'memory_spike');
    case 'set_memory_limit':
      return memoryLimit(body);
    case 'clock_jump': {
      const ms = body['ms'];
      return positiveSpanError('ms', ms, true) ?? { type: 'clock_jump', ms: ms as number };
    }
    case 'crash_master':
    case 'restart_master':
    case 'master_failover':
      return masterFault(body, type as 'crash_master' | 'restart_master' | 'master_failover');
  }
}

/** A master fault: `master` is the index of a master (required to restart one, which is never the leader). */
function masterFault(body: Body, type: 'crash_master' | 'restart_master' | 'master_failover'): Parsed {
  const master = body['master'];
  if (master === undefined && type !== 'restart_master') return { type };
  if (typeof master !== 'number' || !Number.isInteger(master) || master < 0)
    return "Expecting 'master' to be the index of a master (0, 1, ...)";
  return type === 'restart_master' ? { type, master } : { type, master };
}

function withAgent(body: Body, build: (agentId: string) => Parsed): Parsed {
  const agentId = body['agent_id'];
  if (typeof agentId !== 'string' || agentId === '') return "Expecting 'agent_id' to be present";
  return build(agentId);
}

/** A maintenance window of the agent's machine: from `start_in_ms` (0 or more) on, for `duration_ms`. */
function scheduleMaintenance(body: Body): Parsed {
  const startInMs = body['start_in_ms'] ?? 0;
  if (!isSpan(startInMs))
    return `Expecting 'start_in_ms' to be a whole number of milliseconds from 0 to ${MAX_SPAN_MS}`;
  const durationMs = body['duration_ms'];
  const error = positiveSpanError('duration_ms', durationMs, true);
  if (error !== undefined) return error;
  return withAgent(body, (agentId) => ({
    type: 'schedule_maintenance',
    agentId,
    startInMs: startInMs as number,
    durationMs: durationMs as number,
  }));
}

function restartAgent(body: Body): Parsed {
  const recover = body['recover'] ?? 'reconnect';
  if (recover !== 'reconnect' && recover !== 'cleanup') return "Expecting 'recover' to be reconnect or cleanup";
  return withAgent(body, (agentId) => ({ type: 'restart_agent', agentId, recover }));
}

/** A new agent: its resources (at least one) and attributes, in upstream's agent flag forms. */
function addAgent(body: Body): Parsed {
  const { resources: resourcesText, attributes: attributesText = '' } = body;
  const resources = typeof resourcesText === 'string' ? parseResources(resourcesText) : undefined;
  if (resources === undefined || typeof resources === 'string' || resources.length === 0)
    return "Expecting 'resources' to be resources in the agent flag form, e.g. cpus:4;mem:8192";
  const attributes = typeof attributesText === 'string' ? parseAttributes(attributesText) : undefined;
  if (attributes === undefined || typeof attributes === 'string')
    return "Expecting 'attributes' to be attributes in the agent flag form, e.g. rack:r1;zone:a";
  const { hostname } = body;
  if (hostname !== undefined && (typeof hostname !== 'string' || hostname === ''))
    return "Expecting 'hostname' to be a non-empty host name";
  return { type: 'add_agent', resources, attributes, ...(hostname === undefined ? {} : { hostname }) };
}

function link(body: Body, type: 'partition' | 'heal'): Parsed {
  const nodes = body['nodes'];
  if (nodes === undefined) {
    return withAgent(body, (agentId) =>
      agentId === MASTER_NODE
        ? "Expecting 'agent_id' to be an agent's id: the link is the agent's to the master"
        : { type, nodes: [agentId, MASTER_NODE] },
    );
  }
  if (
    !Array.isArray(nodes) ||
    nodes.length !== 2 ||
    !nodes.every((n) => typeof n === 'string' && n !== '') ||
    nodes[0] === nodes[1]
  ) {
    return "Expecting 'nodes' to be two different node ids";
  }
  return { type, nodes: [nodes[0] as string, nodes[1] as string] };
}

/** A network rule: messages matching it (sender, receiver, types) are dropped, delayed or repeated, with a probability. */
function networkRule(body: Body): Parsed {
  const { action, from, to, messages, delay_ms: delayMs, jitter_ms: jitterMs, probability } = body;
  const checks: readonly (readonly [boolean, string])[] = [
    [
      typeof action === 'string' && (RULE_ACTIONS as readonly string[]).includes(action),
      `Expecting 'action' to be one of ${RULE_ACTIONS.join(', ')}`,
    ],
    [
      [from, to].every((v) => v === undefined || typeof v === 'string'),
      "Expecting 'from' and 'to' to be node ids ('master', or an agent id)",
    ],
    [
      messages === undefined ||
        (Array.isArray(messages) && messages.every((m) => typeof m === 'string' && /^[A-Z_]+$/.test(m))),
      "Expecting 'messages' to be message types (RUN_TASK, STATUS_UPDATE, ...)",
    ],
    [
      isSpan(delayMs) && isSpan(jitterMs),
      `Expecting 'delay_ms' and 'jitter_ms' to be whole numbers of milliseconds from 0 to ${MAX_SPAN_MS}`,
    ],
    [
      probability === undefined || (typeof probability === 'number' && probability >= 0 && probability <= 1),
      "Expecting 'probability' to be a number from 0 to 1",
    ],
  ];
  const invalid = checks.find(([valid]) => !valid)?.[1];
  if (invalid !== undefined) return invalid;
  const rule = {
    action: action as (typeof RULE_ACTIONS)[number],
    ...(from === undefined ? {} : { from: from as string }),
    ...(to === undefined ? {} : { to: to as string }),
    ...(messages === undefined ? {} : { types: messages as MessageType[] }),
    ...(delayMs === undefined ? {} : { delayMs: delayMs as number }),
    ...(jitterMs === undefined ? {} : { jitterMs: jitterMs as number }),
    ...(probability === undefined ? {} : { probability: probability as number }),
  };
  return { type: 'network_rule', rule };
}

function isSpan(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_SPAN_MS);
}

/** A string id, present (`required`) or absent; undefined when it is neither. */
function idOf(body: Body, key: string, required: boolean): string | null | undefined {
  const value = body[key];
  if (value === undefined) return required ? undefined : null;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function subscriberFault(
  body: Body,
  type: 'drop_framework_connection' | 'stall_heartbeats' | 'resume_heartbeats',
): Parsed {
  const frameworkId = idOf(body, 'framework_id', true);
  if (typeof frameworkId !== 'string') return "Expecting 'framework_id' to be present";
  if (type !== 'stall_heartbeats') return { type, frameworkId };
  const durationMs = body['duration_ms'];
  const invalid = positiveSpanError('duration_ms', durationMs);
  if (invalid !== undefined) return invalid;
  return { type, frameworkId, ...(durationMs === undefined ? {} : { durationMs: durationMs as number }) };
}

/** `task_id` and, if given, `framework_id`. */
function taskTarget(body: Body): { taskId: string; frameworkId?: string } | string {
  const [taskId, frameworkId] = [idOf(body, 'task_id', true), idOf(body, 'framework_id', false)];
  if (typeof taskId !== 'string') return "Expecting 'task_id' to be present";
  if (frameworkId === undefined) return "Expecting 'framework_id' to be a framework id";
  return { taskId, ...(frameworkId === null ? {} : { frameworkId }) };
}

function crashExecutor(body: Body): Parsed {
  if (body['executor_id'] === undefined) {
    if (body['agent_id'] !== undefined) return "Expecting 'executor_id' with 'agent_id' (or 'task_id' alone)";
    const target = taskTarget(body);
    return typeof target === 'string'
      ? "Expecting 'executor_id' or 'task_id' to be present"
      : { type: 'crash_executor', ...target };
  }
  const [executorId, agentId, frameworkId] = [
    idOf(body, 'executor_id', true),
    idOf(body, 'agent_id', false),
    idOf(body, 'framework_id', false),
  ];
  if (typeof executorId !== 'string') return "Expecting 'executor_id' to be an executor id";
  if (body['task_id'] !== undefined) return "Expecting one of 'executor_id' and 'task_id', not both";
  if (agentId === undefined || frameworkId === undefined) return "Expecting 'agent_id' and 'framework_id' to be ids";
  return {
    type: 'crash_executor',
    executorId,
    ...(agentId === null ? {} : { agentId }),
    ...(frameworkId === null ? {} : { frameworkId }),
  };
}

function taskFault(body: Body, type: 'fail_task' | 'hang_task' | 'memory_spike'): Parsed {
  const target = taskTarget(body);
  if (typeof target === 'string') return target;
  if (type === 'hang_task') return { type, ...target };
  if (type === 'fail_task') {
    const { exit_code: exitCode = 1, message } = body;
    if (typeof exitCode !== 'number' || !Number.isInteger(exitCode) || exitCode < 1 || exitCode > 255)
      return "Expecting 'exit_code' to be a whole number from 1 to 255";
    if (message !== undefined && typeof message !== 'string') return "Expecting 'message' to be a string";
    return { type, ...target, exitCode, ...(message === undefined ? {} : { message }) };
  }
  const { mib, duration_ms: durationMs } = body;
  if (!isMib(mib)) return "Expecting 'mib' to be a positive number of MiB";
  const invalid = positiveSpanError('duration_ms', durationMs);
  if (invalid !== undefined) return invalid;
  return { type, ...target, mib, ...(durationMs === undefined ? {} : { durationMs: durationMs as number }) };
}

function memoryLimit(body: Body): Parsed {
  const [agentId, containerId, taskId] = [
    idOf(body, 'agent_id', true),
    idOf(body, 'container_id', false),
    idOf(body, 'task_id', false),
  ];
  if (typeof agentId !== 'string') return "Expecting 'agent_id' to be present";
  if (containerId === undefined || taskId === undefined || (containerId === null) === (taskId === null))
    return "Expecting one of 'container_id' and 'task_id'";
  const mib = body['mib'];
  if (!isMib(mib)) return "Expecting 'mib' to be a positive number of MiB";
  return {
    type: 'set_memory_limit',
    agentId,
    mib,
    ...(containerId === null ? {} : { containerId }),
    ...(taskId === null ? {} : { taskId: taskId as string }),
  };
}

/** Why `value` is not a span of 1 ms or more (or absent, unless `required`), if it is not. */
function positiveSpanError(key: string, value: unknown, required = false): string | undefined {
  if (value === undefined ? !required : isSpan(value) && value !== 0) return undefined;
  return `Expecting '${key}' to be a whole number of milliseconds from 1 to ${MAX_SPAN_MS}`;
}

function isMib(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= MAX_MIB;
}

/** The largest amount of memory a fault may name: a PiB, in MiB. */
const MAX_MIB = 1024 ** 3;
