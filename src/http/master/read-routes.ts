/**
 * Legacy read-only endpoints of the master (JSON), under `/` and `/master/`,
 * their query checked before anything is read. Each reader sees what the
 * ACLs let its principal view (view-filter.ts): the authenticated one with
 * `--authenticate-http-readonly`, else none, which the ACLs take as ANY.
 * `/flags` is all or nothing: 403 to a reader who may not view the flags.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { ClusterView } from '../../core/view.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import {
  decodeQuery,
  frameworksQuery,
  jsonpQuery,
  metricsQuery,
  renderFlags,
  renderFrameworks,
  renderMetrics,
  renderRoles,
  renderSlaves,
  renderStateSummary,
  renderTasks,
  renderVersion,
  slavesQuery,
  tasksQuery,
  type JsonpQuery,
} from '../../wire/v0/index.js';
import { snapshotState } from '../../wire/v0/state-stream.js';
import { VERSION } from '../../wire/version.js';
import { FILES_PATHS, principalOf, READONLY_REALM } from '../auth.js';
import { sendError } from '../errors.js';
import { viewerOf, type Viewer } from '../../wire/view-filter.js';
import { everyMethod, serveMethods } from '../methods.js';
import { askedOwnPath } from '../routing.js';
import { healthRoute } from './health.js';
import { sendStreamed } from '../stream-body.js';
import { jsonBody, queryOf, sendJson, type ParseQuery } from '../v0-replies.js';

/** Checks a request's parameters into the query its renderer takes. */

/** The endpoints upstream puts in its read-only realm, under both prefixes; `/metrics/snapshot` is its own process's (and `/metrics` shows the same figures). */
const READONLY_PATHS = [
  '/state',
  '/state.json',
  '/state-summary',
  '/slaves',
  '/frameworks',
  '/tasks',
  '/roles',
  '/flags',
];

/** The routes `--authenticate-http-readonly` guards, by URL, with their realm (for `requireAuthentication`). */
export function readonlyRoutes(): Map<string, string> {
  const urls = ['', '/master'].flatMap((prefix) => READONLY_PATHS.map((path) => `${prefix}${path}`));
  return new Map(
    [...urls, '/metrics/snapshot', '/master/metrics/snapshot', '/metrics', ...FILES_PATHS].map((url) => [
      url,
      READONLY_REALM,
    ]),
  );
}

export function registerReadRoutes(app: FastifyInstance, prefix: string, driver: ClusterDriver, masterIndex = 0): void {
  const json =
    <Q extends JsonpQuery>(parse: ParseQuery<Q>, render: (view: ClusterView, q: Q, viewer: Viewer) => unknown) =>
    (req: FastifyRequest, reply: FastifyReply) => {
      const query = queryOf(req, parse);
      if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
      const principal = principalOf(req);
      // Reading lets due timers run first, so the view is current.
      const body = driver.read((view) => render(view, query.value, viewerOf(view.authorizer, principal)));
      return sendJson(req, reply, body, query.value.jsonp);
    };
  // The whole state is read at once and written in slices (stream-body.ts).
  const state = (req: FastifyRequest, reply: FastifyReply) => {
    const query = queryOf(req, jsonpQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const principal = principalOf(req);
    const snapshot = driver.read((view) => snapshotState(view, {}, viewerOf(view.authorizer, principal)));
    return sendStreamed(req, reply, jsonBody(snapshot.pieces(), query.value.jsonp));
  };
  // Upstream's read handlers do not check the method (wire facts, legacy endpoints).
  const read = (path: string, handler: RouteHandlerMethod) =>
    serveMethods(app, `${prefix}${path}`, everyMethod(app), handler);
  read('/state', state);
  read('/state.json', state);
  read(
    '/state-summary',
    json(jsonpQuery, (view, _q, viewer) => renderStateSummary(view, viewer)),
  );
  read('/slaves', json(slavesQuery, renderSlaves));
  read('/frameworks', json(frameworksQuery, renderFrameworks));
  read('/tasks', json(tasksQuery, renderTasks));
  read(
    '/roles',
    json(jsonpQuery, (view, _q, viewer) => renderRoles(view, viewer)),
  );
  read(
    '/flags',
    flags(
      driver,
      json(jsonpQuery, (view) => renderFlags(view)),
    ),
  );
  // Upstream serves it at /metrics/snapshot only (its own process's); /master/metrics/snapshot answers the same.
  read(
    '/metrics/snapshot',
    endpoint(
      driver,
      '/metrics/snapshot',
      json(metricsQuery, (view) => renderMetrics(view)),
    ),
  );
  read(
    '/version',
    json(jsonpQuery, () => renderVersion(VERSION)),
  );
  read('/health', healthRoute(driver, masterIndex));
  // The leader answers here, with itself; a master that does not lead answers in the leader gate (master/leader-gate.ts).
  read(
    '/redirect',
    bodiless((reply, req) => {
      // Below its own path it answers 404, as upstream's does against redirect loops.
      if (!askedOwnPath(req)) return sendError(reply, 'NOT_FOUND');
      const { hostname, port } = driver.cluster.view.masterInfo;
      return reply.code(307).header('location', `//${hostname}:${port}`);
    }),
  );
}

/**
 * `/flags`: with ACLs, upstream serves GET only (405 otherwise) and answers
 * 403 to a reader who may not view the flags; without, any method reads.
 */
function flags(driver: ClusterDriver, answer: RouteHandlerMethod) {
  return function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
    const principal = principalOf(req);
    const decision = driver.read((view) => {
      if (!view.authorizer.enabled) return 'open';
      return view.authorizer.refusal('view_flags', principal) ?? 'allowed';
    });
    if (decision !== 'open' && req.method !== 'GET')
      return sendError(reply.header('allow', 'GET'), 'METHOD_NOT_ALLOWED', ['GET'], req.method);
    if (decision !== 'open' && decision !== 'allowed') return sendError(reply, 'FORBIDDEN', decision);
    return answer.call(this, req, reply);
  };
}

/**
 * An endpoint upstream authorizes by its path (`get_endpoints`): 403 with
 * the reason to a reader the ACLs refuse, before anything is read.
 */
export function endpoint(driver: ClusterDriver, path: string, answer: RouteHandlerMethod) {
  return function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
    const refused = driver.read((view) => view.authorizer.refusal('get_endpoints', principalOf(req), path));
    if (refused !== undefined) return sendError(reply, 'FORBIDDEN', refused);
    return answer.call(this, req, reply);
  };
}

/**
 * An answer without a body. These endpoints read no parameter, but still
 * refuse a query that does not decode, as every endpoint upstream does.
 */
function bodiless(answer: (reply: FastifyReply, req: FastifyRequest) => FastifyReply) {
  return (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const query = decodeQuery(req.url);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const answered = answer(reply, req);
    return answered.sent ? answered : answered.header('content-length', '0').send();
  };
}
