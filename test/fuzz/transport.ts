/**
 * A raw HTTP/1.x client on a plain TCP socket. Node's own client refuses
 * to send what a fuzzer must send (methods that are not tokens, control
 * bytes in header values, a Content-Length that lies), so requests are
 * written byte for byte here and responses parsed just far enough to get a
 * status, the headers and a body.
 *
 * One socket per request: a case never inherits the state a previous case
 * left on a connection. A follow-up `GET /health` on the same socket checks
 * that a kept-alive connection is still in step after an odd request.
 */
import net from 'node:net';
import { StreamCheck } from './stream-check.js';

/**
 * How the body is framed. `short` declares fewer bytes than it sends (the
 * rest reaches the server as the start of a next request); `long` declares
 * more and then half-closes, as a client that died mid-body.
 */
export type Framing = 'length' | 'chunked' | 'none' | 'short' | 'long';

export interface WireRequest {
  readonly port: number;
  readonly method: string;
  /** The request target: a path with its query, `*`, or an absolute URL. */
  readonly target: string;
  readonly version: 'HTTP/1.1' | 'HTTP/1.0';
  /** In order, repeated names allowed; Content-Length and Transfer-Encoding come from `framing`. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  readonly framing: Framing;
  readonly followUp: boolean;
  /** An event stream opened by this request is kept open and handed back, instead of dropped. */
  readonly hold: boolean;
  /** A client that gives up: the socket is destroyed right after the request, or a turn of the event loop later. */
  readonly abort: 'no' | 'now' | 'soon';
  /** Sent to the master operator API: a chunked 200 is its event stream, which has no stream id header. */
  readonly operator: boolean;
  /** Sent to an agent's executor API: a chunked 200 is an executor's event stream, which has no stream id header either. */
  readonly executor?: boolean;
  /**
   * Sent to an agent's operator API: a chunked 200 of Content-Type
   * application/recordio is a session's output stream, seen once its head
   * is there (a command may write nothing for a long while).
   */
  readonly session?: boolean;
  /** Sent over this Unix domain socket (an agent's, for its executors) instead of TCP to `port`. */
  readonly socketPath?: string;
}

/** A request as an ordinary client sends it: HTTP/1.1, framed by its length, one connection, waited for. */
export function plainWire(
  port: number,
  method: string,
  target: string,
  headers: readonly (readonly [string, string])[],
  body = Buffer.alloc(0),
): WireRequest {
  return {
    port,
    method,
    target,
    version: 'HTTP/1.1',
    headers,
    body,
    framing: 'length',
    followUp: false,
    hold: false,
    abort: 'no',
    operator: false,
  };
}

/** `aborted`: the client dropped the connection itself, so there is no answer to judge. */
export type Outcome = 'response' | 'closed' | 'timeout' | 'aborted';

export interface WireResponse {
  readonly outcome: Outcome;
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** A 200 that opened an event stream; `body` holds its first bytes, and the socket was dropped then (unless held). */
  readonly stream: boolean;
  /** An event stream's records as read so far: its first one at least, or the problem that stopped the reading. */
  readonly check?: StreamCheck;
  /** What the follow-up `GET /health` got, when one was sent. */
  readonly followUp: Outcome | number | undefined;
  readonly ms: number;
  /** The socket of an event stream kept open (`hold`); its events are read and dropped. */
  readonly held?: net.Socket;
}

/** Renders the request's bytes: head and body, framed as asked. */
export function requestBytes(req: WireRequest): Buffer {
  const lines = [`${req.method} ${req.target} ${req.version}`, ...req.headers.map(([n, v]) => `${n}: ${v}`)];
  const { body } = req;
  let payload = body;
  switch (req.framing) {
    case 'length':
      if (body.length > 0 || !['GET', 'HEAD'].includes(req.method)) lines.push(`Content-Length: ${body.length}`);
      break;
    case 'short':
      lines.push(`Content-Length: ${Math.max(0, body.length - 1 - (body.length >> 2))}`);
      break;
    case 'long':
      lines.push(`Content-Length: ${body.length + 1 + (body.length >> 1)}`);
      break;
    case 'chunked':
      lines.push('Transfer-Encoding: chunked');
      payload = chunked(body);
      break;
    case 'none':
      payload = Buffer.alloc(0);
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** The body in up to three chunks, so chunk boundaries fall inside tokens. */
function chunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  const cuts = [0, body.length >> 2, body.length >> 1, body.length].filter((c, i, all) => i === 0 || c > all[i - 1]!);
  for (let i = 1; i < cuts.length; i++) {
    const piece = body.subarray(cuts[i - 1], cuts[i]);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n', 'latin1'));
  }
  parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(parts);
}

/** The media types of streams of lines, which are not read as a scheduler's, operator's or executor's records. */
const LINE_STREAMS = /^\s*(application\/x-ndjson|text\/event-stream)\b/i;

interface Parsed {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly stream: boolean;
  readonly check?: StreamCheck;
}

/**
 * An incremental parser of one response. `untilClose` bodies (no length,
 * not chunked) end with the connection; interim 1xx responses are skipped.
 */
class ResponseParser {
  #buffer = Buffer.alloc(0);
  #head: { status: number; headers: Record<string, string> } | undefined;
  /** The event stream's reader, once the head says the body is one. */
  #check: StreamCheck | undefined;
  /** An event stream's first bytes, as they came (chunk-encoded). */
  #streamBytes = Buffer.alloc(0);

  constructor(
    private readonly headRequest: boolean,
    private readonly operator = false,
    private readonly executor = false,
    private readonly session = false,
  ) {}

  push(chunk: Buffer): Parsed | undefined {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    return this.#step(false);
  }

  /** The connection closed: a body read until close is complete now. */
  end(): Parsed | undefined {
    return this.#step(true);
  }

  #step(closed: boolean): Parsed | undefined {
    for (;;) {
      if (this.#head === undefined) {
        const end = this.#buffer.indexOf('\r\n\r\n');
        if (end < 0) return undefined;
        this.#head = parseHead(this.#buffer.subarray(0, end).toString('latin1'));
        this.#buffer = this.#buffer.subarray(end + 4);
        if (this.#head.status >= 100 && this.#head.status < 200 && this.#head.status !== 101) {
          this.#head = undefined;
          continue;
        }
      }
      return this.#body(this.#head, closed);
    }
  }

  #body(head: { status: number; headers: Record<string, string> }, closed: boolean): Parsed | undefined {
    const { status, headers } = head;
    const done = (body: Buffer, stream = false): Parsed => ({ status, headers, body, stream });
    if (this.headRequest || status === 204 || status === 304) return done(Buffer.alloc(0));
    // A stream of lines (the control API's trace and its events) never ends either: it is seen through its first bytes.
    if (status === 200 && LINE_STREAMS.test(headers['content-type'] ?? '')) {
      this.#streamBytes = Buffer.concat([this.#streamBytes, this.#buffer.subarray(0, 4096 - this.#streamBytes.length)]);
      this.#buffer = Buffer.alloc(0);
      return this.#streamBytes.length > 0 || closed ? done(this.#streamBytes, true) : undefined;
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      // An event stream never ends: it is seen through its first event, or its end.
      const api =
        status !== 200
          ? undefined
          : headers['mesos-stream-id'] !== undefined
            ? 'scheduler'
            : this.operator
              ? 'operator'
              : this.executor
                ? 'executor'
                : undefined;
      const session = status === 200 && this.session && headers['content-type'] === 'application/recordio';
      if (api !== undefined || session) {
        this.#check ??= session
          ? new StreamCheck('session', headers['message-content-type'])
          : new StreamCheck(api!, headers['content-type']);
        this.#check.push(this.#buffer);
        this.#streamBytes = Buffer.concat([
          this.#streamBytes,
          this.#buffer.subarray(0, 4096 - this.#streamBytes.length),
        ]);
        this.#buffer = Buffer.alloc(0);
        const check = this.#check;
        const first = session || check.records > 0 || check.problem !== undefined || check.ended || closed;
        return first ? { ...done(this.#streamBytes, true), check } : undefined;
      }
      const body = dechunk(this.#buffer);
      return body === undefined ? undefined : done(body);
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const n = Number(length);
      return this.#buffer.length >= n ? done(this.#buffer.subarray(0, n)) : undefined;
    }
    return closed ? done(this.#buffer) : undefined;
  }
}

function parseHead(text: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...rest] = text.split('\r\n');
  const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of rest) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status, headers };
}

/** The body of a complete chunked encoding, or undefined while it is incomplete. */
function dechunk(buffer: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buffer.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = Number.parseInt(buffer.subarray(at, eol).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size)) return Buffer.concat(parts);
    if (size === 0) return buffer.length >= eol + 4 ? Buffer.concat(parts) : undefined;
    if (buffer.length < eol + 2 + size + 2) return undefined;
    parts.push(buffer.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

const EMPTY: Omit<WireResponse, 'outcome' | 'ms' | 'followUp'> = {
  status: undefined,
  headers: {},
  body: Buffer.alloc(0),
  stream: false,
};

/** Sends one request on a new socket; never rejects: a hang is a `timeout` outcome. */
export function send(req: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(
      req.socketPath !== undefined ? { path: req.socketPath } : { host: '127.0.0.1', port: req.port },
    );
    let parser = new ResponseParser(req.method === 'HEAD', req.operator, req.executor === true, req.session === true);
    let first: Parsed | undefined;
    let settled = false;
    const finish = (outcome: Outcome, parsed: Parsed | undefined, followUp?: Outcome | number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const held = parsed?.stream === true && req.hold ? socket : undefined;
      if (held === undefined) socket.destroy();
      // A held stream is read to its end: every record must be framed and decode.
      else held.removeAllListeners('data').on('data', (chunk: Buffer) => parsed?.check?.push(chunk));
      const base = parsed ?? EMPTY;
      resolve({
        ...base,
        outcome: parsed === undefined ? outcome : 'response',
        followUp,
        ms: performance.now() - started,
        ...(held ? { held } : {}),
      });
    };
    let timer = setTimeout(() => finish('timeout', undefined), timeoutMs);
    const onParsed = (parsed: Parsed) => {
      if (first !== undefined) return finish('response', first, parsed.status);
      first = parsed;
      if (!wantsFollowUp(req, parsed)) return finish('response', parsed);
      // The same socket must still be in step: a second request, a second answer.
      parser = new ResponseParser(false);
      clearTimeout(timer);
      timer = setTimeout(() => finish('response', first, 'timeout'), timeoutMs);
      socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    };
    socket.on('data', (chunk: Buffer) => {
      const parsed = parser.push(chunk);
      if (parsed !== undefined) onParsed(parsed);
    });
    socket.on('close', () => {
      const parsed = parser.end();
      if (first !== undefined) return finish('response', first, parsed?.status ?? 'closed');
      if (parsed !== undefined) return finish('response', parsed);
      finish('closed', undefined);
    });
    // A reset after the server answered and closed is how many refusals end; 'close' follows.
    socket.on('error', () => {});
    socket.write(requestBytes(req));
    if (req.framing === 'long') socket.end();
    if (req.abort === 'now') finish('aborted', undefined);
    else if (req.abort === 'soon') setImmediate(() => finish('aborted', undefined));
  });
}

function wantsFollowUp(req: WireRequest, res: Parsed): boolean {
  if (!req.followUp || res.stream || req.version !== 'HTTP/1.1' || req.framing === 'short' || req.framing === 'long')
    return false;
  const closes = (value: string | undefined) => /\bclose\b/i.test(value ?? '');
  return (
    !closes(res.headers['connection']) && !req.headers.some(([n, v]) => n.toLowerCase() === 'connection' && closes(v))
  );
}
