/**
 * An agent's legacy read endpoints: `/state` (and `/state.json`), `/flags`,
 * `/containers`, `/monitor/statistics` (each running executor's
 * ResourceStatistics), `/metrics/snapshot` (its `slave/*` metrics, at the
 * root only), and `/containers/cgroup` (the memory cgroup files of
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
  renderMonitorStatistics,
} from '../../wire/v0/agent-state.js';
import { renderAgentMetrics } from '../../wire/v0/agent-metrics.js';
import { containerQuery, jsonpQuery, metricsQuery, type JsonpQuery } from '../../wire/v0/index.js';
import { NOT_RECOVERED, readAgent, type AgentBinding } from './operator-route.js';
import { sendError } from '../errors.js';
import { everyMethod, serveMethods } from '../methods.js';
import { queryOf, sendJson, type ParseQuery } from '../v0-replies.js';
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
  const json =
    (render: Render, parse: ParseQuery<JsonpQuery> = jsonpQuery) =>
    (req: FastifyRequest, reply: FastifyReply) => {
      const query = queryOf(req, parse);
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
  const STATISTICS: AclQuestion = { action: 'get_endpoints', object: '/monitor/statistics' };
  for (const [path, render, ask] of [
    ['/state', renderAgentState, undefined],
    ['/state.json', renderAgentState, undefined],
    ['/flags', renderAgentFlags, { action: 'view_flags' }],
    ['/containers', containersOf, CONTAINERS],
  ] as const) {
    serveMethods(app, `${prefix}${path}`, everyMethod(app), guarded(ask, json(render)));
  }
  // With ACLs, upstream's statistics take GET only.
  serveMethods(app, `${prefix}/monitor/statistics`, everyMethod(app), (req, reply) => {
    const acls = binding.driver.read((view) => view.authorizer.enabled);
    if (acls && req.method !== 'GET')
      return sendError(reply.header('allow', 'GET'), 'METHOD_NOT_ALLOWED', ['GET'], req.method);
    return guarded(STATISTICS, json(renderMonitorStatistics))(req, reply);
  });
  // The metrics are its libprocess' own, at the root only, as upstream's `/metrics/snapshot`.
  if (prefix === '')
    serveMethods(
      app,
      '/metrics/snapshot',
      everyMethod(app),
      guarded({ action: 'get_endpoints', object: '/metrics/snapshot' }, json(renderAgentMetrics, metricsQuery)),
    );
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
