/**
 * POST /api/v1 on an agent: the agent operator API. The same checks, in the
 * same order, as the master's (operator-route.ts): method, Content-Type,
 * body, call validation, Accept; then a read answers 200 from the agent's
 * own state in the read model, and a feature this agent lacks gets
 * upstream's answer for it (NOT_FOUND for files, NOT_IMPLEMENTED else).
 * With no agent process to ask (crashed), UNAVAILABLE.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentNodeView, ClusterView } from '../core/view.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { agentCallError, agentRequestFromWire } from '../wire/agent-in.js';
import { agentReadResponse, encodeAgentResponseJson, encodeAgentResponseProto } from '../wire/agent-out.js';
import type { mesos } from '../wire/generated/types.js';
import { decodeCallBody } from './call-body.js';
import { sendError } from './errors.js';
import { serveMethods } from './methods.js';
import { JSON_TYPE, MESSAGE_TYPES, negotiate } from './negotiate.js';
import { sendBody } from './read-routes.js';

/** The agent an app serves; undefined until the agent exists. */
export type AgentBinding = { readonly driver: ClusterDriver; readonly agentId: () => string | undefined };

/** Upstream's answer while its agent cannot serve its state. */
export const NOT_RECOVERED = 'Agent has not finished recovery';

/**
 * Renders from the agent's own state; undefined while there is no agent
 * process to ask: before it is added, and while it is crashed (until it
 * restarts from its checkpoint).
 */
export function readAgent<T>(binding: AgentBinding, render: (view: ClusterView, node: AgentNodeView) => T): T | undefined {
  const agentId = binding.agentId();
  return binding.driver.read((view) => {
    const node = agentId === undefined ? undefined : view.agentNode(agentId);
    return node === undefined || node.state === 'crashed' ? undefined : render(view, node);
  });
}

export function registerAgentOperatorRoute(app: FastifyInstance, prefix: string, binding: AgentBinding): void {
  serveMethods(app, `${prefix}/api/v1`, ['POST'], (req, reply) => handle(req, reply, binding));
}

function handle(req: FastifyRequest, reply: FastifyReply, binding: AgentBinding): FastifyReply {
  const call = decodeCallBody<mesos.v1.agent.Call>(req, reply, 'mesos.v1.agent.Call');
  if (call === undefined) return reply;
  const invalid = agentCallError(call);
  if (invalid !== undefined) return sendError(reply, 'AGENT_CALL_INVALID', invalid);
  const accepted = negotiate(req.headers.accept, MESSAGE_TYPES);
  if (accepted === undefined) return sendError(reply, 'NOT_ACCEPTABLE', MESSAGE_TYPES);
  const request = agentRequestFromWire(call);
  if (request.kind === 'unsupported') return request.answer === 'FILE_NOT_FOUND' ? sendError(reply, 'NOT_FOUND') : sendError(reply, 'NOT_IMPLEMENTED');
  const response = readAgent(binding, (view, node) => agentReadResponse(view, node, request.type));
  if (response === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
  const body = accepted === JSON_TYPE ? Buffer.from(encodeAgentResponseJson(response)) : Buffer.from(encodeAgentResponseProto(response));
  return sendBody(req, reply, accepted, body);
}
