/**
 * A client's messages in its encoding: an upstream JSON object to the
 * bytes of a request, and a response's or a record's bytes back to the
 * JSON object, whichever encoding the client speaks.
 */
import { decodeJson, encodeJson } from '../wire/json.js';
import { decodeProto, encodeProto } from '../wire/proto-codec.js';

export type Encoding = 'json' | 'protobuf';

export const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

/** `message` (upstream JSON) as the body of a request of `typeName` (`mesos.v1.agent.Call`). */
export function encodeMessage(encoding: Encoding, typeName: string, message: object): string | Buffer {
  const text = JSON.stringify(message);
  if (encoding === 'json') return text;
  const decoded = decodeJson<object>(typeName, text);
  if (!decoded.ok) throw new Error(decoded.error);
  return Buffer.from(encodeProto(typeName, decoded.value));
}

/** The bytes of a message of `typeName` as upstream JSON; `what` names it in an error. */
export function decodeMessage(encoding: Encoding, typeName: string, bytes: Buffer, what: string): unknown {
  if (encoding === 'json') return JSON.parse(bytes.toString('utf8'));
  const decoded = decodeProto<object>(typeName, bytes, what);
  if (!decoded.ok) throw new Error(decoded.error);
  return JSON.parse(encodeJson(typeName, decoded.value));
}
