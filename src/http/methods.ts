/**
 * Which methods an endpoint serves. Every other method Node's parser hands
 * over is answered 405 with `Allow`, as upstream answers it, so that a PUT on
 * `/state` is not taken for a read and a TRACE on the scheduler API is not a
 * 404 while a PUT is a 405.
 *
 * Only GET, HEAD and POST are routes of an endpoint (those it serves). A
 * route for each of the 34 methods Node parses, on every endpoint of every
 * server, made most of a cluster's start. Every other request reaches the
 * not-found route, whose request hook finds the endpoint in the app's table
 * and serves or refuses the request there: after the app's own request
 * hooks, as a route's would, and before any body is read.
 */
import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod } from 'fastify';
import { sendError } from './errors.js';

/** An endpoint as the not-found route's hook serves it: the methods it allows, and its handler. */
interface Endpoint {
  readonly allowed: readonly string[];
  readonly handler: RouteHandlerMethod;
}

/** Per app: the endpoints by path. */
interface MethodTable {
  readonly endpoints: Map<string, Endpoint>;
}

/** The methods an endpoint has routes for, where it serves them; PUT and the rest of a legacy read are served by the hook. */
const ROUTED: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST']);

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
 * Routes `url` to `handler` for the `allowed` methods and to a 405 for all
 * the others. The 405 is sent from `onRequest`, before fastify reads the
 * body or checks its Content-Type, so the method is the first thing refused
 * whatever else is wrong with the request, as upstream checks it first.
 */
export function serveMethods(
  app: FastifyInstance,
  url: string,
  allowed: readonly HTTPMethods[],
  handler: RouteHandlerMethod,
): void {
  tableOf(app).endpoints.set(url, { allowed, handler });
  const served = allowed.filter((m) => ROUTED.has(m));
  // No HEAD of fastify's own beside a GET: HEAD is served where it is allowed, and refused elsewhere.
  if (served.length > 0) app.route({ method: served, url, handler, exposeHeadRoute: false });
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
  if (req.is404) {
    const path = pathOf(req.url);
    if (TABLES.get(req.server)?.endpoints.has(path) === true) return path;
  }
  return req.routeOptions.url;
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
  return table;
}

/** The path of a request's URL, as a route would match it. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
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
