/**
 * A fault as the control API and scenario files write it (JSON, snake_case)
 * read into the core's `Fault`, or the reason it is not one. Nodes are
 * named by id: `master`, or an agent id.
 *
 *   {"type": "crash_agent", "agent_id"}
 *   {"type": "restart_agent", "agent_id", "recover": "reconnect" | "cleanup"}
 *   {"type": "partition" | "heal", "agent_id"}          the agent's link to the master
 *   {"type": "partition" | "heal", "nodes": [a, b]}     any two nodes
 *   {"type": "network_rule", "action": "drop" | "delay" | "duplicate", "from", "to",
 *    "messages": [TYPE...], "delay_ms", "jitter_ms", "probability"}
 *   {"type": "remove_network_rule", "rule_id"}
 *   {"type": "crash_master", "master"?}     the leader, or the master of that index (0, 1, ...)
 *   {"type": "restart_master", "master"}    a master that is down starts again, as a standby
 *   {"type": "master_failover", "master"?}  the leader (or that master) dies and starts again at once
 */
import type { Fault } from '../core/faults.js';
import { MASTER_NODE, type MessageType } from '../core/messages.js';

/** The largest span of time a fault or a clock move may name: a day. */
export const MAX_SPAN_MS = 86_400_000;

export const FAULT_TYPES = [
  'crash_agent',
  'restart_agent',
  'partition',
  'heal',
  'network_rule',
  'remove_network_rule',
  'crash_master',
  'restart_master',
  'master_failover',
] as const;
const RULE_ACTIONS = ['drop', 'delay', 'duplicate'] as const;

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
  if (typeof master !== 'number' || !Number.isInteger(master) || master < 0) return "Expecting 'master' to be the index of a master (0, 1, ...)";
  return type === 'restart_master' ? { type, master } : { type, master };
}

function withAgent(body: Body, build: (agentId: string) => Parsed): Parsed {
  const agentId = body['agent_id'];
  if (typeof agentId !== 'string' || agentId === '') return "Expecting 'agent_id' to be present";
  return build(agentId);
}

function restartAgent(body: Body): Parsed {
  const recover = body['recover'] ?? 'reconnect';
  if (recover !== 'reconnect' && recover !== 'cleanup') return "Expecting 'recover' to be reconnect or cleanup";
  return withAgent(body, (agentId) => ({ type: 'restart_agent', agentId, recover }));
}

function link(body: Body, type: 'partition' | 'heal'): Parsed {
  const nodes = body['nodes'];
  if (nodes === undefined) return withAgent(body, (agentId) => ({ type, nodes: [agentId, MASTER_NODE] }));
  if (!Array.isArray(nodes) || nodes.length !== 2 || !nodes.every((n) => typeof n === 'string' && n !== '') || nodes[0] === nodes[1]) {
    return "Expecting 'nodes' to be two different node ids";
  }
  return { type, nodes: [nodes[0] as string, nodes[1] as string] };
}

/** A network rule: messages matching it (sender, receiver, types) are dropped, delayed or repeated, with a probability. */
function networkRule(body: Body): Parsed {
  const { action, from, to, messages, delay_ms: delayMs, jitter_ms: jitterMs, probability } = body;
  const checks: readonly (readonly [boolean, string])[] = [
    [typeof action === 'string' && (RULE_ACTIONS as readonly string[]).includes(action), `Expecting 'action' to be one of ${RULE_ACTIONS.join(', ')}`],
    [[from, to].every((v) => v === undefined || typeof v === 'string'), "Expecting 'from' and 'to' to be node ids ('master', or an agent id)"],
    [messages === undefined || (Array.isArray(messages) && messages.every((m) => typeof m === 'string' && /^[A-Z_]+$/.test(m))), "Expecting 'messages' to be message types (RUN_TASK, STATUS_UPDATE, ...)"],
    [isSpan(delayMs) && isSpan(jitterMs), `Expecting 'delay_ms' and 'jitter_ms' to be whole numbers of milliseconds from 0 to ${MAX_SPAN_MS}`],
    [probability === undefined || (typeof probability === 'number' && probability >= 0 && probability <= 1), "Expecting 'probability' to be a number from 0 to 1"],
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
