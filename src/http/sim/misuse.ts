/**
 * The protocol-misuse report on the control API, and the one thing only
 * the HTTP layer sees for it: an ACKNOWLEDGE refused for its uuid before
 * it reaches the core.
 *
 *   GET /sim/v1/misuse   {"time_ms", "frameworks": [{"framework_id", "name", "misuses": [
 *                          {"kind", "count", "first_time_ms", "last_time_ms", "explanation",
 *                           "examples": [{"time_ms", "ids": {"task_id", "agent_id", "offer_id",
 *                           "uuid", "stream_id"}, "detail"}]}]}]}
 *
 * Frameworks by id, kinds in the report's fixed order; cluster times in ms
 * since the cluster started; an example names only the ids that apply.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MisuseIds, MisuseReport } from '../../core/master/misuse-report.js';
import type { mesos } from '../../wire/generated/types.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { JSON_TYPE, MESSAGE_TYPES, contentTypeOf } from '../negotiate.js';
import { serveMethods } from '../methods.js';
import { principalOf } from '../auth.js';
import { simReaderOf } from '../../wire/sim/view.js';

type Call = mesos.v1.scheduler.Call;

const UUID_BYTES = 16;

export function registerMisuseRoute(app: FastifyInstance, driver: ClusterDriver): void {
  serveMethods(app, '/sim/v1/misuse', ['GET'], (req, reply) => {
    const report = driver.read((view) => {
      const reader = simReaderOf(view, principalOf(req));
      return reader === undefined ? view.misuse() : reader.misuse(view.misuse());
    });
    return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(misuseToJson(report)));
  });
}

export function misuseToJson(report: MisuseReport): object {
  return {
    time_ms: report.timeMs,
    frameworks: report.frameworks.map((fw) => ({
      framework_id: fw.frameworkId,
      ...(fw.name === undefined ? {} : { name: fw.name }),
      misuses: fw.misuses.map((m) => ({
        kind: m.kind,
        count: m.count,
        first_time_ms: m.firstTimeMs,
        last_time_ms: m.lastTimeMs,
        explanation: m.explanation,
        examples: m.examples.map((e) => ({ time_ms: e.timeMs, ids: idsToJson(e.ids), detail: e.detail })),
      })),
    })),
  };
}

function idsToJson(ids: MisuseIds): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.taskId !== undefined) out['task_id'] = ids.taskId;
  if (ids.agentId !== undefined) out['agent_id'] = ids.agentId;
  if (ids.offerId !== undefined) out['offer_id'] = ids.offerId;
  if (ids.uuid !== undefined) out['uuid'] = ids.uuid;
  if (ids.streamId !== undefined) out['stream_id'] = ids.streamId;
  return out;
}

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
  if (header === undefined || contentTypeOf(header, MESSAGE_TYPES) !== JSON_TYPE || !(req.body instanceof Buffer)) return undefined;
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
  return { frameworkId, ...(typeof taskId === 'string' ? { taskId } : {}), ...(typeof agentId === 'string' ? { agentId } : {}) };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
