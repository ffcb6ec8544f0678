/**
 * An event stream read as a client reads it: HTTP chunks, then RecordIO
 * records (`<length>\n<bytes>`), then each record decoded as an `Event` of
 * its API in the encoding the response's Content-Type names; the operator
 * stream's events must also tell one story (`operator-feed-check.ts`), and
 * so must an executor's (`executor-feed-check.ts`). The
 * first problem is kept (the stream cannot be read past it), with the
 * number of records read well before it.
 *
 * A scheduler stream starts with SUBSCRIBED, or with ERROR when the master
 * refuses the subscription; an operator stream with SUBSCRIBED; an
 * executor's with SUBSCRIBED (SHUTDOWN for one being shut down), and never
 * has a second SUBSCRIBED.
 */
import { decodeJson } from '../../src/wire/json.js';
import { decodeProto } from '../../src/wire/proto-codec.js';
import { RecordReader } from '../../src/wire/recordio.js';
import { ExecutorFeedCheck, type ExecutorEventValue } from './executor-feed-check.js';
import { OperatorFeedCheck, type OperatorEventValue } from './operator-feed-check.js';

/** `session`: the output of a task exec session (agent operator API), ProcessIO records. */
export type StreamApi = 'scheduler' | 'operator' | 'executor' | 'session';

const EVENT_TYPES: Record<StreamApi, string> = {
  scheduler: 'mesos.v1.scheduler.Event',
  operator: 'mesos.v1.master.Event',
  executor: 'mesos.v1.executor.Event',
  session: 'mesos.v1.agent.ProcessIO',
};
// An executor the agent is shutting down gets SHUTDOWN instead of SUBSCRIBED.
const FIRST: Record<StreamApi, readonly string[]> = {
  scheduler: ['SUBSCRIBED', 'ERROR'],
  operator: ['SUBSCRIBED'],
  executor: ['SUBSCRIBED', 'SHUTDOWN'],
  session: ['DATA', 'CONTROL'],
};

export class StreamCheck {
  /** Records read and decoded so far. */
  records = 0;
  /** The types of the first few events, for a report. */
  readonly types: string[] = [];
  /** What is wrong with the stream, once something is. */
  problem: string | undefined;
  /** A session's output so far, stdout and stderr as they came. */
  output = '';
  /** The terminating zero-length chunk came: the server ended the stream. */
  ended = false;
  #chunked = Buffer.alloc(0);
  readonly #records = new RecordReader();
  readonly #json: boolean;
  /** The story the events tell, for the APIs whose events must tell one. */
  readonly #feed: ((event: object) => string | undefined) | undefined;

  constructor(
    readonly api: StreamApi,
    contentType: string | undefined,
  ) {
    this.#json = contentType === 'application/json';
    const feed =
      api === 'operator' ? new OperatorFeedCheck() : api === 'executor' ? new ExecutorFeedCheck() : undefined;
    this.#feed = feed === undefined ? undefined : (event) => feed.see(event as OperatorEventValue & ExecutorEventValue);
    if (!this.#json && contentType !== 'application/x-protobuf')
      this.problem = `an event stream of Content-Type ${JSON.stringify(contentType)}`;
  }

  /** Bytes of the response body as they arrive (still chunk-encoded). */
  push(bytes: Buffer): void {
    if (this.problem !== undefined) return;
    if (this.ended) {
      if (bytes.length > 0) this.problem = `${bytes.length} bytes after the stream's last chunk`;
      return;
    }
    this.#chunked = Buffer.concat([this.#chunked, bytes]);
    try {
      this.#dechunk();
    } catch (error) {
      this.problem = `after ${this.records} events: ${(error as Error).message}`;
    }
  }

  /** Reads the chunks complete so far, each record in them as it completes; the rest waits for more bytes. */
  #dechunk(): void {
    for (;;) {
      const eol = this.#chunked.indexOf('\r\n');
      if (eol < 0) {
        if (this.#chunked.length > 32) throw new Error('chunk size line too long');
        return;
      }
      const line = this.#chunked.subarray(0, eol).toString('latin1');
      if (!/^[0-9a-fA-F]{1,8}$/.test(line)) throw new Error(`bad chunk size line ${JSON.stringify(line.slice(0, 40))}`);
      const size = Number.parseInt(line, 16);
      if (this.#chunked.length < eol + 2 + size + 2) return;
      if (this.#chunked.subarray(eol + 2 + size, eol + 4 + size).toString('latin1') !== '\r\n')
        throw new Error('chunk not followed by CRLF');
      const payload = this.#chunked.subarray(eol + 2, eol + 2 + size);
      this.#chunked = this.#chunked.subarray(eol + 4 + size);
      if (size === 0) {
        this.ended = true;
        if (this.#records.pending > 0)
          throw new Error(`the stream ended inside a record (${this.#records.pending} bytes held)`);
        if (this.#chunked.length > 0) throw new Error(`${this.#chunked.length} bytes after the stream's last chunk`);
        return;
      }
      for (const record of this.#records.push(payload)) this.#see(record);
    }
  }

  #see(record: Buffer): void {
    const type = EVENT_TYPES[this.api];
    const root = this.api === 'session' ? 'ProcessIO' : 'Event';
    const decoded = this.#json
      ? decodeJson<{ type?: string }>(type, jsonText(record), root)
      : decodeProto<{ type?: string }>(type, record, root);
    if (!decoded.ok) throw new Error(`a record that is no ${type}: ${decoded.error}`);
    const name = decoded.value.type ?? '(no type)';
    if (this.records === 0 && !FIRST[this.api].includes(name))
      throw new Error(`the first event is ${name}, not ${FIRST[this.api].join(' or ')}`);
    if (this.records > 0 && this.api === 'executor' && name === 'SUBSCRIBED')
      throw new Error(`SUBSCRIBED again after ${this.records} events`);
    const untold = this.#feed?.(decoded.value);
    if (untold !== undefined) throw new Error(`${name}: ${untold}`);
    this.records++;
    if (this.types.length < 5) this.types.push(name);
    const data = (decoded.value as { data?: { data?: Uint8Array | string } }).data?.data;
    if (this.api === 'session' && data !== undefined)
      this.output +=
        typeof data === 'string' ? Buffer.from(data, 'base64').toString('utf8') : Buffer.from(data).toString('utf8');
  }
}

/**
 * A JSON record as text to decode. A scheduler ERROR carries its message at
 * the top level too, where the spec's event table puts it; that string is
 * no field of the message (`message` is the MESSAGE event's payload there).
 */
function jsonText(record: Buffer): string {
  const text = record.toString('utf8');
  if (!text.startsWith('{"type":"ERROR"')) return text;
  try {
    const { message, ...rest } = JSON.parse(text) as Record<string, unknown>;
    return typeof message === 'string' ? JSON.stringify(rest) : text;
  } catch {
    return text;
  }
}
