/**
 * POST /api/v1/scheduler: decode, check in the upstream order, hand to the
 * core, encode. Holds no cluster logic.
 *
 *   method not POST                    405
 *   Content-Type missing / other       400 / 415
 *   body not JSON / not a Call         400
 *   Call fails validation              400
 *   SUBSCRIBE: Accept unsatisfiable    406
 *   SUBSCRIBE with a stream id header  400
 *   then the master: unknown framework 400, not subscribed 403,
 *   stream id missing or wrong 400, UNKNOWN call 501, else 202 (200)
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SchedulerEvent } from '../core/types.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { Connections } from './connections.js';
import type { mesos } from '../wire/generated/types.js';
import { decodeJson } from '../wire/json.js';
import { decodeProto, encodeProto } from '../wire/proto-codec.js';
import { schedulerCallFromWire, subscriptionFromWire } from '../wire/scheduler-in.js';
import { eventToJson, eventToWire } from '../wire/scheduler-out.js';
import { schedulerCallError, VALIDATION_PREFIX } from '../wire/scheduler-validate.js';
import { HttpEventStream } from './event-stream.js';
import { checkContentType, JSON_TYPE, MESSAGE_TYPES, negotiate, notAcceptableMessage, type MessageType } from './negotiate.js';
import { sendEmpty, sendError, sendMethodNotAllowed, STATUS_OF } from './replies.js';

type Call = mesos.v1.scheduler.Call;

const STREAM_ID_HEADERS = ['mesos-stream-id', 'cluster-stream-id'] as const;

export interface SchedulerRouteOptions {
  readonly driver: ClusterDriver;
  readonly connections: Connections;
  readonly maxBufferedBytes?: number;
  /** Wall-clock idle time after which a stream writes a HEARTBEAT itself. */
  readonly keepaliveMs?: number;
}

export function registerSchedulerRoute(app: FastifyInstance, prefix: string, options: SchedulerRouteOptions): void {
  app.route({
    method: ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'],
    url: `${prefix}/api/v1/scheduler`,
    handler: (req, reply) => sendMethodNotAllowed(reply, req.method),
  });
  app.post(`${prefix}/api/v1/scheduler`, (req, reply) => handle(req, reply, options));
}

function streamIdOf(req: FastifyRequest): string | undefined {
  for (const name of STREAM_ID_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value[0] !== undefined) return value[0];
  }
  return undefined;
}

function handle(req: FastifyRequest, reply: FastifyReply, options: SchedulerRouteOptions): FastifyReply | undefined {
  const contentType = checkContentType(req.headers['content-type'], MESSAGE_TYPES);
  if (!contentType.ok) return sendError(reply, contentType.status, contentType.message);
  const body = req.body instanceof Buffer ? req.body : Buffer.alloc(0);
  const decoded =
    contentType.type === JSON_TYPE
      ? decodeJson<Call>('mesos.v1.scheduler.Call', body.toString('utf8'), 'Call')
      : decodeProto<Call>('mesos.v1.scheduler.Call', body, 'Call');
  if (!decoded.ok) return sendError(reply, 400, decoded.error);
  const call = decoded.value;
  // A SUBSCRIBE that fails closes its connection, as the spec says.
  if (call.type === 'SUBSCRIBE') reply.header('connection', 'close');
  const invalid = schedulerCallError(call);
  if (invalid !== undefined) return sendError(reply, 400, VALIDATION_PREFIX + invalid);
  if (call.type === 'SUBSCRIBE') return subscribe(req, reply, call, options);
  // Of the other calls, only RECONCILE_OPERATIONS has a body to negotiate.
  if (call.type === 'RECONCILE_OPERATIONS' && negotiate(req.headers.accept, MESSAGE_TYPES) === undefined) {
    return sendError(reply, 406, notAcceptableMessage(MESSAGE_TYPES));
  }

  const input = schedulerCallFromWire(call);
  if (typeof input === 'string') return sendError(reply, 400, VALIDATION_PREFIX + input);
  const outcome = options.driver.input((cluster) => cluster.call(call.framework_id!.value, streamIdOf(req), input));
  if (!outcome.ok) return sendError(reply, STATUS_OF[outcome.error.code], outcome.error.message || undefined);
  return sendEmpty(reply, call.type === 'UPDATE_FRAMEWORK' ? 200 : 202);
}

function subscribe(req: FastifyRequest, reply: FastifyReply, call: Call, options: SchedulerRouteOptions): FastifyReply | undefined {
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 406, notAcceptableMessage(MESSAGE_TYPES));
  if (streamIdOf(req) !== undefined) {
    return sendError(reply, 400, "Subscribe calls should not include the 'Mesos-Stream-Id' header");
  }
  const subscription = subscriptionFromWire(call.subscribe!);
  if (typeof subscription === 'string') return sendError(reply, 400, VALIDATION_PREFIX + subscription);

  reply.hijack();
  const res = reply.raw;
  const stream = new HttpEventStream(res, eventEncoder(accepted), options.maxBufferedBytes, options.keepaliveMs);
  const { driver, connections } = options;
  const connectionId = connections.open(stream);
  const { streamId } = driver.input((cluster) => cluster.subscribe(connectionId, subscription));
  res.on('close', () => {
    connections.forget(connectionId);
    driver.input((cluster) => cluster.disconnect(connectionId));
  });
  stream.start({
    'content-type': accepted,
    'mesos-stream-id': streamId,
    'cluster-stream-id': streamId,
  });
  return undefined;
}

function eventEncoder(type: MessageType): (event: SchedulerEvent) => Uint8Array | string {
  return type === JSON_TYPE
    ? eventToJson
    : (event) => encodeProto('mesos.v1.scheduler.Event', eventToWire(event));
}
