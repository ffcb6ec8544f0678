/**
 * POST /api/v1 (and /master/api/v1): the master operator API. Decode, check
 * in upstream's order, read the view or hand the call to the core, encode.
 * Holds no cluster logic. The checks and their answers (errors.ts):
 *
 *   method not POST                    METHOD_NOT_ALLOWED
 *   Content-Type missing / other       CONTENT_TYPE_MISSING / _UNSUPPORTED
 *   body not JSON / not a Call         BODY_UNDECODABLE
 *   Call fails validation              OPERATOR_CALL_INVALID
 *   Accept unsatisfiable (every call)  NOT_ACCEPTABLE
 *   then per call: a read answers 200 with its Response; a core call 200
 *   (empty, or its Response) or the core's refusal; SUBSCRIBE a stream
 *   (TOO_MANY_SUBSCRIPTIONS past the cap); a feature this master lacks
 *   upstream's answer for it (NOT_IMPLEMENTED, or NOT_FOUND for files),
 *   after FORBIDDEN to a principal the ACLs refuse the call
 *
 * The operator event stream is RecordIO in the negotiated encoding, with no
 * stream id header; its heartbeats are the core's (every interval, the
 * first an interval after SUBSCRIBED), with no transport keepalive of its own.
 */
import { filesCallResponse } from '../files.js';
import { masterFilesSource } from './files-route.js';
import { principalOf } from '../auth.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorEvent } from '../../core/model/operator-types.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { mesos } from '../../wire/generated/types.js';
import {
  firstRefusal,
  operatorCallError,
  operatorRequestFromWire,
  unsupportedQuestions,
} from '../../wire/operator-in.js';
import {
  encodeEventJson,
  encodeEventProto,
  encodeResponseJson,
  encodeResponseProto,
  operatorEventToWire,
  readResponse,
  valueResponse,
} from '../../wire/operator-out.js';
import { closing, decodeCallBody } from '../call-body.js';
import type { Connections } from '../connections.js';
import { sendCallError, sendError } from '../errors.js';
import { HttpEventStream } from '../event-stream.js';
import { serveMethods } from '../methods.js';
import { JSON_TYPE, MESSAGE_TYPES, negotiate, type MessageType } from '../negotiate.js';
import { viewerOf } from '../../wire/view-filter.js';
import { sendBody } from '../stream-body.js';
import { sendStreamed } from '../stream-body.js';
import { snapshotGetAgents, snapshotGetState, snapshotGetTasks } from '../../wire/operator-stream.js';
import { sendEmpty } from '../replies.js';
import { CAPACITY_RETRY_AFTER_SECONDS } from './scheduler-route.js';
import type { StreamBudget } from '../stream-budget.js';

type Call = mesos.v1.master.Call;
type Response = mesos.v1.master.Response;

export interface OperatorRouteOptions {
  readonly driver: ClusterDriver;
  readonly connections: Connections;
  readonly budget: StreamBudget;
  /** Open event streams at most, scheduler and operator streams together. */
  readonly maxSubscriptions: number;
}

export function registerOperatorRoute(app: FastifyInstance, prefix: string, options: OperatorRouteOptions): void {
  serveMethods(app, `${prefix}/api/v1`, ['POST'], (req, reply) => handle(req, reply, options));
}

function handle(req: FastifyRequest, reply: FastifyReply, options: OperatorRouteOptions): FastifyReply | undefined {
  const call = decodeCallBody<Call>(req, reply, 'mesos.v1.master.Call');
  if (call === undefined) return reply;
  if (call.type === 'SUBSCRIBE') closing(reply);
  const invalid = operatorCallError(call);
  if (invalid !== undefined) return sendError(reply, 'OPERATOR_CALL_INVALID', invalid);
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  const request = operatorRequestFromWire(call);
  if (typeof request === 'string') return sendError(reply, 'OPERATOR_CALL_INVALID', request);
  const { driver } = options;
  switch (request.kind) {
    case 'read': {
      const principal = principalOf(req);
      if (request.type === 'GET_STATE' || request.type === 'GET_TASKS' || request.type === 'GET_AGENTS')
        return sendSnapshot(req, reply, accepted, options, request.type, principal);
      const response = driver.read((view) => readResponse(view, request.type, viewerOf(view.authorizer, principal)));
      if (response !== 'FORBIDDEN') return sendResponse(req, reply, accepted, response);
      return sendError(
        reply,
        'FORBIDDEN',
        driver.read((view) => view.authorizer.refusal('view_flags', principal)) ?? '',
      );
    }
    case 'core': {
      const principal = principalOf(req);
      const outcome = driver.input((cluster) => cluster.operator(request.call, principal));
      if (!outcome.ok) return sendCallError(reply, outcome.error, { frameworkId: '', streamId: undefined });
      return outcome.value === undefined
        ? sendEmpty(reply, 200)
        : sendResponse(req, reply, accepted, valueResponse(outcome.value));
    }
    case 'unsupported': {
      const questions = unsupportedQuestions(call);
      const refused = driver.read((view) => firstRefusal(view.authorizer, principalOf(req), questions));
      if (refused !== undefined) return sendError(reply, 'FORBIDDEN', refused);
      return request.answer === 'FILE_NOT_FOUND' ? sendError(reply, 'NOT_FOUND') : sendError(reply, 'NOT_IMPLEMENTED');
    }
    case 'files': {
      const answer = filesCallResponse(masterFilesSource(driver), req, request.call);
      return answer.ok ? sendResponse(req, reply, accepted, answer.value) : answer.send(reply);
    }
    case 'subscribe':
      return subscribe(reply, accepted, options, principalOf(req));
  }
}

function sendResponse(req: FastifyRequest, reply: FastifyReply, type: MessageType, response: Response): FastifyReply {
  const body =
    type === JSON_TYPE ? Buffer.from(encodeResponseJson(response)) : Buffer.from(encodeResponseProto(response));
  return sendBody(req, reply, type, body);
}

const SNAPSHOTS = { GET_STATE: snapshotGetState, GET_TASKS: snapshotGetTasks, GET_AGENTS: snapshotGetAgents } as const;

/** GET_STATE, GET_TASKS and GET_AGENTS: read at once, written in slices (stream-body.ts). */
function sendSnapshot(
  req: FastifyRequest,
  reply: FastifyReply,
  type: MessageType,
  options: OperatorRouteOptions,
  call: keyof typeof SNAPSHOTS,
  principal: string | undefined,
): FastifyReply {
  const snapshot = options.driver.read((view) => SNAPSHOTS[call](view, viewerOf(view.authorizer, principal)));
  return sendStreamed(req, reply, { type, pieces: type === JSON_TYPE ? snapshot.json() : snapshot.proto() });
}

function subscribe(
  reply: FastifyReply,
  accepted: MessageType,
  options: OperatorRouteOptions,
  principal: string | undefined,
): FastifyReply | undefined {
  const { driver, connections, budget, maxSubscriptions } = options;
  if (connections.size >= maxSubscriptions) {
    return sendError(
      reply.header('retry-after', String(CAPACITY_RETRY_AFTER_SECONDS)),
      'TOO_MANY_SUBSCRIPTIONS',
      maxSubscriptions,
    );
  }
  reply.hijack();
  const res = reply.raw;
  // Events are rendered when delivered, at the end of the input that made
  // them, with what the subscriber may view; one it may not view is skipped.
  const viewer = viewerOf(driver.cluster.view.authorizer, principal);
  const encode = (event: OperatorEvent) => {
    const wire = operatorEventToWire(driver.cluster.view, event, viewer);
    if (wire === undefined) return undefined;
    return accepted === JSON_TYPE ? encodeEventJson(wire) : encodeEventProto(wire);
  };
  const stream = new HttpEventStream<OperatorEvent>(res, encode, { budget, keepaliveMs: 0 });
  const connectionId = connections.open(stream);
  stream.connectionId = connectionId;
  driver.input((cluster) => cluster.subscribeOperator(connectionId));
  res.on('close', () => {
    connections.forget(connectionId);
    if (driver.failure === undefined) driver.input((cluster) => cluster.disconnect(connectionId));
  });
  stream.start({ 'content-type': accepted });
  return undefined;
}
