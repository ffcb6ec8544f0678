/**
 * The container calls of the agent operator API (`POST {agent}/api/v1`):
 * task exec sessions and the calls around them. Decoding and the checks of
 * the agent route (agent/operator-route.ts) come first; then:
 *
 *   LAUNCH_NESTED_CONTAINER_SESSION  `Accept` must allow application/recordio (406); 200 and a
 *                                    RecordIO stream of ProcessIO DATA records (`Message-Accept`
 *                                    picks their encoding), ending when the command does
 *   LAUNCH_NESTED_CONTAINER          200 once launched (its output goes nowhere)
 *   LAUNCH_CONTAINER                 a nested container as LAUNCH_NESTED_CONTAINER: 200 once launched,
 *                                    202 if it runs already (upstream's ALREADY_LAUNCHED), 400 for a
 *                                    parent that does not exist; a standalone container, resources of a
 *                                    nested one, a ContainerInfo other than MESOS: 400 with the reason
 *   ATTACH_CONTAINER_OUTPUT          a stream of the container's output (attach-output.ts)
 *   ATTACH_CONTAINER_INPUT           `Content-Type: application/recordio` with `Message-Content-Type`:
 *                                    a CONTAINER_ID record, then PROCESS_IO records (STDIN data;
 *                                    an empty one ends the input; heartbeats); 200 when the request ends
 *   WAIT_CONTAINER (WAIT_NESTED_…)   200 with the wait(2) status once the container has ended
 *   KILL_CONTAINER, REMOVE_CONTAINER 200
 *
 * An unknown container is 404 `Container <id> cannot be found`; an agent
 * process that is down, 503; a principal the ACLs refuse, 403 with the
 * reason, before anything runs (container-acls.ts).
 */
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ContainerTermination, ProcessOutput } from '../../core/model/executor-api.js';
import {
  containerRequestFromWire,
  inputRecordOf,
  processIoToJson,
  processIoToProto,
  waitResponse,
  type ContainerRequest,
} from '../../wire/agent-containers.js';
import { encodeAgentResponseJson, encodeAgentResponseProto } from '../../wire/agent-out.js';
import type { mesos } from '../../wire/generated/types.js';
import { decodeJson } from '../../wire/json.js';
import { decodeProto } from '../../wire/proto-codec.js';
import { RecordReader } from '../../wire/recordio.js';
import type { AgentBinding } from './binding.js';
import { agentRefusal, httpError, send, sendError, type HttpError } from '../errors.js';
import { HttpEventStream } from '../event-stream.js';
import {
  accepts,
  contentTypeOf,
  JSON_TYPE,
  MESSAGE_TYPES,
  negotiate,
  negotiateAgentAnswer,
  RECORDIO_TYPE,
  type MessageType,
} from '../negotiate.js';
import { sendBody } from '../stream-body.js';
import { sendEmpty } from '../replies.js';
import { principalOf } from '../auth.js';
import { attachInputRefusal, containerRefusal } from '../../wire/container-acls.js';
import { attachOutput } from './attach-output.js';

type Call = mesos.v1.agent.Call;

/** Serves a container call (`isContainerCall`); undefined once a session's stream has taken the reply over. */
export function containerCall(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
  call: Call,
): FastifyReply | Promise<FastifyReply> | undefined {
  const request = containerRequestFromWire(call);
  if (request === undefined) throw new Error(`containerCall: ${call.type} is not a container call`);
  if (typeof request === 'string') return sendError(reply, 'AGENT_CALL_INVALID', request);
  const agentId = binding.agentId(req);
  if (agentId === undefined || binding.executors === undefined)
    return sendError(reply, 'UNAVAILABLE', 'Agent has not finished recovery');
  const unstreamable = streamAskedOf(req, request, call);
  if (unstreamable !== undefined) return sendError(reply, 'STREAMING_NOT_ACCEPTABLE', unstreamable);
  const refused = binding.driver.read((view) => containerRefusal(view, agentId, request, principalOf(req)));
  if (refused !== undefined) return sendError(reply, 'FORBIDDEN', refused);
  if (request.kind === 'refused') return sendError(reply, 'CALL_REFUSED', request.reason);
  if (request.kind === 'attach-output') return attachOutput(req, reply, binding, agentId, request);
  if (request.kind === 'launch' && request.session) return launchSession(req, reply, binding, agentId, request);
  if (request.kind === 'launch' && request.v1 === true) return launchContainer(reply, binding, agentId, request);
  if (request.kind === 'wait') return wait(req, reply, binding, agentId, request);
  const { driver } = binding;
  const outcome = driver.input((c) => {
    switch (request.kind) {
      case 'launch':
        return c.launchNestedContainer(agentId, request.launch);
      case 'kill':
        return c.killContainer(agentId, request.containerId, request.signal);
      case 'remove':
        return c.removeContainer(agentId, request.containerId);
    }
  });
  return outcome.ok ? sendEmpty(reply, 200) : send(reply, agentRefusal(outcome.error));
}

/**
 * Upstream's agent negotiation for a call whose answer is no stream (a
 * launch, a kill, a removal, a refusal): an `Accept` or `Message-Accept`
 * it cannot answer, or a stream asked of it, is 406 with upstream's words.
 * WAIT_CONTAINER negotiates its Response itself.
 */
function streamAskedOf(req: FastifyRequest, request: ContainerRequest, call: Call): string | undefined {
  const streams = request.kind === 'attach-output' || (request.kind === 'launch' && request.session);
  if (streams || request.kind === 'wait') return undefined;
  const types = negotiateAgentAnswer(req.headers.accept, req.headers['message-accept']);
  if (typeof types === 'string') return types;
  return types.records === undefined ? undefined : `Streaming response is not supported for ${call.type} call`;
}

/**
 * LAUNCH_CONTAINER of a nested container: 202 for one that runs already,
 * whatever it was launched with (upstream's containerizer answers
 * ALREADY_LAUNCHED for a ContainerID it has); a parent that is no live
 * executor's container fails the launch, which upstream answers 400.
 */
function launchContainer(
  reply: FastifyReply,
  binding: AgentBinding,
  agentId: string,
  request: Extract<ContainerRequest, { kind: 'launch' }>,
): FastifyReply {
  const { driver } = binding;
  const { containerId, parentId } = request.launch;
  const running = driver.read((v) => v.nestedContainer(agentId, containerId));
  if (running !== undefined && running.termination === undefined) return sendEmpty(reply, 202);
  const outcome = driver.input((c) => c.launchNestedContainer(agentId, request.launch));
  if (outcome.ok) return sendEmpty(reply, 200);
  if (outcome.error.code === 'NOT_FOUND')
    return sendError(reply, 'CALL_REFUSED', `Parent container ${parentId} does not exist`);
  return send(reply, agentRefusal(outcome.error));
}

function launchSession(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
  agentId: string,
  request: Extract<ContainerRequest, { kind: 'launch' }>,
): FastifyReply | undefined {
  if (!accepts(req.headers.accept, RECORDIO_TYPE)) return sendError(reply, 'NOT_ACCEPTABLE', [RECORDIO_TYPE]);
  const messageType = negotiate(req.headers['message-accept'], MESSAGE_TYPES);
  if (messageType === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  const { driver, executors } = binding;
  const encode = messageType === JSON_TYPE ? processIoToJson : processIoToProto;
  const stream = new HttpEventStream<ProcessOutput>(reply.raw, encode, { budget: executors!.budget, keepaliveMs: 0 });
  const connectionId = executors!.connections.open(stream);
  // Into an engine task, the session goes through the engine, as upstream's helper does.
  const { parentId } = request.launch;
  const engine = executors!.engine;
  const engineContainer =
    engine === undefined
      ? undefined
      : driver.read((v) => v.engineContainers().find((c) => c.agentId === agentId && c.containerId === parentId));
  const launch = { ...request.launch, ...(engineContainer === undefined ? {} : { external: true }) };
  const outcome = driver.input((c) => c.launchNestedContainer(agentId, launch, connectionId));
  if (!outcome.ok) {
    executors!.connections.forget(connectionId);
    return send(reply, agentRefusal(outcome.error));
  }
  reply.hijack();
  reply.raw.on('close', () => {
    executors!.connections.forget(connectionId);
    engine?.abandon(launch.containerId);
    if (driver.failure === undefined) driver.input((c) => c.disconnect(connectionId));
  });
  stream.start({ 'content-type': RECORDIO_TYPE, 'message-content-type': messageType });
  if (engineContainer !== undefined) {
    const { containerId, argv, tty } = launch;
    void engine!.run({ agentId, containerId, engineContainer: engineContainer.name, argv, tty }, (piece) =>
      stream.send(piece),
    );
  }
  return undefined;
}

/** WAIT_CONTAINER: answered at once for an ended container, else when it ends (the request waits). */
async function wait(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
  agentId: string,
  request: Extract<ContainerRequest, { kind: 'wait' }>,
): Promise<FastifyReply> {
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  const { driver, executors } = binding;
  let answer!: (termination: ContainerTermination | undefined) => void;
  const ended = new Promise<ContainerTermination | undefined>((resolve) => (answer = resolve));
  const connectionId = executors!.connections.open({
    send: (t: ContainerTermination) => answer(t),
    close: () => answer(undefined),
  });
  const outcome = driver.input((c) => c.waitContainer(connectionId, agentId, request.containerId));
  if (!outcome.ok || outcome.value !== undefined) {
    executors!.connections.forget(connectionId);
    return outcome.ok
      ? sendWait(req, reply, accepted, outcome.value!, request.nested)
      : send(reply, agentRefusal(outcome.error));
  }
  // The response's close: the client went away before the answer (a request's own close comes when its body is read).
  reply.raw.once('close', () => {
    executors!.connections.forget(connectionId);
    answer(undefined);
    if (driver.failure === undefined) driver.input((c) => c.disconnect(connectionId));
  });
  const termination = await ended;
  executors!.connections.forget(connectionId);
  return termination === undefined
    ? sendError(reply, 'UNAVAILABLE', 'Agent has not finished recovery')
    : sendWait(req, reply, accepted, termination, request.nested);
}

function sendWait(
  req: FastifyRequest,
  reply: FastifyReply,
  accepted: MessageType,
  termination: ContainerTermination,
  nested: boolean,
): FastifyReply {
  const response = waitResponse(termination, nested);
  const body =
    accepted === JSON_TYPE
      ? Buffer.from(encodeAgentResponseJson(response))
      : Buffer.from(encodeAgentResponseProto(response));
  return sendBody(req, reply, accepted, body);
}

/**
 * ATTACH_CONTAINER_INPUT: a RecordIO request body read as it arrives, each
 * record an agent Call in `Message-Content-Type`. The first names the
 * container; the standard input that follows reaches it at once.
 */
export async function attachInput(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
): Promise<FastifyReply> {
  const messageType = contentTypeOf(String(req.headers['message-content-type'] ?? ''), MESSAGE_TYPES);
  if (messageType === undefined) return sendError(reply, 'CONTENT_TYPE_UNSUPPORTED', MESSAGE_TYPES);
  const agentId = binding.agentId(req);
  if (agentId === undefined) return sendError(reply, 'UNAVAILABLE', 'Agent has not finished recovery');
  const reader = new RecordReader();
  let containerId: string | undefined;
  for await (const chunk of req.body as Readable) {
    const records = readRecords(reader, chunk as Buffer);
    if (typeof records === 'string') return refuseInput(req, reply, httpError('BODY_UNDECODABLE', records));
    for (const record of records) {
      const decoded =
        messageType === JSON_TYPE
          ? decodeJson<Call>('mesos.v1.agent.Call', record.toString('utf8'), 'Call')
          : decodeProto<Call>('mesos.v1.agent.Call', record, 'Call');
      if (!decoded.ok) return refuseInput(req, reply, httpError('BODY_UNDECODABLE', decoded.error));
      const input = inputRecordOf(decoded.value);
      if (input.kind === 'invalid') return refuseInput(req, reply, httpError('AGENT_CALL_INVALID', input.reason));
      if (containerId === undefined && input.kind !== 'container') {
        return refuseInput(
          req,
          reply,
          httpError('AGENT_CALL_INVALID', "Expecting the first record to be of type 'CONTAINER_ID'"),
        );
      }
      if (input.kind === 'control') continue;
      if (input.kind === 'container' && containerId === undefined) {
        const refused = binding.driver.read((view) =>
          attachInputRefusal(view, agentId, input.containerId, principalOf(req)),
        );
        if (refused !== undefined) return refuseInput(req, reply, httpError('FORBIDDEN', refused));
        containerId = input.containerId;
      }
      const id = containerId!;
      const data = input.kind === 'stdin' ? input.data : input.kind === 'end' ? undefined : '';
      const engine = binding.executors?.engine;
      if (engine?.has(id) === true) {
        if (input.kind !== 'container') engine.input(id, data);
        continue;
      }
      const outcome = binding.driver.input((c) => c.containerInput(agentId, id, data));
      if (!outcome.ok) return refuseInput(req, reply, agentRefusal(outcome.error));
    }
  }
  return sendEmpty(reply, 200);
}

/** The records a chunk of an input stream completes, or why its RecordIO framing is broken (a length prefix that is none). */
function readRecords(reader: RecordReader, chunk: Buffer): Buffer[] | string {
  try {
    return reader.push(chunk);
  } catch (error) {
    return `Failed to decode the input stream: ${(error as Error).message}`;
  }
}

/** A refusal in the middle of an input stream: the answer, then the connection closes (the rest is not read). */
function refuseInput(req: FastifyRequest, reply: FastifyReply, error: HttpError): FastifyReply {
  (req.body as Readable).resume();
  return send(reply.header('connection', 'close'), error);
}
