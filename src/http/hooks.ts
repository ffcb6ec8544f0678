/**
 * Request hooks that may answer the request themselves: the checks every
 * request passes (authentication, the leader gate, the control API's
 * guard, an endpoint's methods) run on every call, so they are callback
 * hooks, without a promise and a microtask hop each as an async hook has.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';

/** What a check returns: the reply it answered with, or undefined to let the request go on. */
export type RequestCheck = (req: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;

/**
 * A request hook of `check`. One that answered does not go on (`done`):
 * fastify would read the body and route the request still.
 */
export function answeringHook(check: RequestCheck): onRequestHookHandler {
  return (req, reply, done) => {
    if (check(req, reply) === undefined) done();
  };
}
