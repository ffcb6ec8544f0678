/**
 * A fault applied (`Cluster.inject`): the master faults through the
 * cluster's master inputs, the faults of streams, executors, tasks and
 * the wall clock by the fault actions, the agents joining and leaving by
 * faults/agents.ts, the rest through the cluster's
 * agent and network inputs, which run as parts of the one `inject` input.
 */
import type { Outcome } from '../model/errors.js';
import type { Trace } from '../kernel/trace.js';
import { type FaultActions, isNodeFault } from './actions.js';
import { type AgentFaultTarget, injectAgentFault, isAgentFault } from './agents.js';
import { injectMasterFault, isMasterFault, type MasterFaultTarget, type MasterSeats } from './master.js';
import { injectNetworkFault, type NetworkFaultTarget } from './network.js';
import type { Fault, FaultResult } from './vocabulary.js';

export function injectFault(
  cluster: MasterFaultTarget & NetworkFaultTarget,
  agents: AgentFaultTarget,
  seats: MasterSeats,
  actions: FaultActions,
  trace: Trace,
  fault: Fault,
): Outcome<FaultResult> {
  if (isMasterFault(fault)) {
    const outcome = injectMasterFault(cluster, seats, fault);
    const { type, ...parameters } = fault;
    if (outcome.ok) trace.append(`fault:${type}`, { ...parameters, master: outcome.value.master });
    return outcome;
  }
  if (isAgentFault(fault)) return injectAgentFault(agents, trace, fault);
  if (isNodeFault(fault)) return actions.apply(fault);
  return injectNetworkFault(cluster, trace, fault);
}
