/**
 * What the container engine's socket may answer (spec 001, the engine
 * table), for the rules of `engine-session.ts`: the statuses of the table
 * only, JSON that parses, an error's one-line `message`, a created exec's
 * id; and an exec start's stream, read as an engine client reads it (the
 * head, then 8-byte-headed frames of stdout and stderr, or raw bytes with
 * a terminal).
 */
import type net from 'node:net';
import type { WireRequest, WireResponse } from './transport.js';

/** The engine table's statuses, and its HTTP server's 413 and 431 for a body or a head past its limits (408: see engineVerdict). */
const STATUSES = new Set([200, 201, 400, 404, 409, 413, 431]);

/** A request whose declared body never comes (a Content-Length of its own that lies, or a body cut short): the engine may wait for it, until its request timeout (408). */
export function bodyNeverComes(wire: WireRequest): boolean {
  if (wire.framing === 'long') return true;
  const declared = wire.headers.find(([n]) => n.toLowerCase() === 'content-length')?.[1];
  return declared !== undefined && Number(declared) !== wire.body.length;
}

/** Undefined when the engine's answer is acceptable, else what is wrong with it. */
export function engineVerdict(wire: WireRequest, res: WireResponse): string | undefined {
  if (res.outcome === 'aborted') return undefined;
  if (res.outcome === 'timeout')
    return bodyNeverComes(wire) ? undefined : 'no answer within the per-request timeout (a hang)';
  if (res.outcome === 'closed')
    return bodyNeverComes(wire) || wire.framing === 'short' ? undefined : 'the connection closed without an answer';
  const status = res.status ?? 0;
  // A request whose body never comes is answered 408 once the request timeout has passed; no other one.
  if (!STATUSES.has(status) && !(status === 408 && bodyNeverComes(wire))) return `the engine answered ${status}`;
  const problem =
    wire.method === 'HEAD'
      ? res.body.length > 0
        ? 'a HEAD answered with a body'
        : undefined
      : jsonProblem(status, res.headers['content-type'], res.body);
  if (problem !== undefined) return problem;
  if (res.followUp === 'timeout' && !bodyNeverComes(wire))
    return `answered ${status}, then a second request on the same connection got no answer (a hang)`;
  return undefined;
}

/** What is wrong with a JSON answer of the engine, if anything. */
function jsonProblem(status: number, contentType: string | undefined, body: Buffer): string | undefined {
  if (contentType !== 'application/json')
    return status === 200 && contentType === 'text/plain; charset=utf-8'
      ? undefined
      : `answered ${status} of Content-Type ${JSON.stringify(contentType)}`;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return `answered ${status} with a body that is no JSON`;
  }
  const object =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  if (object === undefined) return `answered ${status} with JSON that is no object`;
  if (status >= 400) {
    const message = object['message'];
    return typeof message === 'string' && message !== '' && !/[\r\n]/.test(message)
      ? undefined
      : `answered ${status} without a one-line message`;
  }
  if (status === 201 && !/^[0-9a-f]{64}$/.test(String(object['Id'])))
    return `answered 201 with the id ${JSON.stringify(object['Id'])}`;
  if ('ExitCode' in object && !(object['ExitCode'] === null || typeof object['ExitCode'] === 'number'))
    return `an exec inspected with ExitCode ${JSON.stringify(object['ExitCode'])}`;
  if ('Running' in object && typeof object['Running'] !== 'boolean')
    return `an exec inspected with Running ${JSON.stringify(object['Running'])}`;
  return undefined;
}

/** An exec start's connection, read as an engine client reads it. */
export class ExecStream {
  status: number | undefined;
  #contentType: string | undefined;
  #headers = '';
  #bytes = Buffer.alloc(0);
  #head = true;
  #out = { stdout: '', stderr: '' };
  #problem: string | undefined;
  closed = false;
  /** Resolves once the head has come, or the connection has closed without one. */
  readonly head: Promise<void>;

  constructor(socket: net.Socket) {
    let done!: () => void;
    this.head = new Promise((resolve) => (done = resolve));
    socket.on('data', (chunk: Buffer) => {
      this.#push(chunk);
      if (!this.#head) done();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.#end();
      done();
    });
  }

  /** The exec started: its stream came. */
  get started(): boolean {
    return this.status === 200;
  }

  stdout(): string {
    return this.#out.stdout;
  }

  #push(chunk: Buffer): void {
    this.#bytes = Buffer.concat([this.#bytes, chunk]);
    if (this.#head) {
      const end = this.#bytes.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.#headers = this.#bytes.subarray(0, end).toString('latin1');
      this.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(this.#headers)?.[1] ?? 0);
      this.#contentType = /^content-type:\s*(.*)$/im.exec(this.#headers)?.[1]?.trim();
      this.#bytes = this.#bytes.subarray(end + 4);
      this.#head = false;
    }
    if (this.status === 200 && this.#contentType === 'application/vnd.docker.multiplexed-stream') this.#frames();
  }

  /** Multiplexed frames: [1 or 2, 0, 0, 0, size (big-endian)] then the payload. */
  #frames(): void {
    while (this.#bytes.length >= 8 && this.#problem === undefined) {
      const [stream, a, b, c] = this.#bytes;
      if ((stream !== 1 && stream !== 2) || a !== 0 || b !== 0 || c !== 0)
        this.#problem = `a frame head ${this.#bytes.subarray(0, 8).toString('hex')}`;
      const size = this.#bytes.readUInt32BE(4);
      if (this.#bytes.length < 8 + size) return;
      const text = this.#bytes.subarray(8, 8 + size).toString('utf8');
      if (stream === 1) this.#out.stdout += text;
      else this.#out.stderr += text;
      this.#bytes = this.#bytes.subarray(8 + size);
    }
  }

  #end(): void {
    if (this.status === 200 && this.#contentType === 'application/vnd.docker.raw-stream')
      this.#out.stdout += this.#bytes.toString('utf8');
    else if (this.status === 200 && this.#bytes.length > 0 && this.#problem === undefined)
      this.#problem = `the stream closed inside a frame (${this.#bytes.length} bytes held)`;
  }

  /** What is wrong with the answer so far, if anything. */
  problem(): string | undefined {
    if (this.#problem !== undefined) return this.#problem;
    if (this.#head) return this.closed ? 'the connection closed without an answer' : undefined;
    const status = this.status ?? 0;
    if (status === 200)
      return /^application\/vnd\.docker\.(raw|multiplexed)-stream$/.test(this.#contentType ?? '')
        ? undefined
        : `a started exec's stream of Content-Type ${this.#contentType}`;
    if (status !== 404 && status !== 409 && status !== 400) return `an exec start answered ${status}`;
    return this.closed || this.#bytes.length > 0
      ? jsonProblem(
          status,
          this.#contentType,
          this.#bytes.subarray(0, Number(/content-length:\s*(\d+)/i.exec(this.#headers)?.[1] ?? this.#bytes.length)),
        )
      : undefined;
  }
}
