/**
 * Media types, as the master checks them: Content-Type by exact equality;
 * Accept with wildcards and q-values, JSON preferred, a missing header
 * accepting everything.
 */

export const JSON_TYPE = 'application/json';
export const PROTOBUF_TYPE = 'application/x-protobuf';
export type MessageType = typeof JSON_TYPE | typeof PROTOBUF_TYPE;
/** Both message encodings, JSON first: it wins whenever the client accepts it. */
export const MESSAGE_TYPES: readonly MessageType[] = [JSON_TYPE, PROTOBUF_TYPE];

/**
 * The message type a Content-Type names, compared whole as upstream does (so
 * `application/json; charset=utf-8` is not JSON); undefined if none.
 */
export function contentTypeOf(
  header: string,
  supported: readonly MessageType[] = [JSON_TYPE],
): MessageType | undefined {
  return supported.find((t) => t === header);
}

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(header: string | readonly string[]): MediaRange[] {
  const text = typeof header === 'string' ? header : header.join(',');
  const out: MediaRange[] = [];
  for (const part of text.split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim());
    const [type = '', subtype = ''] = range.toLowerCase().split('/');
    if (type === '') continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m !== null) q = Number(m[1]);
    }
    out.push({ type, subtype: subtype === '' ? '*' : subtype, q: Number.isFinite(q) ? q : 1 });
  }
  return out;
}

/** The q-value a header gives a media type: the most specific range wins. */
function quality(ranges: readonly MediaRange[], mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  let best: { specificity: number; q: number } | undefined;
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype
        ? 3
        : r.type === type && r.subtype === '*'
          ? 2
          : r.type === '*' && r.subtype === '*'
            ? 1
            : 0;
    if (specificity > 0 && (best === undefined || specificity > best.specificity)) best = { specificity, q: r.q };
  }
  return best?.q ?? 0;
}

/** The response type for an Accept header, JSON first; undefined means NOT_ACCEPTABLE. */
export function negotiate(
  header: string | readonly string[] | undefined,
  offered: readonly MessageType[] = [JSON_TYPE],
): MessageType | undefined {
  if (header === undefined || (typeof header === 'string' && header.trim() === '')) return offered[0];
  const ranges = parseAccept(header);
  return offered.find((t) => quality(ranges, t) > 0);
}

/** RecordIO, the media type of the agent API's streaming calls (their messages' own type goes in `Message-*` headers). */
export const RECORDIO_TYPE = 'application/recordio';

/** Whether an Accept header allows `mediaType` (a missing header allows everything). */
export function accepts(header: string | readonly string[] | undefined, mediaType: string): boolean {
  if (header === undefined || (typeof header === 'string' && header.trim() === '')) return true;
  return quality(parseAccept(header), mediaType) > 0;
}

/** Whether an Accept header names `mediaType` itself (not through a wildcard) with a quality above zero. */
export function namesType(header: string | readonly string[] | undefined, mediaType: string): boolean {
  if (header === undefined) return false;
  return parseAccept(header).some((r) => `${r.type}/${r.subtype}` === mediaType && r.q > 0);
}

/** What an agent call's answer is written as: a message type, or RecordIO records of a message type. */
export interface AgentAnswerTypes {
  /** The response's Content-Type. */
  readonly accept: MessageType | typeof RECORDIO_TYPE;
  /** The type of each record (its `Message-Content-Type`), when the answer is RecordIO. */
  readonly records: MessageType | undefined;
}

/**
 * Upstream's agent API negotiation: `Accept` picks JSON if it allows it,
 * else protobuf, else RecordIO; RecordIO takes its records' type from
 * `Message-Accept` (JSON when the header is missing), which only a
 * streaming answer may carry. A string is the reason for a 406.
 */
export function negotiateAgentAnswer(
  accept: string | readonly string[] | undefined,
  messageAccept: string | readonly string[] | undefined,
): AgentAnswerTypes | string {
  const types = [...MESSAGE_TYPES, RECORDIO_TYPE];
  const chosen = types.find((t) => accepts(accept, t));
  if (chosen === undefined) return `Expecting 'Accept' to allow ${types.join(' or ')}`;
  if (chosen !== RECORDIO_TYPE) {
    return messageAccept === undefined
      ? { accept: chosen as MessageType, records: undefined }
      : "Expecting 'Message-Accept' to be not set for non-streaming responses";
  }
  const records = MESSAGE_TYPES.find((t) => accepts(messageAccept, t));
  if (records === undefined) return `Expecting 'Message-Accept' to allow ${MESSAGE_TYPES.join(' or ')}`;
  return { accept: RECORDIO_TYPE, records };
}
