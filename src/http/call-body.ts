/**
 * The first checks of a `POST` of a `Call` (scheduler or operator API), in
 * upstream's order: Content-Type present, then one of the two message types,
 * then a body that decodes as the call. Until the body decodes the call may
 * be a SUBSCRIBE, whose refusal closes its connection, so every refusal up
 * to here closes it. Sniffing a body that does not decode would be a guess
 * (JSON keys and protobuf fields come in any order), and a subscriber whose
 * subscription is refused waits on that connection for its stream; any
 * other client pays one reconnection after a request it got wrong anyway.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJson } from '../wire/json.js';
import { decodeProto } from '../wire/proto-codec.js';
import { sendError } from './errors.js';
import { contentTypeOf, JSON_TYPE, MESSAGE_TYPES } from './negotiate.js';

export const closing = (reply: FastifyReply): FastifyReply => reply.header('connection', 'close');

/** The decoded call, or undefined once the refusal is sent. */
export function decodeCallBody<T>(req: FastifyRequest, reply: FastifyReply, typeName: string): T | undefined {
  const header = req.headers['content-type'];
  if (header === undefined) {
    sendError(closing(reply), 'CONTENT_TYPE_MISSING');
    return undefined;
  }
  const contentType = contentTypeOf(header, MESSAGE_TYPES);
  if (contentType === undefined) {
    sendError(closing(reply), 'CONTENT_TYPE_UNSUPPORTED', MESSAGE_TYPES);
    return undefined;
  }
  const body = req.body instanceof Buffer ? req.body : Buffer.alloc(0);
  const decoded =
    contentType === JSON_TYPE
      ? decodeJson<T>(typeName, body.toString('utf8'), 'Call')
      : decodeProto<T>(typeName, body, 'Call');
  if (!decoded.ok) {
    sendError(closing(reply), 'BODY_UNDECODABLE', decoded.error);
    return undefined;
  }
  return decoded.value;
}
