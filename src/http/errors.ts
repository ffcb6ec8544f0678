/**
 * The error catalogue of the HTTP servers: every 4xx and 5xx they send, by a
 * stable code, with its status and its one-line plain-text body. Routes send
 * errors only through `sendError`, so a status or a text changes here and
 * nowhere else; docs/scheduler-api.md lists the same codes (test/http/errors.test.ts
 * holds the two together).
 *
 * Most texts are upstream's, byte for byte, trailing periods and unquoted
 * ids included, because clients and their tests compare them; a text that
 * carries a value is a template. Entries are in the order the master checks
 * a scheduler call, the first that applies answering; FORBIDDEN and INTERNAL
 * have no place in it.
 *
 * The core has its own, coarser codes (`src/core/errors.ts`); `sendCallError`
 * maps them here. Node and fastify answer a few requests before any route
 * runs (a malformed request line or header, a request while the server is
 * closing); those bodies are theirs and not in this table.
 */
import type { FastifyReply } from 'fastify';
import type { CallError } from '../core/model/errors.js';

interface Entry {
  readonly status: number;
  readonly text: (...args: never[]) => string;
}

const quoted = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(' or ');

export const HTTP_ERRORS = {
  /** Unknown path, on any server; fastify finds no route before anything else. */
  NOT_FOUND: { status: 404, text: () => '404 Not Found.' },
  /**
   * With `--credentials`, a request to the scheduler or operator API (and,
   * with `--authenticate-http-readonly`, to a read-only endpoint) without
   * valid HTTP Basic credentials, before anything else about it is looked
   * at (upstream authenticates before its handler runs). libprocess's
   * default body; `auth.ts` adds `WWW-Authenticate` with the realm.
   */
  UNAUTHORIZED: { status: 401, text: () => '401 Unauthorized.' },
  /**
   * A method the endpoint does not serve (POST only on the scheduler API,
   * GET and HEAD on the read endpoints); the route adds `Allow`. Upstream's
   * words (libprocess `MethodNotAllowed`), trailing period included.
   */
  METHOD_NOT_ALLOWED: {
    status: 405,
    text: (allowed: readonly string[], method: string) =>
      `405 Method Not Allowed. Expecting one of { ${allowed.map((m) => `'${m}'`).join(', ')} }, but received '${method}'.`,
  },
  /**
   * Read endpoints: a query string that does not decode (a malformed `%`
   * escape) or a parameter whose value the endpoint cannot use. Upstream
   * refuses the first before routing and ignores the second; refusing both
   * tells a client its paging or callback was not what it meant.
   */
  QUERY_INVALID: { status: 400, text: (detail: string) => detail },
  // fastify refuses the next three before the route runs; the texts are fastify's.
  /** A Content-Type that is not a media type at all (`json`). */
  CONTENT_TYPE_MALFORMED: { status: 415, text: () => 'Unsupported Media Type' },
  /** Over the body limit (16 MiB on the master). */
  BODY_TOO_LARGE: { status: 413, text: () => 'Request body is too large' },
  /** A body shorter than its Content-Length or aborted, a QUERY without Content-Type. */
  REQUEST_UNREADABLE: { status: 400, text: (detail: string) => detail },
  CONTENT_TYPE_MISSING: { status: 400, text: () => "Expecting 'Content-Type' to be present" },
  /** Content-Type is compared whole, parameters included, as upstream does. */
  CONTENT_TYPE_UNSUPPORTED: {
    status: 415,
    text: (supported: readonly string[]) => `Expecting 'Content-Type' of ${supported.join(' or ')}`,
  },
  /**
   * Not JSON, not protobuf, not a `Call`, or required fields missing: the
   * decoder's own upstream text (`Failed to parse body into JSON: …`,
   * `Failed to convert JSON into Call protobuf: …`). One code, because a
   * client cannot do anything different about either.
   */
  BODY_UNDECODABLE: { status: 400, text: (detail: string) => detail },
  /** A decoded `Call` that breaks the rules of its type (fields, uuids, resources). */
  CALL_INVALID: { status: 400, text: (detail: string) => `Failed to validate scheduler::Call: ${detail}` },
  /** The same, on the operator API (`/api/v1`), whose message names the master's call. */
  OPERATOR_CALL_INVALID: { status: 400, text: (detail: string) => `Failed to validate master::Call: ${detail}` },
  /** The agent operator API's: `Failed to validate agent::Call: …`. */
  AGENT_CALL_INVALID: { status: 400, text: (detail: string) => `Failed to validate agent::Call: ${detail}` },
  /** The control API (`/sim/v1/`): a body that is not the JSON the call takes. */
  SIM_REQUEST_INVALID: { status: 400, text: (detail: string) => detail },
  /** The executor API's: `Failed to validate executor::Call: …`. */
  EXECUTOR_CALL_INVALID: { status: 400, text: (detail: string) => `Failed to validate executor::Call: ${detail}` },
  /** No encoding the endpoint writes is acceptable; upstream names protobuf first. */
  NOT_ACCEPTABLE: {
    status: 406,
    text: (offered: readonly string[]) => `Expecting 'Accept' to allow ${quoted([...offered].reverse())}`,
  },
  /**
   * The agent operator API's streaming negotiation (upstream's words): no
   * `Accept` it can answer, a `Message-Accept` it cannot, a `Message-Accept`
   * on a call whose answer is no stream, a stream asked of a call that has none.
   */
  STREAMING_NOT_ACCEPTABLE: { status: 406, text: (detail: string) => detail },
  SUBSCRIBE_WITH_STREAM_ID: {
    status: 400,
    text: () => "Subscribe calls should not include the 'Mesos-Stream-Id' header",
  },
  /**
   * Upstream answers 400 here; the spec's error table puts a call without a
   * subscription at 403, and the spec wins. The text and the place in the
   * order stay upstream's.
   */
  FRAMEWORK_NOT_FOUND: { status: 403, text: () => 'Framework cannot be found' },
  /** The executor API's: a framework its agent does not know; upstream's 400 (wire-facts §3). */
  EXECUTOR_FRAMEWORK_NOT_FOUND: { status: 400, text: () => 'Framework cannot be found' },
  /** Disconnected, within its failover timeout. */
  FRAMEWORK_NOT_SUBSCRIBED: { status: 403, text: () => 'Framework is not subscribed' },
  STREAM_ID_MISSING: { status: 400, text: () => "All non-subscribe calls should include the 'Mesos-Stream-Id' header" },
  STREAM_ID_MISMATCH: {
    status: 400,
    text: (streamId: string, frameworkId: string) =>
      `The stream ID '${streamId}' included in this request didn't match the stream ID currently associated with framework ID ${frameworkId}`,
  },
  /** An `UNKNOWN` call: upstream sends no text, hence the default body. */
  NOT_IMPLEMENTED: { status: 501, text: () => '501 Not Implemented.' },
  /** The master refuses what the call asks (a bad role, an UPDATE_FRAMEWORK changing a fixed field): the core's text. */
  CALL_REFUSED: { status: 400, text: (detail: string) => detail },
  /** Operator calls: the agent named is not known (`Agent '<id>' not found`). */
  TARGET_NOT_FOUND: { status: 404, text: (detail: string) => detail },
  /** Operator calls: the target's state forbids the call now. */
  CONFLICT: { status: 409, text: (detail: string) => detail || '409 Conflict.' },
  /** A master asked while none leads (the election after a leader's death is on); upstream's text. */
  NO_LEADER: { status: 503, text: () => 'No leader elected' },
  /** Operator calls: another transition of the target is under way; retry. */
  UNAVAILABLE: { status: 503, text: (detail: string) => detail || '503 Service Unavailable.' },
  /** Authorization declined by the ACLs (`--acls`): the core's text, else the default body. */
  FORBIDDEN: { status: 403, text: (detail: string) => detail || '403 Forbidden.' },
  /** A bug: the server logs the error and tells the client nothing more. */
  INTERNAL: { status: 500, text: () => '500 Internal Server Error.' },
  /**
   * A valid call the node could not carry out (UPDATE_CONTAINER_MEMORY_LIMIT
   * without memory isolation, or on cgroups v2 without the memory controller
   * delegated): upstream's default body; the reason goes to the log.
   */
  CALL_FAILED: { status: 500, text: () => '500 Internal Server Error.' },
  /**
   * ATTACH_CONTAINER_OUTPUT to a container the agent's containerizer cannot
   * attach to: upstream's failure text as the body (`Unknown container
   * <parent>.<id>`, `I/O switchboard server was disabled for this
   * container`, which upstream's CLI reads as a task launched without a TTY).
   */
  CONTAINER_ATTACH_FAILED: { status: 500, text: (detail: string) => detail },
  /**
   * Capacity: a SUBSCRIBE past a cap of the master, checked after
   * SUBSCRIBE_WITH_STREAM_ID. 503 with `Retry-After`, not a 4xx: the call is
   * valid and the cause is the server's load, not the client's (429 would
   * say this client sends too much). Upstream answers 503 while it cannot
   * serve, and scheduler libraries (mesos-go) take 503 as temporary and
   * retry.
   */
  TOO_MANY_SUBSCRIPTIONS: {
    status: 503,
    text: (limit: number) =>
      `Too many subscriptions: the master serves at most ${limit} event streams at once; retry later`,
  },
  /** Counts frameworks connected or within their failover timeout; a re-subscription is never refused by it. */
  TOO_MANY_FRAMEWORKS: {
    status: 503,
    text: (limit: number) =>
      `Too many frameworks: the master holds at most ${limit} frameworks (connected or within their failover timeout); retry once one is removed`,
  },
} as const satisfies Record<string, Entry>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;
export type HttpErrorArgs<C extends HttpErrorCode> = Parameters<(typeof HTTP_ERRORS)[C]['text']>;

export interface HttpError {
  readonly code: HttpErrorCode;
  readonly status: number;
  readonly body: string;
}

/**
 * Details echo the request (a value that did not convert, an id), and a
 * request can be megabytes: a reason is cut to this many characters, the
 * last being an ellipsis, so that an error never costs more than its request.
 */
export const MAX_ERROR_TEXT_CHARS = 300;

/**
 * Folding a line is quadratic in a run of whitespace (the regex retries it
 * from every position), so only this much of a text is ever folded: four
 * times what is shown, enough unless the text holds a long run of
 * whitespace, whose end a reason cut short would lose anyway.
 */
const FOLDED_CHARS = MAX_ERROR_TEXT_CHARS * 4;

/** The status and body of an error; the text is folded onto one line and cut short, whatever a detail carries. */
export function httpError<C extends HttpErrorCode>(code: C, ...args: HttpErrorArgs<C>): HttpError {
  const entry = HTTP_ERRORS[code];
  const text = (entry.text as (...values: HttpErrorArgs<C>) => string)(...args);
  return { code, status: entry.status, body: oneShortLine(text) };
}

function oneShortLine(text: string): string {
  const cut = text.length > FOLDED_CHARS;
  const line = (cut ? text.slice(0, FOLDED_CHARS) : text).replace(/\s*[\r\n]+\s*/g, ' ');
  if (!cut && line.length <= MAX_ERROR_TEXT_CHARS) return line;
  let end = Math.min(line.length, MAX_ERROR_TEXT_CHARS - 1);
  // Never split a surrogate pair: half of one would be written as U+FFFD.
  const last = line.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${line.slice(0, end)}…`;
}

export function sendError<C extends HttpErrorCode>(
  reply: FastifyReply,
  code: C,
  ...args: HttpErrorArgs<C>
): FastifyReply {
  return send(reply, httpError(code, ...args));
}

/** What the route knows of the call a core error answers. */
export interface CallFacts {
  readonly frameworkId: string;
  readonly streamId: string | undefined;
}

/**
 * The entry for each core error code. The texts are this table's; the
 * core's message is used only where it carries a detail (INVALID,
 * FORBIDDEN). The core has one code for a missing and a wrong stream id (a
 * caller does the same about both); the request tells which it was, and
 * upstream words them differently.
 */
export function callError(error: CallError, call: CallFacts): HttpError {
  switch (error.code) {
    case 'INVALID':
      return httpError('CALL_REFUSED', error.message);
    case 'FRAMEWORK_NOT_FOUND':
      return httpError('FRAMEWORK_NOT_FOUND');
    case 'FRAMEWORK_NOT_SUBSCRIBED':
      return httpError('FRAMEWORK_NOT_SUBSCRIBED');
    case 'STREAM_ID':
      return call.streamId === undefined
        ? httpError('STREAM_ID_MISSING')
        : httpError('STREAM_ID_MISMATCH', call.streamId, call.frameworkId);
    case 'FORBIDDEN':
      return httpError('FORBIDDEN', error.message);
    case 'NOT_IMPLEMENTED':
      return httpError('NOT_IMPLEMENTED');
    case 'NOT_FOUND':
      return httpError('TARGET_NOT_FOUND', error.message);
    case 'CONFLICT':
      return httpError('CONFLICT', error.message);
    case 'UNAVAILABLE':
      return httpError('UNAVAILABLE', error.message);
    case 'FAILED':
      return httpError('CALL_FAILED');
  }
}

/**
 * The refusals of an agent's APIs (the executor API, the container calls):
 * the same entries as a scheduler call's, except that an unknown framework
 * is upstream's 400 there. No stream ids on an agent.
 */
export function agentRefusal(error: CallError): HttpError {
  if (error.code === 'FRAMEWORK_NOT_FOUND') return httpError('EXECUTOR_FRAMEWORK_NOT_FOUND');
  return callError(error, { frameworkId: '', streamId: undefined });
}

export function sendCallError(reply: FastifyReply, error: CallError, call: CallFacts): FastifyReply {
  return send(reply, callError(error, call));
}

/** Sends an error already built (with `httpError`), for a route that adds headers of its own. */
export function send(reply: FastifyReply, error: HttpError): FastifyReply {
  return reply.code(error.status).header('content-type', 'text/plain; charset=utf-8').send(error.body);
}
