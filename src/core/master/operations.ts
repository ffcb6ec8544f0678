/**
 * Speculative offer operations (RESERVE, UNRESERVE, CREATE, DESTROY) and
 * their records, as upstream's master runs them on an agent's default
 * resources:
 *
 *   ACCEPT / operator call --valid--> applied at once to the master's view
 *     of the agent (its total, the allocator's total and allocation), an
 *     operation record OPERATION_PENDING, APPLY_OPERATION to the agent
 *   agent applies, checkpoints, sends OPERATION_FINISHED with a status uuid,
 *     retried until acknowledged (the agent has AGENT_OPERATION_FEEDBACK)
 *   master forwards it to the framework when the operation has an id
 *     (UPDATE_OPERATION_STATUS with uuid and agent_id), else acknowledges it
 *     itself; ACKNOWLEDGE_OPERATION_STATUS goes on to the agent, and an
 *     acknowledged terminal status ends the record
 *   invalid operation --> dropped; OPERATION_ERROR (no uuid) when it has an id
 *
 * Records are kept until their terminal status is acknowledged, or their
 * framework is removed; the operator's GET_OPERATIONS lists them.
 */
import { done, type Outcome } from '../model/errors.js';
import { toHex } from '../kernel/rng.js';
import { add, allocate as withAllocationRole, contains, type Resources } from '../model/resources.js';
import { applyConversions, popReservation, withoutVolume, type Conversion } from '../model/conversions.js';
import type { OperationState, OperationStatus, ResourceOperation, ResourceOperationType } from '../model/types.js';
import type { Framework } from './framework.js';
import type {} from '../model/records.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { isTerminalOperation } from './operation-store.js';
import type { OperationRecord } from '../model/records.js';
import { operationError } from './operation-validation.js';

/** The two sides of an operation: what it consumes and what takes its place. */
export function conversionOf(op: ResourceOperation): Conversion {
  switch (op.type) {
    case 'RESERVE':
      return { consumed: op.resources.map(popReservation), converted: op.resources };
    case 'UNRESERVE':
      return { consumed: op.resources, converted: op.resources.map(popReservation) };
    case 'CREATE':
      return { consumed: op.resources.map(withoutVolume), converted: op.resources };
    case 'DESTROY':
      return { consumed: op.resources, converted: op.resources.map(withoutVolume) };
  }
}

/** What an ACCEPT's operations see of its offers: one agent, one role, what is left. */
export interface AcceptPool {
  readonly agentId: string;
  readonly role: string;
  available: Resources;
}

/**
 * A RESERVE, UNRESERVE, CREATE or DESTROY in an ACCEPT: validated, tried on
 * what the earlier operations left of the offers, then applied. Resources
 * without an allocation role get the offer's, as upstream fills it in.
 */
export function acceptOperation(m: MasterOps, fw: Framework, pool: AcceptPool, op: ResourceOperation): void {
  const untagged = op.resources.filter((r) => r.allocationRole === undefined);
  const tagged: ResourceOperation =
    untagged.length === 0
      ? op
      : {
          ...op,
          resources: add(
            withAllocationRole(untagged, pool.role),
            op.resources.filter((r) => r.allocationRole !== undefined),
          ),
        };
  const record = m.agents.get(pool.agentId)!;
  const error = operationError(tagged, {
    framework: fw,
    total: record.info.resources,
    used: m.ledger.agent(pool.agentId).used,
  });
  const refused = error ?? m.authorizer.operationRefusal(fw.info.principal, tagged.type, tagged.resources);
  if (refused !== undefined) return dropOperation(m, fw, op, refused);
  const conversion = conversionOf(tagged);
  const available = applyConversions(pool.available, [conversion]);
  if (typeof available === 'string') return dropOperation(m, fw, op, `Invalid ${op.type} Operation: ${available}`);
  pool.available = available;
  m.allocator.updateAllocation(fw.id, pool.agentId, conversion.consumed, conversion.converted);
  commit(m, pool.agentId, tagged, fw.id);
}

/** An invalid operation goes no further; with an id, the framework hears OPERATION_ERROR (no uuid: nothing to acknowledge). */
export function dropOperation(
  m: MasterOps,
  fw: Framework,
  op: { readonly type: string; readonly id?: string },
  message: string,
): void {
  m.ctx.trace.append('operation:drop', { frameworkId: fw.id, operation: op.type, operationId: op.id, message });
  if (op.id === undefined) return;
  fw.send({ type: 'UPDATE_OPERATION_STATUS', status: { operationId: op.id, state: 'OPERATION_ERROR', message } });
}

/** Applies a valid operation to the master's view of the agent, records it and tells the agent. */
function commit(
  m: MasterOps,
  agentId: string,
  op: ResourceOperation,
  frameworkId: string | undefined,
): OperationRecord {
  const agent = m.agents.get(agentId)!;
  const conversion = conversionOf(op);
  const conversions = [
    {
      consumed: withAllocationRole(conversion.consumed, undefined),
      converted: withAllocationRole(conversion.converted, undefined),
    },
  ];
  const total = applyConversions(agent.info.resources, conversions);
  // The operation consumed what was offered or unallocated, which the total contains.
  if (typeof total === 'string') throw new Error(`operations: agent '${agentId}' total ${total}`);
  agent.info = { ...agent.info, resources: total };
  m.totals.set(agentId, total);
  m.allocator.updateAgentTotal(agentId, total);
  const uuid = toHex(m.operationUuids.bytes(16));
  const pending: OperationStatus = {
    ...(op.id === undefined ? {} : { operationId: op.id }),
    state: 'OPERATION_PENDING',
    agentId,
  };
  const record: OperationRecord = {
    uuid,
    ...(frameworkId === undefined ? {} : { frameworkId }),
    agentId,
    info: op,
    conversions,
    version: m.operations.nextVersion(agentId),
    total,
    latest: pending,
    statuses: [pending],
  };
  m.operations.add(record);
  m.ctx.trace.append('operation:apply', {
    operationUuid: uuid,
    frameworkId,
    agentId,
    operation: op.type,
    operationId: op.id,
    version: record.version,
  });
  sendToAgent(m, record);
  return record;
}

export function sendToAgent(m: MasterOps, record: OperationRecord): void {
  m.toAgent(record.agentId, {
    type: 'APPLY_OPERATION',
    ...(record.frameworkId === undefined ? {} : { frameworkId: record.frameworkId }),
    operationUuid: record.uuid,
    ...(record.info.id === undefined ? {} : { operationId: record.info.id }),
    conversions: record.conversions,
    version: record.version,
    total: record.total,
  });
}

/** An agent came back at `version`: the operations it has not applied go to it again, in order. */
export function resendOperations(m: MasterOps, agentId: string, version: number): void {
  const missing = m.operations
    .all()
    .filter((r) => r.agentId === agentId && (r.version > version || r.latest.state === 'OPERATION_PENDING'));
  for (const record of missing.sort((a, b) => a.version - b.version)) sendToAgent(m, record);
}

/**
 * An operation status from an agent. With an id and its framework known,
 * it goes to the framework, which acknowledges it; otherwise the master
 * acknowledges it at once, as upstream does for operations nobody tracks.
 */
export function onOperationStatus(m: MasterOps, agentId: string, operationUuid: string, status: OperationStatus): void {
  const record = m.operations.get(operationUuid);
  m.ctx.trace.append('operation:status', { agentId, operationUuid, state: status.state, uuid: status.uuid });
  const fw = record?.frameworkId === undefined ? undefined : m.frameworks.get(record.frameworkId);
  if (record !== undefined) {
    if (record.latest.state !== status.state) record.statuses.push(status);
    record.latest = status;
  }
  if (record?.info.id !== undefined && fw !== undefined) {
    fw.send({ type: 'UPDATE_OPERATION_STATUS', status });
    return;
  }
  if (status.uuid !== undefined)
    m.toAgent(agentId, { type: 'OPERATION_STATUS_ACK', operationUuid, statusUuid: status.uuid });
  if (record !== undefined && isTerminalOperation(status.state)) m.operations.remove(operationUuid);
}

/** ACKNOWLEDGE_OPERATION_STATUS: passed on to the agent; an acknowledged terminal status ends the record. */
export function onAcknowledgeOperation(
  m: MasterOps,
  fw: Framework,
  agentId: string | undefined,
  operationId: string,
  uuid: string,
): Outcome {
  const record = m.operations.find(fw.id, operationId);
  if (record === undefined || (agentId !== undefined && record.agentId !== agentId)) {
    m.ctx.trace.append('operation:ack-ignored', { frameworkId: fw.id, operationId, agentId, uuid });
    return done;
  }
  m.toAgent(record.agentId, { type: 'OPERATION_STATUS_ACK', operationUuid: record.uuid, statusUuid: uuid });
  if (record.latest.uuid === uuid && isTerminalOperation(record.latest.state)) m.operations.remove(record.uuid);
  return done;
}

/**
 * RECONCILE_OPERATIONS: the latest state of each named operation (of all
 * the framework's when none is named), without uuid. An unknown one is
 * OPERATION_UNREACHABLE or OPERATION_GONE_BY_OPERATOR by its agent's
 * state, else OPERATION_UNKNOWN.
 */
export function onReconcileOperations(
  m: MasterOps,
  fw: Framework,
  operations: readonly { readonly operationId: string; readonly agentId?: string }[],
): Outcome {
  const latest = ({ uuid: _uuid, ...status }: OperationStatus): OperationStatus => status;
  if (operations.length === 0) {
    for (const r of m.operations.all())
      if (r.frameworkId === fw.id && r.info.id !== undefined)
        fw.send({ type: 'UPDATE_OPERATION_STATUS', status: latest(r.latest) });
    return done;
  }
  for (const { operationId, agentId } of operations) {
    const record = m.operations.find(fw.id, operationId);
    if (record !== undefined) {
      fw.send({ type: 'UPDATE_OPERATION_STATUS', status: latest(record.latest) });
      continue;
    }
    const agentState = agentId === undefined ? undefined : m.agents.get(agentId)?.state;
    const state: OperationState =
      agentState === 'unreachable'
        ? 'OPERATION_UNREACHABLE'
        : agentState === 'gone'
          ? 'OPERATION_GONE_BY_OPERATOR'
          : 'OPERATION_UNKNOWN';
    fw.send({
      type: 'UPDATE_OPERATION_STATUS',
      status: { operationId, state, ...(agentId === undefined ? {} : { agentId }) },
    });
  }
  return done;
}

/** A removed framework's records go with it; the agent's later statuses for them are acknowledged by the master. */
export function removeFrameworkOperations(m: MasterOps, frameworkId: string): void {
  for (const r of m.operations.all()) if (r.frameworkId === frameworkId) m.operations.remove(r.uuid);
}

/** The answer to an operator call: accepted, or refused as bad (400), by the ACLs (403) or as conflicting with the agent's state (409). */
export type OperatorResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: 'BAD_REQUEST' | 'FORBIDDEN' | 'CONFLICT'; readonly message: string };

/**
 * The operator's RESERVE_RESOURCES, UNRESERVE_RESOURCES, CREATE_VOLUMES and
 * DESTROY_VOLUMES on one agent. Operators act on unallocated resources:
 * when those do not hold what the operation consumes, outstanding offers
 * on the agent are rescinded, one by one, until they do, as upstream does;
 * none is when even all of them would not do (409 at once).
 */
export function operatorOperation(
  m: MasterOps,
  type: ResourceOperationType,
  agentId: string,
  resources: Resources,
  invalid?: string,
  refusal: (op: ResourceOperation) => string | undefined = () => undefined,
): OperatorResult {
  const agent = m.agents.get(agentId);
  if (agent === undefined || agent.state === 'gone')
    return { ok: false, status: 'BAD_REQUEST', message: 'No agent found with specified ID' };
  const op: ResourceOperation = {
    type,
    resources: type === 'RESERVE' ? resources : withAllocationRole(resources, undefined),
    ...(invalid === undefined ? {} : { invalid }),
  };
  const error = operationError(op, {
    total: agent.info.resources,
    used: withAllocationRole(m.ledger.agent(agentId).used, undefined),
  });
  if (error !== undefined) return { ok: false, status: 'BAD_REQUEST', message: error };
  const refused = refusal(op);
  if (refused !== undefined) return { ok: false, status: 'FORBIDDEN', message: refused };
  const { consumed } = conversionOf(op);
  // What rescinding every offer on the agent would free: when even that falls short, no offer is rescinded for nothing.
  const books = m.ledger.agent(agentId);
  const reachable = applyConversions(add(unallocated(m, agentId), withAllocationRole(books.offered, undefined)), [
    conversionOf(op),
  ]);
  if (typeof reachable === 'string')
    return { ok: false, status: 'CONFLICT', message: `Invalid ${type} Operation: ${reachable}` };
  for (const fw of m.frameworks.values()) {
    for (const offer of [...fw.offers.values()]) {
      if (contains(unallocated(m, agentId), consumed)) break;
      if (offer.agentId === agentId) removeOffer(m, offer, { rescind: true });
    }
  }
  const applied = applyConversions(unallocated(m, agentId), [conversionOf(op)]);
  if (typeof applied === 'string')
    return { ok: false, status: 'CONFLICT', message: `Invalid ${type} Operation: ${applied}` };
  commit(m, agentId, op, undefined);
  return { ok: true };
}

/** What of an agent is neither offered nor used, in the master's books. */
function unallocated(m: MasterOps, agentId: string): Resources {
  const total = m.agents.get(agentId)?.info.resources ?? [];
  const books = m.ledger.agent(agentId);
  const held = withAllocationRole(add(books.offered, books.used), undefined);
  // Resources held by an ACCEPT in progress are not in the books, but no operator call runs inside one.
  const free = applyConversions(total, [{ consumed: held, converted: [] }]);
  if (typeof free === 'string') throw new Error(`operations: agent '${agentId}' books exceed its total: ${free}`);
  return free;
}
