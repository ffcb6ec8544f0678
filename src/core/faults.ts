/**
 * Faults as ordinary inputs: each is a plain record naming what breaks and
 * how, so the control API, scenario timelines and the fault-schedule search
 * speak one vocabulary, and a trace can carry a fault as data. `Cluster.inject`
 * applies one; `describeFault` is its one-line form for reports.
 */
import type { RecoverMode } from './executor-api.js';
import type { NetworkRule } from './network.js';

export type Fault =
  /** The agent process dies; its connection to the master breaks. */
  | { readonly type: 'crash_agent'; readonly agentId: string }
  /** A crashed agent starts again from its checkpoint. */
  | { readonly type: 'restart_agent'; readonly agentId: string; readonly recover: RecoverMode }
  /** Messages between two nodes are lost both ways until healed. */
  | { readonly type: 'partition'; readonly nodes: readonly [string, string] }
  | { readonly type: 'heal'; readonly nodes: readonly [string, string] }
  /** Messages matching the rule are dropped, delayed or repeated. */
  | { readonly type: 'network_rule'; readonly rule: NetworkRule }
  | { readonly type: 'remove_network_rule'; readonly ruleId: number }
  /** A master process dies: the leader unless `master` (an index) names another. */
  | { readonly type: 'crash_master'; readonly master?: number }
  /** A master that is down starts again, as a standby (`master` required: the leader is never down). */
  | { readonly type: 'restart_master'; readonly master: number }
  /** The leader (or `master`) dies and starts again at once: a new one is elected after the election delay. */
  | { readonly type: 'master_failover'; readonly master?: number };

export type FaultType = Fault['type'];

/** What a fault gives back: the id of a rule it added, or nothing. */
export interface FaultResult {
  readonly ruleId?: number;
  /** The index of the master a master fault applied to. */
  readonly master?: number;
}

export function describeFault(fault: Fault): string {
  switch (fault.type) {
    case 'crash_agent':
      return `crash agent ${fault.agentId}`;
    case 'restart_agent':
      return `restart agent ${fault.agentId} (${fault.recover})`;
    case 'partition':
    case 'heal':
      return `${fault.type} ${fault.nodes[0]} from ${fault.nodes[1]}`;
    case 'network_rule':
      return `network rule: ${fault.rule.action} ${fault.rule.from ?? '*'} -> ${fault.rule.to ?? '*'}`;
    case 'remove_network_rule':
      return `remove network rule ${fault.ruleId}`;
    case 'crash_master':
    case 'master_failover':
      return `${fault.type === 'crash_master' ? 'crash' : 'fail over'} master ${fault.master ?? '(the leader)'}`;
    case 'restart_master':
      return `restart master ${fault.master}`;
  }
}
