/**
 * Path routing as upstream's HTTP layer (libprocess) does it, for every
 * endpoint of master and agents:
 *
 *   - empty segments are dropped, so a trailing slash is ignored
 *     (`/master/frameworks/` is `/master/frameworks`, as command-line
 *     clients request it) and so is a doubled one;
 *   - a path with no handler of its own goes to its longest prefix, at a
 *     segment boundary, that has one (`/api/v1/operator`, where Python
 *     operator clients post, is served by `/api/v1`; `/master/state/x` by
 *     `/master/state`). A handler only ever takes paths under its own.
 *
 * The rewrite happens before fastify routes the request; `req.originalUrl`
 * keeps what the client asked for (the redirect endpoint answers 404 for a
 * path below its own, as upstream's does to break redirect loops).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

const ROUTERS = new WeakMap<FastifyInstance, PathRouter>();

/** An endpoint the app serves without a route of its own (http/methods.ts): its router rewrites to it. */
export function learnPath(app: FastifyInstance, path: string): void {
  ROUTERS.get(app)?.learn(path);
}

export class PathRouter {
  readonly #paths = new Set<string>();

  /**
   * Learns every route the app registers from now on, and every endpoint
   * it serves from its table (`learnPath`); call before registering any.
   */
  attach(app: FastifyInstance): void {
    ROUTERS.set(app, this);
    app.addHook('onRoute', (route) => {
      this.#paths.add(route.url);
    });
  }

  learn(path: string): void {
    this.#paths.add(path);
  }

  /** fastify's `rewriteUrl`: the route a request target goes to, its query kept. */
  readonly rewrite = (req: IncomingMessage): string => {
    const target = req.url ?? '/';
    // The common case, a route's own path without a query, is left as it is.
    if (this.#paths.has(target)) return target;
    const q = target.indexOf('?');
    const path = normalisePath(q < 0 ? target : target.slice(0, q));
    const query = q < 0 ? '' : target.slice(q);
    if (this.#paths.has(path)) return path + query;
    for (let prefix = parentOf(path); prefix !== ''; prefix = parentOf(prefix)) {
      if (this.#paths.has(prefix)) return prefix + query;
    }
    return path + query;
  };
}

/** `/a//b/` is `/a/b`; the root stays `/`. */
export function normalisePath(path: string): string {
  if (isNormal(path)) return path;
  const segments = path.split('/').filter((s) => s !== '');
  return `/${segments.join('/')}`;
}

const SLASH = 47;

/** A path with a leading slash, no empty segment and no trailing slash (or the root): the common case, left as it is. */
function isNormal(path: string): boolean {
  if (path.charCodeAt(0) !== SLASH) return false;
  return path.length === 1 || (path.charCodeAt(path.length - 1) !== SLASH && !path.includes('//'));
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '' : path.slice(0, i);
}

/** Whether the request asked for the route's own path, not a path below it. */
export function askedOwnPath(req: FastifyRequest): boolean {
  const pathOf = (url: string) => normalisePath(url.split('?', 1)[0] ?? '');
  return pathOf(req.originalUrl) === pathOf(req.url);
}
