/**
 * POST {agent}/api/v1/executor: the executor HTTP API. Checks in
 * upstream's order, each answered from the catalogue (errors.ts):
 *
 *   (before all, with executor authentication: no good bearer token     401, executor-token.ts)
 *   method not POST                        METHOD_NOT_ALLOWED
 *   Content-Type missing / other           CONTENT_TYPE_MISSING / _UNSUPPORTED
 *   body not an executor Call              BODY_UNDECODABLE (required ids missing too)
 *   Call fails validation                  EXECUTOR_CALL_INVALID
 *   HEARTBEAT                              202 at once, before any lookup
 *   SUBSCRIBE: Accept unsatisfiable        NOT_ACCEPTABLE
 *   UNKNOWN                                NOT_IMPLEMENTED
 *   then the agent: down (503), framework unknown (400), executor unknown
 *   (400), a token made for another executor or container (403), not
 *   subscribed yet (403); else 202, and for SUBSCRIBE a 200
 *   stream of RecordIO records, with no stream id header.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutorAuthorizer, ExecutorEvent } from '../../core/model/executor-api.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { executorCallError, executorCallFromWire } from '../../wire/executor-in.js';
import { executorEventToJson, executorEventToProto } from '../../wire/executor-out.js';
import type { mesos } from '../../wire/generated/types.js';
import { sendUnauthorized } from '../auth.js';
import { closing, decodeCallBody } from '../call-body.js';
import { claimsAuthorizer, type ExecutorTokens } from './executor-token.js';
import type { Connections } from '../connections.js';
import { agentRefusal, send, sendError } from '../errors.js';
import { HttpEventStream } from '../event-stream.js';
import { serveMethods } from '../methods.js';
import { JSON_TYPE, MESSAGE_TYPES, negotiate } from '../negotiate.js';
import { sendEmpty } from '../replies.js';
import type { StreamBudget } from '../stream-budget.js';

export interface ExecutorRouteOptions {
  readonly driver: ClusterDriver;
  /** The agent a request is for; undefined until it exists. */
  readonly agentId: (req: FastifyRequest) => string | undefined;
  /** Shared with the master's server: the core addresses every stream by one id space. */
  readonly connections: Connections;
  readonly budget: StreamBudget;
  /**
   * `--authenticate-http-executors`: every request needs a bearer token
   * (401 without a good one), made for the executor the call names (403).
   */
  readonly tokens?: ExecutorTokens;
}

export function registerExecutorRoute(app: FastifyInstance, prefix: string, options: ExecutorRouteOptions): void {
  serveMethods(app, `${prefix}/api/v1/executor`, ['POST'], async (req, reply) => {
    if (options.tokens === undefined) return handle(req, reply, options, undefined);
    // Authentication comes before every other check of the request, as upstream's.
    const authenticated = await options.tokens.authenticate(req.headers.authorization);
    if (!authenticated.ok) return sendUnauthorized(reply, authenticated);
    return handle(req, reply, options, claimsAuthorizer(authenticated.claims));
  });
}

function handle(
  req: FastifyRequest,
  reply: FastifyReply,
  options: ExecutorRouteOptions,
  authorize: ExecutorAuthorizer | undefined,
): FastifyReply | undefined {
  const call = decodeCallBody<mesos.v1.executor.Call>(req, reply, 'mesos.v1.executor.Call');
  if (call === undefined) return reply;
  if (call.type === 'SUBSCRIBE') closing(reply);
  const invalid = executorCallError(call);
  if (invalid !== undefined) return sendError(reply, 'EXECUTOR_CALL_INVALID', invalid);
  if (call.type === 'HEARTBEAT') return sendEmpty(reply, 202);
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (call.type === 'SUBSCRIBE' && accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  if (call.type === 'UNKNOWN') return sendError(reply, 'NOT_IMPLEMENTED');
  const agentId = options.agentId(req);
  if (agentId === undefined) return sendError(reply, 'UNAVAILABLE', 'Agent has not finished recovery');
  const envelope = executorCallFromWire(call);
  if (call.type !== 'SUBSCRIBE') {
    const outcome = options.driver.input((cluster) => cluster.executorCall(agentId, envelope, authorize));
    return outcome.ok ? sendEmpty(reply, 202) : send(reply, agentRefusal(outcome.error));
  }

  // The stream exists before the core answers: SUBSCRIBED is in the outbox that input fills.
  const { driver, connections, budget } = options;
  const encode = accepted === JSON_TYPE ? executorEventToJson : executorEventToProto;
  // No keepalive of our own: the agent's HEARTBEAT events follow upstream's 30 minutes, and older executor libraries know no HEARTBEAT.
  const stream = new HttpEventStream<ExecutorEvent>(reply.raw, encode, { budget, keepaliveMs: 0 });
  const connectionId = connections.open(stream);
  stream.connectionId = connectionId;
  const outcome = driver.input((cluster) => cluster.executorSubscribe(connectionId, agentId, envelope, authorize));
  if (!outcome.ok) {
    connections.forget(connectionId);
    return send(reply, agentRefusal(outcome.error));
  }
  reply.hijack();
  reply.raw.on('close', () => {
    connections.forget(connectionId);
    if (driver.failure === undefined) driver.input((cluster) => cluster.disconnect(connectionId));
  });
  stream.start({ 'content-type': accepted! });
  return undefined;
}
