/**
 * The one thing of the misuse report that only the HTTP layer sees: an
 * ACKNOWLEDGE refused for its uuid before it reaches the core.
 */
import type { FastifyRequest } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { mesos } from '../../wire/generated/types.js';
import { JSON_TYPE, MESSAGE_TYPES, contentTypeOf } from '../negotiate.js';

type Call = mesos.v1.scheduler.Call;

const UUID_BYTES = 16;

/**
 * After the scheduler route refused a call (the answer is already the
 * route's): an ACKNOWLEDGE whose uuid is missing or not 16 bytes goes to
 * the core's misuse log. `call` is the decoded call, or undefined when the
 * body did not decode; then a JSON body is read once more as plain JSON,
 * since a missing `uuid` (a required field) is what stopped the decoding.
 * A protobuf body that does not decode says nothing dependable.
 */
export function noteRefusedAcknowledge(driver: ClusterDriver, req: FastifyRequest, call: Call | undefined): void {
  const ack = call === undefined ? plainAcknowledge(req) : decodedAcknowledge(call);
  if (ack === undefined || driver.failure !== undefined) return;
  driver.input((c) => c.acknowledgeRefused(ack.frameworkId, ack.taskId, ack.agentId));
}

interface RefusedAck {
  readonly frameworkId: string;
  readonly taskId?: string;
  readonly agentId?: string;
}

function decodedAcknowledge(call: Call): RefusedAck | undefined {
  const ack = call.acknowledge;
  const frameworkId = call.framework_id?.value;
  if (call.type !== 'ACKNOWLEDGE' || ack === undefined || ack === null || frameworkId === undefined) return undefined;
  if (ack.uuid.length === UUID_BYTES) return undefined;
  return { frameworkId, taskId: ack.task_id.value, agentId: ack.agent_id.value };
}

function plainAcknowledge(req: FastifyRequest): RefusedAck | undefined {
  const header = req.headers['content-type'];
  if (header === undefined || contentTypeOf(header, MESSAGE_TYPES) !== JSON_TYPE || !(req.body instanceof Buffer))
    return undefined;
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString('utf8'));
  } catch {
    return undefined;
  }
  const call = record(body);
  const frameworkId = record(call?.['framework_id'])?.['value'];
  const ack = record(call?.['acknowledge']);
  if (call?.['type'] !== 'ACKNOWLEDGE' || typeof frameworkId !== 'string' || ack === undefined) return undefined;
  const uuid = ack['uuid'];
  if (typeof uuid === 'string' && Buffer.from(uuid, 'base64').length === UUID_BYTES) return undefined;
  const taskId = record(ack['task_id'])?.['value'];
  const agentId = record(ack['agent_id'])?.['value'];
  return {
    frameworkId,
    ...(typeof taskId === 'string' ? { taskId } : {}),
    ...(typeof agentId === 'string' ? { agentId } : {}),
  };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
