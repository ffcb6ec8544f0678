/**
 * An agent's legacy read endpoints: `/state` (and `/state.json`), `/flags`
 * and `/containers`, and `/containers/cgroup` (the memory cgroup files of
 * its containers, a debug view of the model), rendered from the agent process' own state in the read
 * model. Like the master's, they read any method and honour `?jsonp=`.
 * Before the agent exists, and while it is crashed, they answer 503, as a
 * recovering agent does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentNodeView, ClusterView } from '../core/view.js';
import { renderAgentCgroups, renderAgentContainers, renderAgentFlags, renderAgentState } from '../wire/legacy/agent-state.js';
import { containerQuery, jsonpQuery } from '../wire/legacy/index.js';
import { NOT_RECOVERED, readAgent, type AgentBinding } from './agent-operator-route.js';
import { sendError } from './errors.js';
import { everyMethod, serveMethods } from './methods.js';
import { queryOf, sendJson } from './read-routes.js';

type Render = (view: ClusterView, node: AgentNodeView) => unknown;

export function registerAgentReadRoutes(app: FastifyInstance, prefix: string, binding: AgentBinding): void {
  const json = (render: Render) => (req: FastifyRequest, reply: FastifyReply) => {
    const query = queryOf(req, jsonpQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const body = readAgent(binding, req, render);
    if (body === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
    return sendJson(req, reply, body, query.value.jsonp);
  };
  for (const [path, render] of [
    ['/state', renderAgentState],
    ['/state.json', renderAgentState],
    ['/flags', renderAgentFlags],
    ['/containers', renderAgentContainers],
  ] as const) {
    serveMethods(app, `${prefix}${path}`, everyMethod(app), json(render));
  }
  serveMethods(app, `${prefix}/containers/cgroup`, everyMethod(app), (req, reply) => {
    const query = queryOf(req, containerQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const { container_id: containerId, jsonp } = query.value;
    const body = readAgent(binding, req, (_view, node) => renderAgentCgroups(node, containerId));
    if (body === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
    if (body === 'NOT_FOUND') return sendError(reply, 'TARGET_NOT_FOUND', `Container ${containerId} cannot be found`);
    return sendJson(req, reply, body, jsonp);
  });
}
