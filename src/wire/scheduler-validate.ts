/**
 * The master's structural checks of a scheduler Call, after decoding and
 * before any framework lookup (upstream check 6). Truth table:
 *
 *   type unset                          -> "Expecting 'type' to be present"
 *   SUBSCRIBE without subscribe         -> "Expecting 'subscribe' to be present"
 *   SUBSCRIBE, framework_id set and
 *     not equal to framework_info.id    -> "'framework_id' differs from 'subscribe.framework_info.id'"
 *   any other call without framework_id -> "Expecting 'framework_id' to be present"
 *   a call without its payload field    -> "Expecting '<field>' to be present"
 *   UPDATE_FRAMEWORK, id mismatch        -> "'framework_id' differs from 'update_framework.framework_info.id'"
 *   ACKNOWLEDGE*, uuid not 16 bytes     -> "'uuid' must be a 16-byte UUID"
 *
 * REVIVE, SUPPRESS, TEARDOWN and UNKNOWN need no payload.
 */
import type { mesos } from './generated/types.js';

type Call = mesos.v1.scheduler.Call;

const PAYLOAD: Partial<Record<NonNullable<Call['type']>, keyof Call>> = {
  ACCEPT: 'accept',
  DECLINE: 'decline',
  ACCEPT_INVERSE_OFFERS: 'accept_inverse_offers',
  DECLINE_INVERSE_OFFERS: 'decline_inverse_offers',
  KILL: 'kill',
  SHUTDOWN: 'shutdown',
  ACKNOWLEDGE: 'acknowledge',
  ACKNOWLEDGE_OPERATION_STATUS: 'acknowledge_operation_status',
  RECONCILE: 'reconcile',
  RECONCILE_OPERATIONS: 'reconcile_operations',
  MESSAGE: 'message',
  REQUEST: 'request',
  UPDATE_FRAMEWORK: 'update_framework',
};

/** Undefined when valid, else the message (the HTTP layer adds upstream's `Failed to validate scheduler::Call: `). */
export function schedulerCallError(call: Call): string | undefined {
  if (call.type === undefined) return "Expecting 'type' to be present";
  if (call.type === 'SUBSCRIBE') {
    if (call.subscribe === undefined) return "Expecting 'subscribe' to be present";
    // The id normally travels only in framework_info.id; a top-level copy must agree.
    if (call.framework_id !== undefined && call.framework_id.value !== call.subscribe.framework_info.id?.value) {
      return "'framework_id' differs from 'subscribe.framework_info.id'";
    }
    return undefined;
  }
  if (call.framework_id === undefined) return "Expecting 'framework_id' to be present";
  const field = PAYLOAD[call.type];
  // REQUEST may carry its requests at the top level, as the spec writes it.
  const topLevelRequests = call.type === 'REQUEST' && call.requests !== undefined;
  if (field !== undefined && call[field] === undefined && !topLevelRequests)
    return `Expecting '${field}' to be present`;
  if (call.type === 'UPDATE_FRAMEWORK' && call.framework_id.value !== call.update_framework?.framework_info.id?.value) {
    return "'framework_id' differs from 'update_framework.framework_info.id'";
  }
  if (call.type === 'ACKNOWLEDGE' && call.acknowledge?.uuid.length !== 16) return "'uuid' must be a 16-byte UUID";
  if (call.type === 'ACKNOWLEDGE_OPERATION_STATUS') {
    const ack = call.acknowledge_operation_status!;
    if (ack.uuid.length !== 16) return "'uuid' must be a 16-byte UUID";
    if (ack.agent_id === undefined) return "Expecting 'agent_id' to be present";
  }
  return undefined;
}
