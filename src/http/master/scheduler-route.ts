/**
 * POST /api/v1/scheduler: decode, check in the upstream order, hand to the
 * core, encode. Holds no cluster logic. The checks and their answers, in
 * order, are the entries of `HTTP_ERRORS` (errors.ts):
 *
 *   method not POST                    METHOD_NOT_ALLOWED
 *   Content-Type missing / other       CONTENT_TYPE_MISSING / _UNSUPPORTED
 *   body not JSON / not a Call         BODY_UNDECODABLE
 *   (before all: no valid credentials  UNAUTHORIZED, from auth.ts, with --credentials)
 *   Call fails validation              CALL_INVALID (for a SUBSCRIBE, also a FrameworkInfo
 *                                      principal other than the authenticated one)
 *   SUBSCRIBE: Accept unsatisfiable    NOT_ACCEPTABLE
 *   SUBSCRIBE with a stream id header  SUBSCRIBE_WITH_STREAM_ID
 *   SUBSCRIBE over a capacity cap      TOO_MANY_SUBSCRIPTIONS / _FRAMEWORKS
 *   then the master: unknown framework, not subscribed, stream id missing
 *   or wrong, UNKNOWN call, refused call (`sendCallError`), else 202 (200)
 *
 * A refused SUBSCRIBE closes its connection, as upstream closes a failed
 * subscription's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SchedulerEvent, Subscription } from '../../core/model/types.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { Connections } from '../connections.js';
import { principalMismatch } from '../../core/model/authz.js';
import { principalOf } from '../auth.js';
import type { mesos } from '../../wire/generated/types.js';
import { encodeProto } from '../../wire/proto-codec.js';
import { schedulerCallFromWire, subscriptionFromWire } from '../../wire/scheduler-in.js';
import { eventToJson, eventToWire } from '../../wire/scheduler-out.js';
import { schedulerCallError } from '../../wire/scheduler-validate.js';
import { HttpEventStream } from '../event-stream.js';
import type { StreamBudget } from '../stream-budget.js';
import { sendCallError, sendError } from '../errors.js';
import { JSON_TYPE, MESSAGE_TYPES, negotiate, type MessageType } from '../negotiate.js';
import { closing, decodeCallBody } from '../call-body.js';
import { serveMethods } from '../methods.js';
import { noteRefusedAcknowledge } from './refused-acknowledge.js';
import { sendEmpty } from '../replies.js';

type Call = mesos.v1.scheduler.Call;

const STREAM_ID_HEADERS = ['mesos-stream-id', 'cluster-stream-id'] as const;

export interface SchedulerRouteOptions {
  readonly driver: ClusterDriver;
  readonly connections: Connections;
  /** The bytes waiting on the event streams, per stream and in all. */
  readonly budget: StreamBudget;
  /** Open event streams at most; a SUBSCRIBE past it is refused. */
  readonly maxSubscriptions: number;
  /** Registered frameworks (connected or within their failover timeout) at most. */
  readonly maxFrameworks: number;
  /** Wall-clock idle time after which a stream writes a HEARTBEAT itself. */
  readonly keepaliveMs?: number;
}

/** Seconds a refused subscriber is told to wait: streams come and go within seconds. */
export const CAPACITY_RETRY_AFTER_SECONDS = 5;

export function registerSchedulerRoute(app: FastifyInstance, prefix: string, options: SchedulerRouteOptions): void {
  serveMethods(app, `${prefix}/api/v1/scheduler`, ['POST'], (req, reply) => handle(req, reply, options));
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
  const call = decodeCallBody<Call>(req, reply, 'mesos.v1.scheduler.Call');
  if (call === undefined) {
    noteRefusedAcknowledge(options.driver, req, undefined);
    return reply;
  }
  // From here on, only a SUBSCRIBE's refusals close.
  if (call.type === 'SUBSCRIBE') closing(reply);
  const invalid = schedulerCallError(call) ?? declaredPrincipalError(principalOf(req), call);
  if (invalid !== undefined) {
    noteRefusedAcknowledge(options.driver, req, call);
    return sendError(reply, 'CALL_INVALID', invalid);
  }
  if (call.type === 'SUBSCRIBE') return subscribe(req, reply, call, options);
  // Of the other calls, only RECONCILE_OPERATIONS has a body to negotiate.
  if (call.type === 'RECONCILE_OPERATIONS' && negotiate(req.headers.accept, MESSAGE_TYPES) === undefined) {
    return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  }

  const input = schedulerCallFromWire(call);
  if (typeof input === 'string') return sendError(reply, 'CALL_INVALID', input);
  const frameworkId = call.framework_id!.value;
  const streamId = streamIdOf(req);
  const principal = principalOf(req);
  const outcome = options.driver.input((cluster) => cluster.call(frameworkId, streamId, input, principal));
  if (!outcome.ok) return sendCallError(reply, outcome.error, { frameworkId, streamId });
  return sendEmpty(reply, call.type === 'UPDATE_FRAMEWORK' ? 200 : 202);
}

function subscribe(
  req: FastifyRequest,
  reply: FastifyReply,
  call: Call,
  options: SchedulerRouteOptions,
): FastifyReply | undefined {
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  if (streamIdOf(req) !== undefined) return sendError(reply, 'SUBSCRIBE_WITH_STREAM_ID');
  const subscription = subscriptionFromWire(call.subscribe!);
  if (typeof subscription === 'string') return sendError(reply, 'CALL_INVALID', subscription);
  const full = capacityRefusal(subscription, options);
  if (full !== undefined) {
    return sendError(reply.header('retry-after', String(CAPACITY_RETRY_AFTER_SECONDS)), full.code, full.limit);
  }

  reply.hijack();
  const res = reply.raw;
  const { driver, connections, budget, keepaliveMs } = options;
  const stream = new HttpEventStream(res, eventEncoder(accepted), {
    budget,
    ...(keepaliveMs === undefined ? {} : { keepaliveMs }),
  });
  const connectionId = connections.open(stream);
  stream.connectionId = connectionId;
  const principal = principalOf(req);
  res.on('close', () => {
    connections.forget(connectionId);
    // A stopped cluster takes no more inputs; its listeners are closing anyway.
    if (driver.failure === undefined) driver.input((cluster) => cluster.disconnect(connectionId));
  });
  // The headers and SUBSCRIBED go out before the allocation the subscription starts runs over every agent.
  const started = ({ streamId, frameworkId }: { streamId: string; frameworkId: string }): void => {
    // A subscription the core refused has no framework.
    stream.frameworkId = frameworkId === '' ? undefined : frameworkId;
    stream.start({
      'content-type': accepted,
      'mesos-stream-id': streamId,
      'cluster-stream-id': streamId,
    });
  };
  driver.input((cluster) => cluster.subscribe(connectionId, subscription, principal), started);
  return undefined;
}

/**
 * Upstream's validation of a SUBSCRIBE with authentication on: the
 * FrameworkInfo may leave its principal out (the master sets it to the
 * authenticated one), but may not declare another.
 */
function declaredPrincipalError(principal: string | undefined, call: Call): string | undefined {
  const declared = call.subscribe?.framework_info?.principal;
  if (
    call.type !== 'SUBSCRIBE' ||
    principal === undefined ||
    declared === undefined ||
    declared === null ||
    declared === principal
  ) {
    return undefined;
  }
  return principalMismatch(principal, declared);
}

/**
 * Whether a SUBSCRIBE would pass a cap. A failover onto a framework's open
 * stream replaces that stream, and a re-subscription adds no framework, so
 * neither is refused for the cap it does not grow. The frameworks are
 * counted here, at the edge: the core keeps them but has no cap of its own.
 */
function capacityRefusal(
  subscription: Subscription,
  options: SchedulerRouteOptions,
): { code: 'TOO_MANY_SUBSCRIPTIONS' | 'TOO_MANY_FRAMEWORKS'; limit: number } | undefined {
  const { driver, connections, maxSubscriptions, maxFrameworks } = options;
  const requested = subscription.info.id;
  return driver.read((view) => {
    const existing = requested === undefined ? undefined : view.framework(requested);
    if (existing?.state !== 'subscribed' && connections.size >= maxSubscriptions) {
      return { code: 'TOO_MANY_SUBSCRIPTIONS', limit: maxSubscriptions };
    }
    if (existing !== undefined) return undefined;
    let registered = 0;
    for (const _ of view.frameworks())
      if (++registered >= maxFrameworks) return { code: 'TOO_MANY_FRAMEWORKS', limit: maxFrameworks };
    return undefined;
  });
}

function eventEncoder(type: MessageType): (event: SchedulerEvent) => Uint8Array | string {
  return type === JSON_TYPE ? eventToJson : (event) => encodeProto('mesos.v1.scheduler.Event', eventToWire(event));
}
