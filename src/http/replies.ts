/** Replies without a body. Errors have their own catalogue (`errors.ts`). */
import type { FastifyReply } from 'fastify';

/** 202 and empty 200 replies carry no body and no Content-Type. */
export function sendEmpty(reply: FastifyReply, status: 200 | 202): FastifyReply {
  reply.removeHeader('content-type');
  return reply.code(status).header('content-length', '0').send();
}
