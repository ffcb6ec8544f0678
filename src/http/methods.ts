/**
 * Which methods an endpoint serves, and the one route every endpoint of an
 * app is served by. Every other method Node's parser hands over is
 * answered 405 with `Allow`, as upstream answers it, so that a PUT on
 * `/state` is not taken for a read and a TRACE on the scheduler API is not a
 * 404 while a PUT is a 405.
 *
 * An app's endpoints are a table (path to methods and handler), not a
 * fastify route each: fastify compiles a matcher per route and method, and
 * a route per endpoint made most of a cluster's start. One wildcard route
 * for GET, HEAD and POST looks the endpoint up in the table; its request
 * hook refuses a method the endpoint does not allow, or sends an unknown
 * path to the not-found handler, before any body is read. The other
 * methods reach the not-found route, whose request hook finds the endpoint
 * in the table and serves or refuses the request there, also before any
 * body is read.
 */
import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod } from 'fastify';
import { sendError } from './errors.js';
import { learnPath } from './routing.js';
import { answeringHook } from './hooks.js';

/** An endpoint as the not-found route's hook serves it: the methods it allows, and its handler. */
interface Endpoint {
  readonly allowed: readonly string[];
  readonly handler: RouteHandlerMethod;
}

/** Per app: the endpoints by path. */
interface MethodTable {
  readonly endpoints: Map<string, Endpoint>;
}

/** The methods the endpoints' route takes; PUT and the rest of a legacy read are served by the not-found route's hook. */
const ROUTED: HTTPMethods[] = ['GET', 'HEAD', 'POST'];

/** The wildcard path of the endpoints' route; fastify's own routes (`/metrics`) take precedence over it. */
const ENDPOINTS_ROUTE = '/*';

const TABLES = new WeakMap<FastifyInstance, MethodTable>();

/**
 * Every method fastify routes (once `serveMethods` has added the rare
 * ones): upstream's legacy read handlers do not check the method, so a
 * POST to `/state` reads the state like a GET.
 */
export function everyMethod(app: FastifyInstance): HTTPMethods[] {
  tableOf(app);
  return [...app.supportedMethods] as HTTPMethods[];
}

/**
 * Serves `url` by `handler` for the `allowed` methods and answers a 405
 * for all the others. The 405 is sent from `onRequest`, before fastify
 * reads the body or checks its Content-Type, so the method is the first
 * thing refused whatever else is wrong with the request, as upstream
 * checks it first.
 */
export function serveMethods(
  app: FastifyInstance,
  url: string,
  allowed: readonly HTTPMethods[],
  handler: RouteHandlerMethod,
): void {
  tableOf(app).endpoints.set(url, { allowed, handler });
  learnPath(app, url);
}

/**
 * The endpoints' route: its request hook finds the endpoint (or sends the
 * request to the not-found handler) and refuses a method it does not
 * allow; its handler serves the request once the body is read.
 */
function routeEndpoints(app: FastifyInstance, table: MethodTable): void {
  const endpointOf = (req: FastifyRequest) => table.endpoints.get(pathOf(req.url));
  app.route({
    method: ROUTED,
    url: ENDPOINTS_ROUTE,
    exposeHeadRoute: false,
    onRequest: answeringHook((req, reply) => {
      const endpoint = endpointOf(req);
      if (endpoint === undefined) {
        reply.callNotFound();
        return reply;
      }
      return endpoint.allowed.includes(req.method) ? undefined : refuseMethod(req, reply, endpoint.allowed);
    }),
    handler(req, reply) {
      return endpointOf(req)!.handler.call(this, req, reply);
    },
  });
}

/**
 * The request hook of the not-found route (app.ts): a request for an
 * endpoint's path with a method it has no route for is served or refused
 * by the endpoint; anything else goes on to the 404.
 */
export async function unroutedMethodHook(
  app: FastifyInstance,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const endpoint = TABLES.get(app)?.endpoints.get(pathOf(req.url));
  if (endpoint === undefined) return undefined;
  if (!endpoint.allowed.includes(req.method)) return refuseMethod(req, reply, endpoint.allowed);
  // A read served before its body is read: the connection closes rather than read it.
  if (announcesBody(req)) reply.header('connection', 'close');
  const result: unknown = await endpoint.handler.call(app, req, reply);
  if (!reply.sent && result !== undefined && result !== reply) return reply.send(result);
  return reply;
}

/**
 * The endpoint a request is for, as hooks that key on it (authentication,
 * request metrics) name it: its route's path, or, for a method the endpoint
 * has no route for, the endpoint's path rather than the not-found route's.
 */
export function routePathOf(req: FastifyRequest): string | undefined {
  const url = req.routeOptions.url;
  if (url !== undefined && url !== ENDPOINTS_ROUTE && !req.is404) return url;
  const path = pathOf(req.url);
  return TABLES.get(req.server)?.endpoints.has(path) === true ? path : undefined;
}

function refuseMethod(req: FastifyRequest, reply: FastifyReply, allowed: readonly string[]): FastifyReply {
  // Node would read an unread body to its end to reach the next request on
  // the connection, up to the whole body limit: close instead.
  if (announcesBody(req)) reply.header('connection', 'close');
  return sendError(reply.header('allow', allowed.join(', ')), 'METHOD_NOT_ALLOWED', allowed, req.method);
}

/**
 * The app's table, made on first use. fastify routes only the common
 * methods and answers the rest (PROPFIND, LOCK, …) as unknown paths, so
 * they are added; CONNECT never reaches a route: Node takes it as a tunnel
 * request. The methods added are bodiless to fastify: no route serves
 * them, so none has a body to parse.
 */
function tableOf(app: FastifyInstance): MethodTable {
  let table = TABLES.get(app);
  if (table !== undefined) return table;
  table = { endpoints: new Map() };
  TABLES.set(app, table);
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
  routeEndpoints(app, table);
  return table;
}

/** The path of a request's URL, as a route would match it. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (!path.includes('%')) return path;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

function announcesBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
