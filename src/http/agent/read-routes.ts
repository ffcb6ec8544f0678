/**
 * An agent's legacy read endpoints: `/state` (and `/state.json`), `/flags`
 * and `/containers`, and `/containers/cgroup` (the memory cgroup files of
 * its containers, a debug view of the model), rendered from the agent process' own state in the read
 * model. Like the master's, they read any method and honour `?jsonp=`.
 * Before the agent exists, and while it is crashed, they answer 503, as a
 * recovering agent does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentNodeView, ClusterView } from '../../core/view.js';
import {
  renderAgentCgroups,
  renderAgentContainers,
  renderAgentFlags,
  renderAgentState,
} from '../../wire/v0/agent-state.js';
import { containerQuery, jsonpQuery } from '../../wire/v0/index.js';
import { NOT_RECOVERED, readAgent, type AgentBinding } from './operator-route.js';
import { sendError } from '../errors.js';
import { everyMethod, serveMethods } from '../methods.js';
import { queryOf, sendJson } from '../v0-replies.js';
import { principalOf } from '../auth.js';
import { firstRefusal, type AclQuestion } from '../../wire/operator-in.js';
import { containerViewer } from '../../wire/container-acls.js';

type Render = (view: ClusterView, node: AgentNodeView) => unknown;

/** `/containers`: those of the containers the ACLs let a reader without a principal see (view_containers). */
function containersOf(view: ClusterView, node: AgentNodeView): unknown {
  const visible = containerViewer(view, node, undefined);
  return renderAgentContainers(view, node).filter((c) => visible(String(c.container_id)));
}

export function registerAgentReadRoutes(app: FastifyInstance, prefix: string, binding: AgentBinding): void {
  const json = (render: Render) => (req: FastifyRequest, reply: FastifyReply) => {
    const query = queryOf(req, jsonpQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const body = readAgent(binding, req, render);
    if (body === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
    return sendJson(req, reply, body, query.value.jsonp);
  };
  // Asked of the ACLs first, as upstream's agent does: /flags view_flags, /containers get_endpoints.
  const guarded =
    (ask: AclQuestion | undefined, answer: (req: FastifyRequest, reply: FastifyReply) => FastifyReply) =>
    (req: FastifyRequest, reply: FastifyReply) => {
      const refused =
        ask === undefined
          ? undefined
          : binding.driver.read((view) => firstRefusal(view.authorizer, principalOf(req), [ask]));
      return refused === undefined ? answer(req, reply) : sendError(reply, 'FORBIDDEN', refused);
    };
  const CONTAINERS: AclQuestion = { action: 'get_endpoints', object: '/containers' };
  for (const [path, render, ask] of [
    ['/state', renderAgentState, undefined],
    ['/state.json', renderAgentState, undefined],
    ['/flags', renderAgentFlags, { action: 'view_flags' }],
    ['/containers', containersOf, CONTAINERS],
  ] as const) {
    serveMethods(app, `${prefix}${path}`, everyMethod(app), guarded(ask, json(render)));
  }
  // A debug view of the containers: the ACL of /containers.
  serveMethods(
    app,
    `${prefix}/containers/cgroup`,
    everyMethod(app),
    guarded(CONTAINERS, (req, reply) => {
      const query = queryOf(req, containerQuery);
      if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
      const { container_id: containerId, jsonp } = query.value;
      const body = readAgent(binding, req, (_view, node) => renderAgentCgroups(node, containerId));
      if (body === undefined) return sendError(reply, 'UNAVAILABLE', NOT_RECOVERED);
      if (body === 'NOT_FOUND') return sendError(reply, 'TARGET_NOT_FOUND', `Container ${containerId} cannot be found`);
      return sendJson(req, reply, body, jsonp);
    }),
  );
}
