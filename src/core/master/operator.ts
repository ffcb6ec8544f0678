/**
 * The master operator calls that change the cluster or read what only the
 * core knows, once the wire layer has decoded and validated them. Each
 * returns an outcome: `done` is upstream's empty 200, a value is a 200 with
 * a body, a failure carries upstream's status class and text.
 *
 *   TEARDOWN            200, or 400 `No framework found with specified ID`, 403
 *   MARK_AGENT_GONE     200 (also when already gone), 404 `Agent '<id>' not found`
 *   DEACTIVATE_AGENT    200, 400 `Unknown agent`
 *   REACTIVATE_AGENT    200, 400 `Agent is not deactivated`, `Agent is still in the DRAINING state`
 *   DRAIN_AGENT         200, 400 `Unknown agent`, 409 `Agent is currently being marked gone`
 *
 *   UPDATE_QUOTA        200, 400 `Invalid QuotaConfig: ...`, 403 (quota.ts)
 *   UPDATE_WEIGHTS      200, 400, 403 (weights.ts)
 *   RESERVE_RESOURCES, UNRESERVE_RESOURCES, CREATE_VOLUMES, DESTROY_VOLUMES
 *                       200, 400, 403, 409 (operations.ts)
 *   UPDATE_MAINTENANCE_SCHEDULE, START_MAINTENANCE, STOP_MAINTENANCE
 *                       200, 400 (maintenance.ts), 403
 *
 * Each asks the ACLs as upstream does (the table of docs/auth.md); a refusal
 * is 403 with its reason and changes nothing. The calls on agents ask first.
 */
import { done, fail, ok, type Outcome } from '../model/errors.js';
import type { Resources } from '../model/resources.js';
import type { ResourceOperation, ResourceOperationType } from '../model/types.js';
import type { OperatorCall, OperatorValue } from '../model/operator-types.js';
import type { OperationRecord } from '../model/records.js';
import { deactivateAgent, drainAgent, markAgentGone, reactivateAgent, transitionDrained } from './agent-admin.js';
import type { MasterOps } from './ops.js';
import { operatorOperation } from './operations.js';
import { updateQuota } from './quota.js';
import { updateWeights } from './weights.js';
import { machinesDown, machinesUp, updateSchedule } from './maintenance.js';
import { machineJson } from '../model/maintenance.js';

export function onOperatorCall(
  m: MasterOps,
  call: OperatorCall,
  principal?: string,
): Outcome<OperatorValue | undefined> {
  m.ctx.trace.append(`operator:${call.type.toLowerCase()}`, traceOf(call));
  const refused = agentActionRefusal(m, call, principal);
  if (refused !== undefined) return fail('FORBIDDEN', refused);
  switch (call.type) {
    case 'TEARDOWN':
      return teardown(m, call.frameworkId, principal);
    case 'MARK_AGENT_GONE':
      return markAgentGone(m, call.agentId);
    case 'DEACTIVATE_AGENT':
      return deactivateAgent(m, call.agentId);
    case 'REACTIVATE_AGENT':
      return reactivateAgent(m, call.agentId);
    case 'DRAIN_AGENT':
      return drainAgent(m, call.agentId, call.maxGracePeriodMs, call.markGone);
    case 'UPDATE_QUOTA':
      return updateQuota(m, call, (role) => m.authorizer.refusal('update_quotas', principal, role));
    case 'GET_QUOTA':
      return ok({
        type: 'GET_QUOTA',
        configs: [...m.quotas.values()].filter((q) => m.authorizer.mayGetQuota(principal, q.role)).sort(byRole),
      });
    case 'UPDATE_WEIGHTS':
      return updateWeights(m, call.weights, (role) => m.authorizer.refusal('update_weights', principal, role));
    case 'GET_WEIGHTS': {
      const weights = [...m.weights].filter(([role]) => m.authorizer.mayViewRole(principal, role));
      return ok({ type: 'GET_WEIGHTS', weights: weights.map(([role, weight]) => ({ role, weight })).sort(byRole) });
    }
    case 'RESERVE_RESOURCES':
      return resourceOperation(m, 'RESERVE', call.agentId, call.resources, principal);
    case 'UNRESERVE_RESOURCES':
      return resourceOperation(m, 'UNRESERVE', call.agentId, call.resources, principal);
    case 'CREATE_VOLUMES':
      return resourceOperation(m, 'CREATE', call.agentId, call.volumes, principal);
    case 'DESTROY_VOLUMES':
      return resourceOperation(m, 'DESTROY', call.agentId, call.volumes, principal);
    case 'UPDATE_MAINTENANCE_SCHEDULE':
      return updateSchedule(m, call.schedule);
    case 'START_MAINTENANCE':
      return machinesDown(m, call.machines);
    case 'STOP_MAINTENANCE':
      return machinesUp(m, call.machines);
    case 'GET_OPERATIONS':
      return ok({
        type: 'GET_OPERATIONS',
        operations: m.operations.all().filter((op) => mayViewOperation(m, principal, op)),
      });
  }
}

/**
 * The calls on agents and machines are authorized before anything else is
 * looked at, as upstream does: an unknown agent is refused the same way. A
 * drain that marks the agent gone needs both actions. The maintenance
 * actions name no machine (upstream's local authorizer knows only ANY or
 * NONE of them), so one question stands for all.
 */
function agentActionRefusal(m: MasterOps, call: OperatorCall, principal: string | undefined): string | undefined {
  switch (call.type) {
    case 'MARK_AGENT_GONE':
      return m.authorizer.refusal('mark_agents_gone', principal);
    case 'DEACTIVATE_AGENT':
      return m.authorizer.refusal('deactivate_agents', principal);
    case 'REACTIVATE_AGENT':
      return m.authorizer.refusal('reactivate_agents', principal);
    case 'DRAIN_AGENT':
      return (
        m.authorizer.refusal('drain_agents', principal) ??
        (call.markGone ? m.authorizer.refusal('mark_agents_gone', principal) : undefined)
      );
    case 'UPDATE_MAINTENANCE_SCHEDULE':
      return m.authorizer.refusal('update_maintenance_schedules', principal);
    case 'START_MAINTENANCE':
      return m.authorizer.refusal('start_maintenances', principal);
    case 'STOP_MAINTENANCE':
      return m.authorizer.refusal('stop_maintenances', principal);
    default:
      return undefined;
  }
}

/** Upstream looks among registered frameworks only: a removed one is not found either. */
function teardown(m: MasterOps, frameworkId: string, principal: string | undefined): Outcome {
  const fw = m.frameworks.get(frameworkId);
  if (fw === undefined) return fail('INVALID', 'No framework found with specified ID');
  const refused = m.authorizer.refusal('teardown_frameworks', principal, fw.info.principal ?? '');
  if (refused !== undefined) return fail('FORBIDDEN', refused);
  m.removeFramework(fw, 'Framework torn down by the operator');
  return done;
}

/**
 * Upstream shows an operation to whoever may see every resource it consumed
 * (VIEW_ROLE on each, the allocation role included): a RESERVE of
 * unreserved resources is seen by all, its UNRESERVE only by those who may
 * see the role.
 */
function mayViewOperation(m: MasterOps, principal: string | undefined, op: OperationRecord): boolean {
  if (!m.authorizer.enabled) return true;
  const allocation = op.info.resources[0]?.allocationRole;
  if (allocation !== undefined && !m.authorizer.mayViewRole(principal, allocation)) return false;
  return op.conversions.every((c) => c.consumed.every((r) => m.authorizer.mayViewResource(principal, r)));
}

function resourceOperation(
  m: MasterOps,
  type: ResourceOperationType,
  agentId: string,
  resources: Resources,
  principal: string | undefined,
): Outcome {
  const refusal = (op: ResourceOperation) => m.authorizer.operationRefusal(principal, op.type, op.resources);
  const result = operatorOperation(m, type, agentId, resources, undefined, refusal);
  if (result.ok) return done;
  return fail(result.status === 'BAD_REQUEST' ? 'INVALID' : result.status, result.message);
}

const byRole = (a: { readonly role: string }, b: { readonly role: string }): number =>
  a.role < b.role ? -1 : a.role > b.role ? 1 : 0;

/**
 * Draining agents that hold no more tasks (live, or terminal and not yet
 * acknowledged, as upstream counts them) are drained, and marked gone when
 * the drain asked for it. Only draining agents are looked at.
 */
export function checkDraining(m: MasterOps): void {
  if (m.draining.size === 0) return;
  for (const agentId of [...m.draining]) {
    const record = m.agents.get(agentId);
    if (record === undefined || record.drain?.state !== 'DRAINING' || record.state === 'gone')
      m.draining.delete(agentId);
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
    case 'UPDATE_MAINTENANCE_SCHEDULE':
      return { windows: call.schedule.windows.length };
    case 'START_MAINTENANCE':
    case 'STOP_MAINTENANCE':
      return { machines: call.machines.map(machineJson) };
    default: {
      const { type: _type, ...rest } = call;
      return rest;
    }
  }
}
