/**
 * Operator API test helpers: calls in either encoding, answers and events
 * read back as upstream JSON objects whatever the encoding, so that one
 * expectation checks both.
 */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { postRaw, type CallResult } from '../../src/client/scheduler-client.js';
import { decodeJson, encodeJson } from '../../src/wire/json.js';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { RecordReader } from '../../src/wire/recordio.js';

export type Encoding = 'json' | 'protobuf';
export const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };
export type Json = Record<string, any>;

/** The master's operator API, or an agent's. */
type Api = 'master' | 'agent';

export function encodeCall(call: Json, encoding: Encoding, api: Api = 'master'): string | Buffer {
  const text = JSON.stringify(call);
  if (encoding === 'json') return text;
  const decoded = decodeJson<object>(`mesos.v1.${api}.Call`, text);
  if (!decoded.ok) throw new Error(decoded.error);
  return Buffer.from(encodeProto(`mesos.v1.${api}.Call`, decoded.value));
}

export interface OperatorAnswer extends CallResult {
  /** The Response as upstream JSON, when the answer has a message body. */
  readonly response: Json | undefined;
}

/** Posts an operator call to `path` (default `/api/v1`), accepting the same encoding; `headers` adds e.g. `authorization`. */
export async function operatorCall(
  masterUrl: string,
  call: Json,
  encoding: Encoding,
  path = '/api/v1',
  headers: Record<string, string> = {},
  api: Api = 'master',
): Promise<OperatorAnswer> {
  const media = MEDIA[encoding];
  const raw = await postBinary(new URL(path, masterUrl), encodeCall(call, encoding, api), {
    ...headers,
    'content-type': media,
    accept: media,
  });
  const type = raw.headers['content-type'];
  let response: Json | undefined;
  if (raw.status === 200 && type === media && raw.bytes.length > 0) {
    response =
      encoding === 'json'
        ? (JSON.parse(raw.bytes.toString('utf8')) as Json)
        : protoToJson(`mesos.v1.${api}.Response`, raw.bytes);
  }
  return { status: raw.status, body: raw.bytes.toString('utf8'), headers: raw.headers, response };
}

/** The same for an agent's operator API (`<agentUrl>/api/v1`). */
export function agentOperatorCall(
  agentUrl: string,
  call: Json,
  encoding: Encoding,
  headers: Record<string, string> = {},
): Promise<OperatorAnswer> {
  return operatorCall(agentUrl, call, encoding, '/api/v1', headers, 'agent');
}

function protoToJson(type: string, bytes: Uint8Array): Json {
  const decoded = decodeProto<object>(type, bytes, 'Response');
  if (!decoded.ok) throw new Error(decoded.error);
  return JSON.parse(encodeJson(type, decoded.value)) as Json;
}

export function postBinary(
  url: URL,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; bytes: Buffer; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const joined = Buffer.concat(chunks);
        const bytes = res.headers['content-encoding'] === 'gzip' ? gunzipSync(joined) : joined;
        resolve({ status: res.statusCode ?? 0, bytes, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export { postRaw };

/** An operator event stream: SUBSCRIBE, then events as upstream JSON objects. */
export class OperatorStream {
  readonly events: Json[] = [];
  headers: http.IncomingHttpHeaders = {};
  status = 0;
  closed = false;
  #waiters: { match: (e: Json) => boolean; resolve: (e: Json) => void }[] = [];
  #request: http.ClientRequest | undefined;

  constructor(
    private readonly masterUrl: string,
    readonly encoding: Encoding,
    /** Sent with the SUBSCRIBE, e.g. `authorization`. */
    private readonly requestHeaders: Record<string, string> = {},
  ) {}

  open(path = '/api/v1'): Promise<void> {
    const media = MEDIA[this.encoding];
    return new Promise((resolve, reject) => {
      const req = http.request(
        new URL(path, this.masterUrl),
        { method: 'POST', headers: { ...this.requestHeaders, 'content-type': media, accept: media }, agent: false },
        (res) => {
          this.status = res.statusCode ?? 0;
          this.headers = res.headers;
          const reader = new RecordReader();
          res.on('data', (chunk: Buffer) => {
            for (const record of reader.push(chunk)) this.#onEvent(this.#decode(record));
          });
          res.on('close', () => (this.closed = true));
          resolve();
        },
      );
      req.on('error', (e) => (this.status === 0 ? reject(e) : (this.closed = true)));
      req.end(encodeCall({ type: 'SUBSCRIBE' }, this.encoding));
      this.#request = req;
    });
  }

  #decode(record: Buffer): Json {
    return this.encoding === 'json'
      ? (JSON.parse(record.toString('utf8')) as Json)
      : protoToJson('mesos.v1.master.Event', record);
  }

  #onEvent(event: Json): void {
    const i = this.#waiters.findIndex((w) => w.match(event));
    if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(event);
    else this.events.push(event);
  }

  /** The next event of a type (or passing a test), taken out of the queue. */
  next(match: string | ((e: Json) => boolean), timeoutMs = 5_000): Promise<Json> {
    const test = typeof match === 'string' ? (e: Json) => e.type === match : match;
    const i = this.events.findIndex(test);
    if (i >= 0) return Promise.resolve(this.events.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${String(match)}`)), timeoutMs);
      this.#waiters.push({ match: test, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }

  close(): void {
    this.#request?.destroy();
  }
}

export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
