/**
 * POST /api/v1 on an agent: the agent operator API. The same checks, in the
 * same order, as the master's (operator-route.ts): method, Content-Type,
 * body, call validation, Accept; then a read answers 200 from the agent's
 * own state in the read model, and a feature this agent lacks gets
 * upstream's answer for it (NOT_IMPLEMENTED); LIST_FILES and READ_FILE read
 * the agent's sandboxes as its files API does (../files.ts),
 * after FORBIDDEN to a principal the ACLs refuse (container-acls.ts).
 * UPDATE_CONTAINER_MEMORY_LIMIT, a local extension, is an input of the core.
 * With no agent process to ask (crashed), UNAVAILABLE.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentNodeView, ClusterView } from '../../core/view.js';
import { NOT_RECOVERED, type AgentBinding } from './binding.js';
import { agentFilesSource } from './files-route.js';
import { filesCallResponse } from '../files.js';
import { agentCallError, agentRequestFromWire, type AgentRequest } from '../../wire/agent-in.js';
import { agentReadResponse, encodeAgentResponseJson, encodeAgentResponseProto } from '../../wire/agent-out.js';
import type { mesos } from '../../wire/generated/types.js';
import { decodeCallBody } from '../call-body.js';
import { sendCallError, sendError } from '../errors.js';
import { sendEmpty } from '../replies.js';
import { serveMethods } from '../methods.js';
import { JSON_TYPE, MESSAGE_TYPES, negotiate, RECORDIO_TYPE } from '../negotiate.js';
import { attachInput, containerCall } from './container-route.js';
import { isContainerCall } from '../../wire/agent-containers.js';
import { sendBody } from '../stream-body.js';
import { principalOf } from '../auth.js';
import { agentCallQuestions } from '../../wire/container-acls.js';
import { firstRefusal } from '../../wire/operator-in.js';

export type { AgentBinding } from './binding.js';
export { NOT_RECOVERED } from './binding.js';

/**
 * Renders from the agent's own state; undefined while there is no agent
 * process to ask: before it is added, and while it is crashed (until it
 * restarts from its checkpoint).
 */
export function readAgent<T>(
  binding: AgentBinding,
  req: FastifyRequest,
  render: (view: ClusterView, node: AgentNodeView) => T,
): T | undefined {
  const agentId = binding.agentId(req);
  return binding.driver.read((view) => {
    const node = agentId === undefined ? undefined : view.agentNode(agentId);
    return node === undefined || node.state === 'crashed' ? undefined : render(view, node);
  });
}

type MemoryLimitRequest = Extract<AgentRequest, { kind: 'memory-limit' }>;

export function registerAgentOperatorRoute(app: FastifyInstance, prefix: string, binding: AgentBinding): void {
  serveMethods(app, `${prefix}/api/v1`, ['POST'], (req, reply) => handle(req, reply, binding));
}

function handle(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
): FastifyReply | Promise<FastifyReply> | undefined {
  // The streaming media types belong to the container calls' streams only (wire-facts §7).
  const streamingIn = req.headers['content-type'] === RECORDIO_TYPE;
  if (streamingIn) return attachInput(req, reply, binding);
  if (req.headers['message-content-type'] !== undefined)
    return sendError(reply, 'CONTENT_TYPE_UNSUPPORTED', MESSAGE_TYPES);
  const call = decodeCallBody<mesos.v1.agent.Call>(req, reply, 'mesos.v1.agent.Call');
  if (call === undefined) return reply;
  const invalid = agentCallError(call);
  if (invalid !== undefined) return sendError(reply, 'AGENT_CALL_INVALID', invalid);
  if (call.type === 'ATTACH_CONTAINER_INPUT') return sendError(reply, 'CONTENT_TYPE_UNSUPPORTED', [RECORDIO_TYPE]);
  if (isContainerCall(call)) return containerCall(req, reply, binding, call);
  if (req.headers['message-accept'] !== undefined || (req.headers.accept ?? '').includes(RECORDIO_TYPE)) {
    return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  }
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  const refused = binding.driver.read((view) =>
    firstRefusal(view.authorizer, principalOf(req), agentCallQuestions(call)),
  );
  if (refused !== undefined) return sendError(reply, 'FORBIDDEN', refused);
  const request = agentRequestFromWire(call);
  if (request.kind === 'unsupported')
    return request.answer === 'FILE_NOT_FOUND' ? sendError(reply, 'NOT_FOUND') : sendError(reply, 'NOT_IMPLEMENTED');
  if (request.kind === 'memory-limit') return updateMemoryLimit(req, reply, binding, request);
  if (request.kind === 'files') {
    const answer = filesCallResponse(agentFilesSource(binding), req, request.call);
    if (!answer.ok) return answer.send(reply);
    return sendAgentResponse(req, reply, accepted, answer.value);
  }
  const response = readAgent(binding, req, (view, node) =>
    agentReadResponse(view, node, request.type, principalOf(req)),
  );
  if (response === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
  return sendAgentResponse(req, reply, accepted, response);
}

function sendAgentResponse(
  req: FastifyRequest,
  reply: FastifyReply,
  accepted: string,
  response: mesos.v1.agent.Response,
): FastifyReply {
  const body =
    accepted === JSON_TYPE
      ? Buffer.from(encodeAgentResponseJson(response))
      : Buffer.from(encodeAgentResponseProto(response));
  return sendBody(req, reply, accepted, body);
}

/**
 * UPDATE_CONTAINER_MEMORY_LIMIT: the core sets the container's memory
 * files; 200 with an empty body. A failure to do so (no memory isolation,
 * no delegated controller) is 500 with its reason in the log, as upstream's
 * agent logs it.
 */
function updateMemoryLimit(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
  request: MemoryLimitRequest,
): FastifyReply {
  const agentId = binding.agentId(req);
  if (agentId === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
  const { containerId, mib } = request;
  const outcome = binding.driver.input((c) => c.updateContainerMemoryLimit(agentId, containerId, mib));
  if (outcome.ok) return sendEmpty(reply, 200);
  if (outcome.error.code === 'FAILED')
    req.log.error(
      { agentId, containerId, reason: outcome.error.message },
      'Failed to update the memory limit of a container',
    );
  return sendCallError(reply, outcome.error, { frameworkId: '', streamId: undefined });
}
