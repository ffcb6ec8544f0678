/**
 * HTTP/1.1 requests read by hand from a connection of the container
 * engine's socket (engine/socket.ts), one after the other (keep-alive),
 * until one takes the connection over (an exec's stream).
 *
 * Within limits, as an HTTP server reads: a head of at most 64 KiB (431
 * past it), a body of at most 16 MiB (413), a head within the headers
 * timeout and the whole request within the request timeout, both counted
 * from the request's start (the connection's opening, or the previous
 * answer): 408 past them, or a silent close when not a byte of the request
 * has come. Every refusal is a one-line JSON `message`, and closes.
 *
 * A client that does not read its answers is not read from until it does.
 * The bytes are read in time linear in their number: they are appended to
 * a buffer that grows by doubling, the head's end is searched for in the
 * new bytes only, and a chunked body is decoded as its bytes come.
 */
import type net from 'node:net';

export interface EngineRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

export interface ReadLimits {
  /** Milliseconds from a request's start to the end of its head. */
  readonly headersTimeoutMs: number;
  /** Milliseconds from a request's start to the end of its body. */
  readonly requestTimeoutMs: number;
}

/** The most a request's head and body may hold: past them the engine answers 431 or 413 and closes, as an HTTP server does. */
export const MAX_HEAD_BYTES = 64 * 1024;
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const BODY_TOO_LARGE = 'request body too large';
const MALFORMED_CHUNKS = 'malformed chunked encoding';
/** The longest chunk-size line (with its extensions) before its CRLF. */
const MAX_CHUNK_LINE = 64;

type Answer = (status: number, message: string) => void;

/** Requests one after the other on `socket`, until `handle` takes the connection over. */
export function readRequests(
  socket: net.Socket,
  limits: ReadLimits,
  answer: Answer,
  handle: (request: EngineRequest) => 'keep' | 'taken',
): void {
  const parser = new RequestParser();
  const timers = new RequestTimers(limits, (status, message) =>
    parser.started() ? refuse(status, message) : socket.destroy(),
  );
  const refuse: Answer = (status, message) => {
    stop();
    answer(status, message);
    socket.end();
    // A client that never reads nor closes does not keep the connection either.
    timers.linger(() => socket.destroy());
  };
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    socket.off('data', onData);
    timers.clear();
  };
  const onData = (chunk: Buffer): void => {
    parser.push(chunk);
    for (;;) {
      const next = parser.next();
      if (next === 'incomplete') return;
      if (typeof next === 'object' && 'status' in next) return refuse(next.status, next.message);
      if (next === 'head') {
        timers.headDone();
        continue;
      }
      if (handle(next) === 'taken') {
        stop();
        // Bytes after the start request are already the exec's input.
        const rest = parser.rest();
        if (rest.length > 0) socket.unshift(rest);
        return;
      }
      timers.start();
      // A client that does not read its answers gets no more read until it does: they do not pile up in memory.
      if (socket.writableNeedDrain) return waitForDrain();
    }
  };
  const waitForDrain = (): void => {
    socket.pause();
    socket.once('drain', () => {
      if (stopped) return;
      socket.resume();
      onData(Buffer.alloc(0));
    });
  };
  timers.start();
  socket.on('data', onData);
  socket.on('close', () => timers.clear());
  socket.on('error', () => socket.destroy());
}

/** The headers and request timers of the request being read. */
class RequestTimers {
  #head: NodeJS.Timeout | undefined;
  #request: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: ReadLimits,
    private readonly expired: Answer,
  ) {}

  start(): void {
    this.clear();
    const { headersTimeoutMs, requestTimeoutMs } = this.limits;
    this.#head = setTimeout(
      () => this.expired(408, `the request's head did not come within ${seconds(headersTimeoutMs)}`),
      headersTimeoutMs,
    );
    this.#request = setTimeout(
      () => this.expired(408, `the whole request did not come within ${seconds(requestTimeoutMs)}`),
      requestTimeoutMs,
    );
  }

  headDone(): void {
    clearTimeout(this.#head);
    this.#head = undefined;
  }

  linger(then: () => void): void {
    this.clear();
    this.#request = setTimeout(then, this.limits.headersTimeoutMs);
  }

  clear(): void {
    clearTimeout(this.#head);
    clearTimeout(this.#request);
    this.#head = this.#request = undefined;
  }
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

export type Step = EngineRequest | 'head' | 'incomplete' | { readonly status: number; readonly message: string };

/** The bytes of a connection, appended to a buffer that doubles when full; consumed from its start. */
class ByteQueue {
  #bytes = Buffer.alloc(0);
  #start = 0;
  #end = 0;

  get length(): number {
    return this.#end - this.#start;
  }

  push(chunk: Buffer): void {
    if (this.#end + chunk.length > this.#bytes.length) {
      const needed = this.length + chunk.length;
      // Grow by doubling, or move the unread bytes to the front when they fit: each byte is copied a bounded number of times on average.
      const grown = needed * 2 > this.#bytes.length ? Buffer.alloc(Math.max(needed * 2, 4096)) : this.#bytes;
      this.#bytes.copy(grown, 0, this.#start, this.#end);
      this.#bytes = grown;
      this.#end = this.length;
      this.#start = 0;
    }
    chunk.copy(this.#bytes, this.#end);
    this.#end += chunk.length;
  }

  /** The unread bytes, not copied: valid until the next push. */
  view(): Buffer {
    return this.#bytes.subarray(this.#start, this.#end);
  }

  /** The first `n` unread bytes, copied, and consumed. */
  take(n: number): Buffer {
    const taken = Buffer.from(this.#bytes.subarray(this.#start, this.#start + n));
    this.#start += n;
    // Once all is read, a large buffer (a body of megabytes) is let go.
    if (this.length === 0 && this.#bytes.length > MAX_HEAD_BYTES) this.#bytes = Buffer.alloc(0);
    if (this.length === 0) this.#start = this.#end = 0;
    return taken;
  }
}

interface Head {
  readonly method: string;
  readonly target: string;
  /** The body's length; undefined for a chunked body. */
  readonly length: number | undefined;
}

/** One request after the other from the bytes pushed, each found in time linear in its bytes (exported for its tests). */
export class RequestParser {
  readonly #queue = new ByteQueue();
  /** How many unread bytes were searched for the head's end without finding it. */
  #scanned = 0;
  #head: Head | undefined;
  #chunked: ChunkedBody | undefined;

  push(chunk: Buffer): void {
    this.#queue.push(chunk);
  }

  /** Whether a byte of the request being read has come. */
  started(): boolean {
    return this.#head !== undefined || this.#queue.length > 0;
  }

  next(): Step {
    if (this.#head === undefined) return this.#readHead();
    const { method, target, length } = this.#head;
    let body: Buffer;
    if (length === undefined) {
      const chunked = (this.#chunked ??= new ChunkedBody());
      const decoded = chunked.feed(this.#queue);
      if (decoded === 'incomplete') return decoded;
      if (typeof decoded === 'string') return { status: decoded === BODY_TOO_LARGE ? 413 : 400, message: decoded };
      body = decoded;
    } else {
      if (this.#queue.length < length) return 'incomplete';
      body = this.#queue.take(length);
    }
    this.#head = this.#chunked = undefined;
    this.#scanned = 0;
    const path = target.replace(/^\/v\d+\.\d+(?=\/)/, '').split('?')[0]!;
    return { method, path, body: body.toString('utf8') };
  }

  /** The bytes not read yet. */
  rest(): Buffer {
    return this.#queue.take(this.#queue.length);
  }

  #readHead(): Step {
    const bytes = this.#queue.view();
    const end = bytes.indexOf('\r\n\r\n', Math.max(0, this.#scanned - 3));
    if (end < 0) {
      this.#scanned = bytes.length;
      return bytes.length > MAX_HEAD_BYTES ? { status: 431, message: 'request header fields too large' } : 'incomplete';
    }
    if (end > MAX_HEAD_BYTES) return { status: 431, message: 'request header fields too large' };
    const head = this.#queue
      .take(end + 4)
      .subarray(0, end)
      .toString('latin1')
      .split('\r\n');
    const [method = 'GET', target = '/'] = head[0]!.split(' ');
    const fields = head.slice(1).join('\n');
    const chunked = /^transfer-encoding:\s*chunked\s*$/im.test(fields);
    const length = chunked ? undefined : Number(/^content-length:\s*(\d+)$/im.exec(fields)?.[1] ?? 0);
    if (length !== undefined && length > MAX_BODY_BYTES) return { status: 413, message: BODY_TOO_LARGE };
    this.#head = { method, target, length };
    return 'head';
  }
}

/**
 * A chunked body (`<hex size>[;ext]\r\n<data>\r\n`... `0\r\n\r\n`, no
 * trailers) decoded as its bytes come: each byte is looked at once.
 */
class ChunkedBody {
  #phase: 'size' | 'data' | 'crlf' | 'last-crlf' = 'size';
  #line = '';
  #remaining = 0;
  #crlfSeen = 0;
  #body = Buffer.alloc(0);
  #size = 0;
  #done = false;

  /** Consumes what it can of `queue`: the body once whole, why it is none, or incomplete. */
  feed(queue: ByteQueue): Buffer | string | 'incomplete' {
    const bytes = queue.view();
    let at = 0;
    let outcome: Buffer | string | 'incomplete' = 'incomplete';
    while (at < bytes.length && outcome === 'incomplete') {
      const used = this.#step(bytes.subarray(at));
      if (typeof used === 'string') outcome = used;
      else at += used;
      if (this.#done) outcome = this.#body.subarray(0, this.#size);
    }
    queue.take(at);
    return outcome;
  }

  /** Reads from the start of `bytes`: how many it used, or why the body is none. */
  #step(bytes: Buffer): number | string {
    switch (this.#phase) {
      case 'size': {
        const eol = bytes.indexOf('\n');
        this.#line += bytes.subarray(0, eol < 0 ? bytes.length : eol).toString('latin1');
        if (this.#line.length > MAX_CHUNK_LINE + 1) return MALFORMED_CHUNKS;
        if (eol < 0) return bytes.length;
        const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1).split(';')[0]!.trim() : '';
        this.#line = '';
        if (!/^[0-9a-fA-F]{1,8}$/.test(line)) return MALFORMED_CHUNKS;
        this.#remaining = Number.parseInt(line, 16);
        if (this.#size + this.#remaining > MAX_BODY_BYTES) return BODY_TOO_LARGE;
        this.#phase = this.#remaining === 0 ? 'last-crlf' : 'data';
        return eol + 1;
      }
      case 'data': {
        const n = Math.min(this.#remaining, bytes.length);
        this.#append(bytes.subarray(0, n));
        this.#remaining -= n;
        if (this.#remaining === 0) this.#phase = 'crlf';
        return n;
      }
      default: {
        if (bytes[0] !== (this.#crlfSeen === 0 ? 0x0d : 0x0a)) return MALFORMED_CHUNKS;
        if (++this.#crlfSeen < 2) return 1;
        this.#crlfSeen = 0;
        if (this.#phase === 'last-crlf') this.#done = true;
        this.#phase = 'size';
        return 1;
      }
    }
  }

  #append(data: Buffer): void {
    if (this.#size + data.length > this.#body.length) {
      const grown = Buffer.alloc(Math.max((this.#size + data.length) * 2, 4096));
      this.#body.copy(grown, 0, 0, this.#size);
      this.#body = grown;
    }
    data.copy(this.#body, this.#size);
    this.#size += data.length;
  }
}
