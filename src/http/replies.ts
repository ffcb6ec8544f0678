/**
 * How rejections look on the wire: plain text, one line, with the upstream
 * default bodies where there is no message, and the status for each core
 * error code.
 */
import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../core/errors.js';

/**
 * A call for a framework the master does not know is 403: the spec's error
 * table puts "non-SUBSCRIBE call without subscription" at 403, and the spec
 * wins over upstream, which answers 400 there (the body keeps upstream's
 * wording, and the check keeps its place in upstream's order).
 */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  INVALID: 400,
  FRAMEWORK_NOT_FOUND: 403,
  STREAM_ID: 400,
  FRAMEWORK_NOT_SUBSCRIBED: 403,
  FORBIDDEN: 403,
  NOT_IMPLEMENTED: 501,
};

const DEFAULT_BODY: Readonly<Record<number, string>> = {
  400: '400 Bad Request.',
  403: '403 Forbidden.',
  404: '404 Not Found.',
  406: '406 Not Acceptable.',
  409: '409 Conflict.',
  413: '413 Payload Too Large.',
  415: '415 Unsupported Media Type.',
  500: '500 Internal Server Error.',
  501: '501 Not Implemented.',
  503: '503 Service Unavailable.',
};

/** A plain-text error reply; the message is folded onto one line. */
export function sendError(reply: FastifyReply, status: number, message?: string): FastifyReply {
  const body = (message ?? DEFAULT_BODY[status] ?? `${status}`).replace(/\s*[\r\n]+\s*/g, ' ');
  return reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(body);
}

/** 202 and empty 200 replies carry no body and no Content-Type. */
export function sendEmpty(reply: FastifyReply, status: 200 | 202): FastifyReply {
  reply.removeHeader('content-type');
  return reply.code(status).header('content-length', '0').send();
}

export function sendMethodNotAllowed(reply: FastifyReply, method: string): FastifyReply {
  reply.header('allow', 'POST');
  return sendError(reply, 405, `405 Method Not Allowed. Expecting one of { 'POST' }, but received '${method}'.`);
}
