/**
 * The master operator calls that change the cluster or read what only the
 * core knows, once the wire layer has decoded and validated them. Each
 * returns an outcome: `done` is upstream's empty 200, a value is a 200 with
 * a body, a failure carries upstream's status class and text.
 *
 *   TEARDOWN            200, or 400 `No framework found with specified ID`
 *   MARK_AGENT_GONE     200 (also when already gone), 404 `Agent '<id>' not found`
 *   DEACTIVATE_AGENT    200, 400 `Unknown agent`
 *   REACTIVATE_AGENT    200, 400 `Agent is not deactivated`, `Agent is still in the DRAINING state`
 *   DRAIN_AGENT         200, 400 `Unknown agent`, 409 `Agent is currently being marked gone`
 *
 * Quota, weights and reservations belong to their own modules; until they
 * exist, their cases answer upstream's bare 501.
 */
import { done, fail, type Outcome } from '../errors.js';
import type { OperatorCall, OperatorValue } from '../operator-types.js';
import { deactivateAgent, drainAgent, markAgentGone, reactivateAgent, transitionDrained } from './agent-admin.js';
import type { MasterOps } from './ops.js';

export function onOperatorCall(m: MasterOps, call: OperatorCall): Outcome<OperatorValue | undefined> {
  m.ctx.trace.append(`operator:${call.type.toLowerCase()}`, traceOf(call));
  switch (call.type) {
    case 'TEARDOWN': {
      const fw = m.frameworks.get(call.frameworkId);
      // Upstream looks among registered frameworks only: a removed one is not found either.
      if (fw === undefined) return fail('INVALID', 'No framework found with specified ID');
      m.removeFramework(fw, 'Framework torn down by the operator');
      return done;
    }
    case 'MARK_AGENT_GONE':
      return markAgentGone(m, call.agentId);
    case 'DEACTIVATE_AGENT':
      return deactivateAgent(m, call.agentId);
    case 'REACTIVATE_AGENT':
      return reactivateAgent(m, call.agentId);
    case 'DRAIN_AGENT':
      return drainAgent(m, call.agentId, call.maxGracePeriodMs, call.markGone);

    // ---- quota and weights: not implemented yet (upstream's bare 501) ----
    case 'UPDATE_QUOTA':
      return fail('NOT_IMPLEMENTED', '');
    case 'GET_QUOTA':
      return fail('NOT_IMPLEMENTED', '');
    case 'UPDATE_WEIGHTS':
      return fail('NOT_IMPLEMENTED', '');
    case 'GET_WEIGHTS':
      return fail('NOT_IMPLEMENTED', '');

    // ---- reservations and volumes: not implemented yet (upstream's bare 501) ----
    case 'RESERVE_RESOURCES':
      return fail('NOT_IMPLEMENTED', '');
    case 'UNRESERVE_RESOURCES':
      return fail('NOT_IMPLEMENTED', '');
    case 'CREATE_VOLUMES':
      return fail('NOT_IMPLEMENTED', '');
    case 'DESTROY_VOLUMES':
      return fail('NOT_IMPLEMENTED', '');
    case 'GET_OPERATIONS':
      return fail('NOT_IMPLEMENTED', '');
  }
}

/**
 * Draining agents that hold no more tasks (live, or terminal and not yet
 * acknowledged, as upstream counts them) are drained, and marked gone when
 * the drain asked for it. Only draining agents are looked at.
 */
export function checkDraining(m: MasterOps): void {
  if (m.draining.size === 0) return;
  for (const agentId of [...m.draining]) {
    const record = m.agents.get(agentId);
    if (record === undefined || record.drain?.state !== 'DRAINING' || record.state === 'gone') m.draining.delete(agentId);
    else if (!holdsTasks(m, agentId)) transitionDrained(m, record);
  }
}

function holdsTasks(m: MasterOps, agentId: string): boolean {
  for (const fw of m.frameworks.values()) {
    for (const task of fw.tasks.values()) if (task.agentId === agentId) return true;
  }
  return false;
}

function traceOf(call: OperatorCall): Record<string, unknown> {
  switch (call.type) {
    case 'RESERVE_RESOURCES':
    case 'UNRESERVE_RESOURCES':
    case 'CREATE_VOLUMES':
    case 'DESTROY_VOLUMES':
      return { agentId: call.agentId };
    case 'UPDATE_QUOTA':
      return { force: call.force, roles: call.configs.map((c) => c.role) };
    case 'UPDATE_WEIGHTS':
      return { roles: call.weights.map((w) => w.role) };
    default: {
      const { type: _type, ...rest } = call;
      return rest;
    }
  }
}
