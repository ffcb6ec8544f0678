/**
 * The faults of agents' processes and of the network (faults/vocabulary.ts): an agent
 * crashed or restarted, two nodes cut apart or healed, a network rule added
 * or removed. Each is made of the cluster's own inputs, which run as parts
 * of the fault; a node it names that does not exist is NOT_FOUND.
 */
import { fail, ok, type Outcome } from '../model/errors.js';
import type { Fault, FaultResult } from './vocabulary.js';
import { MASTER_NODE } from '../model/messages.js';
import type { NetworkRule } from '../network/network.js';
import type { RecoverMode } from '../model/executor-api.js';
import type { Trace } from '../kernel/trace.js';

export type NetworkFault = Extract<
  Fault,
  { readonly type: 'crash_agent' | 'restart_agent' | 'partition' | 'heal' | 'network_rule' | 'remove_network_rule' }
>;

/** What the cluster offers these faults. */
export interface NetworkFaultTarget {
  hasAgent(agentId: string): boolean;
  crashAgent(agentId: string): void;
  restartAgent(agentId: string, recover: RecoverMode): void;
  partition(a: string, b: string): void;
  heal(a: string, b: string): void;
  addNetworkRule(rule: NetworkRule): number;
  removeNetworkRule(ruleId: number): void;
}

export function injectNetworkFault(
  cluster: NetworkFaultTarget,
  trace: Trace,
  fault: NetworkFault,
): Outcome<FaultResult> {
  // An agent's process fault names an agent: the master is a node, but no agent.
  const agentOnly = fault.type === 'crash_agent' || fault.type === 'restart_agent';
  const unknown = faultNodes(fault).find((node) => (agentOnly || node !== MASTER_NODE) && !cluster.hasAgent(node));
  if (unknown !== undefined) return fail('NOT_FOUND', `Agent '${unknown}' not found`);
  const { type, ...parameters } = fault;
  trace.append(`fault:${type}`, parameters);
  switch (fault.type) {
    case 'crash_agent':
      cluster.crashAgent(fault.agentId);
      return ok({});
    case 'restart_agent':
      cluster.restartAgent(fault.agentId, fault.recover);
      return ok({});
    case 'partition':
      cluster.partition(...fault.nodes);
      return ok({});
    case 'heal':
      cluster.heal(...fault.nodes);
      return ok({});
    case 'network_rule':
      return ok({ ruleId: cluster.addNetworkRule(fault.rule) });
    case 'remove_network_rule':
      cluster.removeNetworkRule(fault.ruleId);
      return ok({});
  }
}

/** The nodes a fault names, which must exist. */
function faultNodes(fault: NetworkFault): readonly string[] {
  switch (fault.type) {
    case 'crash_agent':
    case 'restart_agent':
      return [fault.agentId];
    case 'partition':
    case 'heal':
      return fault.nodes;
    case 'network_rule':
    case 'remove_network_rule':
      return [];
  }
}
