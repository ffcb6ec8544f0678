/**
 * Which methods an endpoint serves. Every other method Node's parser hands
 * over is answered 405 with `Allow`, as upstream answers it, so that a PUT on
 * `/state` is not taken for a read and a TRACE on the scheduler API is not a
 * 404 while a PUT is a 405.
 */
import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, RouteHandlerMethod } from 'fastify';
import { sendError } from './errors.js';

/**
 * Every method fastify routes (once `serveMethods` has added the rare
 * ones): upstream's legacy read handlers do not check the method, so a
 * POST to `/state` reads the state like a GET.
 */
export function everyMethod(app: FastifyInstance): HTTPMethods[] {
  routeEveryMethod(app);
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
  routeEveryMethod(app);
  const refuse = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // Node would read an unread body to its end to reach the next request on
    // the connection, up to the whole body limit: close instead.
    if (announcesBody(req)) reply.header('connection', 'close');
    return sendError(reply.header('allow', allowed.join(', ')), 'METHOD_NOT_ALLOWED', allowed, req.method);
  };
  // The 405 first: a GET route registered before it would get fastify's own HEAD route beside it.
  const refused = app.supportedMethods.filter((m) => !(allowed as readonly string[]).includes(m));
  if (refused.length > 0) app.route({ method: refused, url, onRequest: refuse, handler: refuse });
  app.route({ method: [...allowed], url, handler });
}

/**
 * fastify routes only the common methods and answers the rest (PROPFIND,
 * LOCK, …) as unknown paths. CONNECT never reaches a route: Node takes it
 * as a tunnel request. The methods added are bodiless to fastify: no route
 * serves them, so none has a body to parse.
 */
function routeEveryMethod(app: FastifyInstance): void {
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
}

function announcesBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
