/** Legacy read-only endpoints of the master (JSON), under `/` and `/master/`. */
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterView } from '../core/view.js';
import type { ClusterDriver } from '../runtime/driver.js';
import {
  renderFrameworks,
  renderMetrics,
  renderRoles,
  renderSlaves,
  renderState,
  renderStateSummary,
  renderTasks,
  renderVersion,
  toLegacyJson,
} from '../wire/legacy/index.js';
import { VERSION } from '../wire/version.js';

type Query = Record<string, string | undefined>;

export function registerReadRoutes(app: FastifyInstance, prefix: string, driver: ClusterDriver): void {
  const json = (render: (view: ClusterView, q: Query) => unknown) => (req: FastifyRequest, reply: FastifyReply) => {
    // Reading lets due timers run first, so the view is current.
    // No renderer refuses a query: malformed and unknown parameters are ignored, as upstream does.
    const body = driver.read((view) => render(view, req.query as Query));
    return sendJson(req, reply, body);
  };
  app.all(`${prefix}/state`, json((view) => renderState(view)));
  app.all(`${prefix}/state.json`, json((view) => renderState(view)));
  app.all(`${prefix}/state-summary`, json((view) => renderStateSummary(view)));
  app.all(`${prefix}/slaves`, json((view, q) => renderSlaves(view, q)));
  app.all(`${prefix}/frameworks`, json((view, q) => renderFrameworks(view, q)));
  app.all(`${prefix}/tasks`, json((view, q) => renderTasks(view, q)));
  app.all(`${prefix}/roles`, json((view) => renderRoles(view)));
  if (prefix === '') {
    // Metrics belong to their own process upstream: /metrics/snapshot only.
    app.all('/metrics/snapshot', json((view) => renderMetrics(view)));
  }
  app.all(`${prefix}/health`, (_req, reply) => reply.code(200).header('content-length', '0').send());
  app.all(`${prefix}/version`, json(() => renderVersion(VERSION)));
  // This master is always the leader: the redirect points at itself, protocol-relative.
  app.all(`${prefix}/redirect`, (_req, reply) => {
    const { hostname, port } = driver.cluster.view.masterInfo;
    return reply.code(307).header('location', `//${hostname}:${port}`).header('content-length', '0').send();
  });
}

/**
 * JSON, or `cb(<json>)` as JavaScript when `?jsonp=cb` is given. Doubles are
 * written as upstream does, with a decimal point when whole.
 */
function sendJson(req: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply {
  const text = toLegacyJson(body);
  const callback = (req.query as Query).jsonp;
  if (callback !== undefined && /^[A-Za-z_$][\w$.]*$/.test(callback)) {
    return sendBody(req, reply, 'text/javascript', Buffer.from(`${callback}(${text});`));
  }
  return sendBody(req, reply, 'application/json', Buffer.from(text));
}

/** Bodies of this size or more are gzipped when the client accepts gzip, as upstream does. */
export const GZIP_THRESHOLD_BYTES = 1024;

/** A Buffer body, so that fastify adds no '; charset=utf-8' to the type. */
function sendBody(req: FastifyRequest, reply: FastifyReply, type: string, body: Buffer): FastifyReply {
  reply.header('content-type', type);
  if (body.length >= GZIP_THRESHOLD_BYTES && acceptsGzip(req.headers['accept-encoding'])) {
    return reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding').send(gzipSync(body));
  }
  return reply.send(body);
}

function acceptsGzip(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text.split(',').some((part) => {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}
