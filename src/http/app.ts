/**
 * What every server of the cluster does alike: bodies taken raw (the wire
 * layer decodes them), every error plain text on one line, and the parts
 * one server lends another's app (the control API on the master's).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';
import { unroutedMethodHook } from './methods.js';

/**
 * Routes and hooks that a server's app takes from elsewhere, installed in
 * its order: `guard` among the app's request hooks (before the leader gate,
 * so that it sees a request first), `routes` with the app's own routes.
 */
export interface AppPart {
  readonly guard?: (app: FastifyInstance) => void;
  readonly routes: (app: FastifyInstance) => void;
}

/** Every body arrives as a Buffer, whatever its Content-Type (or none). */
export function acceptRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

export function installErrorReplies(app: FastifyInstance): void {
  // fastify runs each hook given here after the app's own, for every hook
  // kind, though its types name only preValidation and preHandler.
  const hooks = { onRequest: (req: FastifyRequest, reply: FastifyReply) => unroutedMethodHook(app, req, reply) };
  app.setNotFoundHandler(hooks as object, (_req, reply) => sendError(reply, 'NOT_FOUND'));
  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, req, reply) => {
    // fastify refuses these before a route has looked at the call, which may
    // have been a SUBSCRIBE, and may leave the body unread: close, as the
    // scheduler route does for every refusal until it knows the call.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(closing(reply), 'BODY_TOO_LARGE');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendError(closing(reply), 'CONTENT_TYPE_MALFORMED');
    // The other requests fastify cannot read (a body cut short, a QUERY
    // without Content-Type) all have the status 400 and fastify's text.
    if (error.statusCode === 400) return sendError(closing(reply), 'REQUEST_UNREADABLE', error.message);
    req.log.error({ err: error }, 'request failed');
    return sendError(reply, 'INTERNAL');
  });
}

const closing = (reply: FastifyReply): FastifyReply => reply.header('connection', 'close');
