/**
 * Encoding parity of an HTTP endpoint: one sequence of steps runs twice, on
 * two fresh clusters started alike, once with a client speaking JSON and
 * once with a client speaking protobuf; every reply and every streamed event
 * is normalised to upstream JSON so that the two runs can be compared
 * value for value, together with the clusters' trace hashes.
 *
 * An endpoint is described in one line, e.g.
 *   { path: '/api/v1/scheduler', callType: 'mesos.v1.scheduler.Call', eventType: 'mesos.v1.scheduler.Event' }
 * Calls are written as upstream JSON objects; the protobuf client converts
 * them with the JSON decoder, so both runs send the same message.
 *
 * The two runs are sequential and bind the same ports: the agent and master
 * ports appear in the trace (`agent:add`) and in events (`master_info`,
 * offer URLs), so two clusters on different ports could never hash alike.
 */
import http from 'node:http';
import net from 'node:net';
import type { RunningCluster } from '../../src/start/cluster.js';
import { decodeJson, encodeJson } from '../../src/wire/json.js';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { RecordReader } from '../../src/wire/recordio.js';

export interface Endpoint {
  readonly path: string;
  readonly callType: string;
  readonly eventType: string;
  /** The type of non-empty, non-error reply bodies, for endpoints that answer with a message. */
  readonly responseType?: string;
}

export type Encoding = 'json' | 'protobuf';
export const MEDIA: Readonly<Record<Encoding, string>> = {
  json: 'application/json',
  protobuf: 'application/x-protobuf',
};

export type JsonMessage = Record<string, any>;

/** A reply with its body as text; a message body in the client's encoding becomes upstream JSON text. */
export interface Reply {
  readonly status: number;
  /** `<message>` stands for the client's own media type, which differs by design. */
  readonly contentType: string | undefined;
  readonly body: string;
}

/** What the runs need of a client: any client of the endpoint can take part through this. */
export interface WireClient {
  /** Every event received so far, in order, as upstream JSON. */
  readonly events: readonly JsonMessage[];
  readonly closed: boolean;
  readonly streamId: string | undefined;
  subscribe(call: JsonMessage): Promise<Reply>;
  post(call: JsonMessage): Promise<Reply>;
  disconnect(): void;
}

export type ClientFactory = (endpoint: Endpoint, baseUrl: string, encoding: Encoding) => WireClient;

/** The reply's media type with the client's own message type written `<message>`. */
export function normaliseType(type: string | string[] | undefined, encoding: Encoding): string | undefined {
  const text = Array.isArray(type) ? type.join(', ') : type;
  return text === MEDIA[encoding] ? '<message>' : text;
}

/** A client of one endpoint in one encoding: posts calls, reads one event stream. */
export class EndpointClient implements WireClient {
  readonly events: JsonMessage[] = [];
  closed = false;
  streamId: string | undefined;
  readonly #url: URL;
  readonly #agent = new http.Agent({ keepAlive: true });
  #stream: http.ClientRequest | undefined;

  constructor(
    readonly endpoint: Endpoint,
    baseUrl: string,
    readonly encoding: Encoding,
  ) {
    this.#url = new URL(endpoint.path, baseUrl);
  }

  /** The bytes of a call given as an upstream JSON object; a call the decoder rejects is a test bug. */
  encode(call: JsonMessage): Buffer {
    const text = JSON.stringify(call);
    if (this.encoding === 'json') return Buffer.from(text, 'utf8');
    const decoded = decodeJson<object>(this.endpoint.callType, text);
    if (!decoded.ok) throw new Error(`not a valid ${this.endpoint.callType}: ${decoded.error}`);
    return Buffer.from(encodeProto(this.endpoint.callType, decoded.value));
  }

  /** Posts the call that opens the event stream; resolves once the reply headers (or a whole error reply) arrive. */
  subscribe(call: JsonMessage): Promise<Reply> {
    const media = MEDIA[this.encoding];
    return new Promise((resolve, reject) => {
      let answered = false;
      // A connection of its own: a pooled one may belong to a server closed a moment ago.
      const headers = { 'content-type': media, accept: media };
      const req = http.request(this.#url, { method: 'POST', headers, agent: false }, (res) => {
        answered = true;
        if (res.statusCode !== 200) {
          void readReply(res, this).then(resolve, reject);
          return;
        }
        const id = res.headers['mesos-stream-id'];
        this.streamId = typeof id === 'string' ? id : undefined;
        const reader = new RecordReader();
        res.on('data', (chunk: Buffer) => {
          for (const record of reader.push(chunk)) this.events.push(this.#safeDecode(record));
        });
        res.on('close', () => this.#close());
        resolve({ status: 200, contentType: normaliseType(res.headers['content-type'], this.encoding), body: '' });
      });
      req.on('error', (error) => (answered ? this.#close() : reject(error)));
      this.#stream = req;
      req.end(this.encode(call));
    });
  }

  /** Posts a call with the stream id of the subscription, if there is one. */
  post(call: JsonMessage): Promise<Reply> {
    const headers: Record<string, string> = { 'content-type': MEDIA[this.encoding] };
    if (this.streamId !== undefined) headers['mesos-stream-id'] = this.streamId;
    return new Promise((resolve, reject) => {
      const req = http.request(this.#url, { method: 'POST', headers, agent: this.#agent }, (res) => {
        void readReply(res, this).then(resolve, reject);
      });
      req.on('error', reject);
      req.end(this.encode(call));
    });
  }

  decodeEvent(record: Buffer): JsonMessage {
    return this.#toJson(this.endpoint.eventType, record, 'Event');
  }

  decodeBody(body: Buffer, contentType: string | undefined): string {
    if (this.endpoint.responseType === undefined || contentType !== MEDIA[this.encoding] || body.length === 0) {
      return body.toString('utf8');
    }
    return JSON.stringify(this.#toJson(this.endpoint.responseType, body, 'Response'));
  }

  disconnect(): void {
    this.#stream?.destroy();
    this.#agent.destroy();
  }

  #toJson(typeName: string, bytes: Buffer, label: string): JsonMessage {
    if (this.encoding === 'json') return JSON.parse(bytes.toString('utf8')) as JsonMessage;
    const decoded = decodeProto<object>(typeName, bytes, label);
    if (!decoded.ok) throw new Error(decoded.error);
    return JSON.parse(encodeJson(typeName, decoded.value)) as JsonMessage;
  }

  /** An undecodable record becomes a marker event, so that the comparison shows it. */
  #safeDecode(record: Buffer): JsonMessage {
    try {
      return this.decodeEvent(record);
    } catch (error) {
      return { type: '<undecodable>', error: (error as Error).message, bytes: record.toString('base64') };
    }
  }

  #close(): void {
    this.closed = true;
  }
}

function readReply(res: http.IncomingMessage, client: EndpointClient): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () => {
      const type = res.headers['content-type'];
      resolve({
        status: res.statusCode ?? 0,
        contentType: normaliseType(type, client.encoding),
        body: client.decodeBody(Buffer.concat(chunks), type),
      });
    });
  });
}

// ---- runs ----

/** What a step sees of its run: the events so far, the calls sent so far, the agents. */
export interface RunView {
  readonly events: readonly JsonMessage[];
  readonly calls: readonly JsonMessage[];
  readonly agentIds: readonly string[];
}

export type Step =
  | { readonly kind: 'subscribe'; readonly call: (view: RunView) => JsonMessage }
  | { readonly kind: 'call'; readonly call: (view: RunView) => JsonMessage }
  | { readonly kind: 'advance'; readonly ms: number };

export interface Ports {
  readonly master: number;
  /** The first agent's port; the others follow. */
  readonly agentBase: number;
}

export interface ParityOptions {
  readonly endpoint: Endpoint;
  readonly agents: number;
  /** Starts a fresh cluster on the given ports, the same way for both runs. */
  readonly start: (ports: Ports) => Promise<RunningCluster>;
  readonly steps: readonly Step[];
  /** The client to run with (default: an EndpointClient). */
  readonly client?: ClientFactory;
  /** Trace entries that stand for one streamed event each (default: kinds starting with `event:`). */
  readonly isEventEntry?: (kind: string) => boolean;
}

export interface TrailEntry {
  readonly step: number;
  /** The call sent, as JSON text, or `advance <ms>`. */
  readonly input: string;
  readonly reply?: Reply;
}

export interface RunRecord {
  readonly encoding: Encoding;
  readonly trail: readonly TrailEntry[];
  readonly events: readonly JsonMessage[];
  readonly traceHash: string;
  readonly streamId: string | undefined;
}

export async function runOnce(options: ParityOptions, encoding: Encoding, ports: Ports): Promise<RunRecord> {
  const running = await options.start(ports);
  const isEvent = options.isEventEntry ?? ((kind: string) => kind.startsWith('event:'));
  let emitted = 0;
  running.cluster.trace.onEntry((entry) => {
    if (isEvent(entry.kind)) emitted++;
  });
  const client = (options.client ?? ((e, url, enc) => new EndpointClient(e, url, enc)))(
    options.endpoint,
    running.masterUrl,
    encoding,
  );
  const calls: JsonMessage[] = [];
  const trail: TrailEntry[] = [];
  const view: RunView = { events: client.events, calls, agentIds: running.agents.map((a) => a.id) };
  try {
    for (const [index, step] of options.steps.entries()) {
      if (step.kind === 'advance') {
        running.advance(step.ms);
        trail.push({ step: index, input: `advance ${step.ms}` });
      } else {
        const call = step.call(view);
        calls.push(call);
        const reply = step.kind === 'subscribe' ? await client.subscribe(call) : await client.post(call);
        trail.push({ step: index, input: JSON.stringify(call), reply });
      }
      await waitForEvents(client, emitted);
    }
    return {
      encoding,
      trail,
      events: [...client.events],
      traceHash: running.cluster.trace.hash(),
      streamId: client.streamId,
    };
  } finally {
    client.disconnect();
    await running.close();
  }
}

/** Resolves once `count` events have arrived or the stream has closed. */
export async function waitForEvents(client: WireClient, count: number, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let spins = 0; client.events.length < count && !client.closed; spins++) {
    if (Date.now() > deadline) throw new Error(`${client.events.length} of ${count} events after ${timeoutMs} ms`);
    // Events usually follow within a turn or two of the event loop; after that, back off.
    await new Promise((resolve) => (spins < 100 ? setImmediate(resolve) : setTimeout(resolve, 2)));
  }
}

/** Runs the steps once per encoding; retries on fresh ports if another process takes them in between. */
export async function runParity(options: ParityOptions): Promise<readonly [RunRecord, RunRecord]> {
  for (let attempt = 1; ; attempt++) {
    const base = await reservePorts(1 + options.agents);
    const ports = { master: base, agentBase: base + 1 };
    try {
      const json = await runOnce(options, 'json', ports);
      const protobuf = await runOnce(options, 'protobuf', ports);
      return [json, protobuf];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}

/** The first difference between two runs, described for a failure message; undefined when they agree. */
export function firstDifference(a: RunRecord, b: RunRecord): string | undefined {
  const steps = Math.max(a.trail.length, b.trail.length);
  for (let i = 0; i < steps; i++) {
    const x = a.trail[i];
    const y = b.trail[i];
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      return `step ${i} differs\n  ${a.encoding}: ${JSON.stringify(x)}\n  ${b.encoding}: ${JSON.stringify(y)}`;
    }
  }
  const events = Math.max(a.events.length, b.events.length);
  for (let i = 0; i < events; i++) {
    const x = JSON.stringify(a.events[i]);
    const y = JSON.stringify(b.events[i]);
    if (x !== y)
      return `event ${i} of ${a.events.length}/${b.events.length} differs\n  ${a.encoding}: ${x}\n  ${b.encoding}: ${y}`;
  }
  if (a.streamId !== b.streamId) return `stream ids differ: ${a.streamId} / ${b.streamId}`;
  if (a.traceHash !== b.traceHash) return `trace hashes differ: ${a.traceHash} / ${b.traceHash}`;
  return undefined;
}

// ---- ports ----

const PORT_LOW = 20_000;
// Below the usual ephemeral range, so port-0 listeners elsewhere do not take them.
const PORT_HIGH = 32_000;

/** A base port such that `count` consecutive ports from it are free now. */
export async function reservePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW - count));
    let free = true;
    for (let p = base; p < base + count && free; p++) free = await portIsFree(p);
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
