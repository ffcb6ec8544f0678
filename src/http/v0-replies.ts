/**
 * Replies of the v0 read endpoints, master's and agents' alike: the query
 * read from the raw request target, and JSON (or JSONP) written as upstream
 * writes it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeQuery, toV0Json, type QueryParams, type QueryResult } from '../wire/v0/index.js';
import { sendBody, type StreamedBody } from './stream-body.js';

export type ParseQuery<Q> = (params: QueryParams) => QueryResult<Q>;

/** The raw request target, not fastify's parsed query: upstream's rules decide repeated names and separators. */
export function queryOf<Q>(req: FastifyRequest, parse: ParseQuery<Q>): QueryResult<Q> {
  const params = decodeQuery(req.url);
  return params.ok ? parse(params.value) : params;
}

/**
 * JSON, or `cb(<json>)` as JavaScript when `?jsonp=cb` is given. Doubles are
 * written as upstream does, with a decimal point when whole.
 */
export function sendJson(
  req: FastifyRequest,
  reply: FastifyReply,
  body: unknown,
  callback: string | undefined,
): FastifyReply {
  const text = toV0Json(body);
  if (callback !== undefined) {
    return sendBody(req, reply, 'text/javascript', Buffer.from(`${callback}(${text});`));
  }
  return sendBody(req, reply, 'application/json', Buffer.from(text));
}

/** JSON text in pieces, or a JSONP call around it, as `sendJson` writes it. */
export function jsonBody(pieces: Iterator<string | Uint8Array>, callback: string | undefined): StreamedBody {
  if (callback === undefined) return { type: 'application/json', pieces };
  return { type: 'text/javascript', pieces, prefix: `${callback}(`, suffix: ');' };
}
