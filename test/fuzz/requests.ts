/**
 * Generated requests for every endpoint of the master and its agents: the
 * scheduler API, the read endpoints and their `/master/` forms, an agent's
 * `/health` and `/version`, unknown paths. A request is data (`RequestSpec`):
 * which server, method, target, headers, body and framing, with tokens
 * where live ids go and the body's mutations as a list; `render` turns it
 * into bytes against a live framework just before it is sent.
 */
import fc from 'fast-check';
import { decodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { CALL_TYPE, oddString, schemaCall, templateCall, token } from './calls.js';
import { OPERATOR_CALL_TYPE, operatorSchemaCall, operatorTemplateCall } from './operator-calls.js';
import {
  mutateBytes,
  mutateJson,
  mutateProto,
  type ByteMutation,
  type Json,
  type JsonMutation,
  type ProtoMutation,
} from './mutate.js';
import { byteMutations, jsonMutations, protoMutations } from './mutations.js';
import type { Framing, WireRequest } from './transport.js';

export type Encoding = 'json' | 'protobuf';

export type BodySpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  | {
      readonly kind: 'call';
      /** The message the call is: the scheduler's or the master's `Call`. */
      readonly message: string;
      readonly encoding: Encoding;
      readonly call: Json;
      readonly json: readonly JsonMutation[];
      readonly proto: readonly ProtoMutation[];
      readonly bytes: readonly ByteMutation[];
    };

export interface RequestSpec {
  /** 0 is the master, i > 0 the agent i - 1 (modulo the agents there are). */
  readonly server: number;
  readonly method: string;
  /** The request target; may hold tokens (`@@framework`) in its query. */
  readonly target: string;
  readonly version: 'HTTP/1.1' | 'HTTP/1.0';
  /** Values may hold tokens; `Host` is added unless `host` says otherwise. */
  readonly headers: readonly (readonly [string, string])[];
  readonly host: 'normal' | 'missing' | 'odd';
  readonly body: BodySpec;
  readonly framing: Framing;
  readonly followUp: boolean;
  /** A SUBSCRIBE that opens a stream keeps it open for a while, so that several frameworks are about. */
  readonly hold: boolean;
  /** The client drops the connection without waiting for the answer. */
  readonly abort: 'no' | 'now' | 'soon';
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
export const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

export const SCHEDULER_PATHS = ['/api/v1/scheduler', '/master/api/v1/scheduler'];
const READS = [
  '/state',
  '/state.json',
  '/slaves',
  '/frameworks',
  '/tasks',
  '/roles',
  '/state-summary',
  '/version',
  '/health',
  '/redirect',
];
export const MASTER_READ_PATHS = [...READS, ...READS.map((p) => `/master${p}`), '/metrics/snapshot'];
/** The master operator API: its paths and the paths below them that it serves too. */
export const OPERATOR_PATHS = [
  '/api/v1',
  '/master/api/v1',
  '/api/v1/operator',
  '/master/api/v1/operator',
  '/api/v1/',
  '/api/v1/operator/x',
];
export const AGENT_PATHS = ['/health', '/version', '/slave(1)/health', '/slave(1)/version'];

const unknownPath = fc.oneof(
  fc.constantFrom(
    '/',
    '/master',
    '/master/',
    '/api/v1',
    '/api/v1/scheduler/',
    '/API/V1/SCHEDULER',
    '/api/v1//scheduler',
    '/master/metrics/snapshot',
    '/state/',
    '/STATE',
    '/api/v1/executor',
    '/api/v1/operator',
    '/slave(1)/state',
    '/slave(2)/health',
    '/%',
    '/%2e%2e/state',
    '/..',
    '*',
    'http://127.0.0.1/state',
    '//state',
    '/state;x',
    '/redirect/x',
    '/health/',
    '/metrics',
    '/files/read',
    `/${'a'.repeat(5000)}`,
  ),
  fc
    .array(fc.stringMatching(/^[\w.~%()-]{0,10}$/), { minLength: 1, maxLength: 4 })
    .map((parts) => `/${parts.join('/')}`),
);

const queryValue = fc.oneof(
  w(
    6,
    fc.constantFrom(
      '0',
      '1',
      '10',
      '-1',
      '1.5',
      'abc',
      'NaN',
      'Infinity',
      '1e3',
      '0x10',
      '99999999999999999999',
      '',
      '%20',
      '+0',
      '%32',
      '%zz',
      '%',
      'asc',
      'des',
      'desc',
      'cb',
      'cb.x_1',
      'alert(1)',
    ),
  ),
  w(3, fc.constantFrom(token.framework, token.task(0), token.agent(0), token.agent(1))),
  w(2, fc.nat().map(String)),
  w(2, fc.string({ maxLength: 10 }).map(encodeURIComponent)),
  w(1, fc.string({ maxLength: 10 })),
  w(
    1,
    fc.integer({ min: 1000, max: 20000 }).map((n) => 'x'.repeat(n)),
  ),
);
const queryName = fc.oneof(
  w(6, fc.constantFrom('limit', 'offset', 'order', 'task_id', 'framework_id', 'slave_id', 'jsonp')),
  w(1, fc.constantFrom('x', '', '%', 'limit[]', 'LIMIT')),
);
const query = fc
  .tuple(
    fc.array(fc.tuple(queryName, queryValue, fc.boolean()), { minLength: 1, maxLength: 5 }),
    fc.constantFrom('&', ';', '&&'),
  )
  // A parameter is repeated by drawing its name twice; `false` leaves out the `=`.
  .map(([params, sep]) => `?${params.map(([k, v, eq]) => (eq ? `${k}=${v}` : k)).join(sep)}`);

export type Headers = [string, string][];
export const none = fc.constant<Headers>([]);
/** One header of this name, with each value drawn. */
export const header = (name: string, values: fc.Arbitrary<string>) => values.map((v): Headers => [[name, v]]);

const headerValue = fc.oneof(
  w(6, fc.string({ maxLength: 20 })),
  w(1, fc.constantFrom('', ' ', '\t', 'a\u0000b', 'a\u007fb', 'é', '\u00ff', 'x'.repeat(9000))),
  w(1, fc.string({ unit: 'binary', maxLength: 10 })),
);
const headerName = fc.oneof(
  w(
    8,
    fc.constantFrom(
      'X-Fuzz',
      'Connection',
      'Expect',
      'Transfer-Encoding',
      'Content-Encoding',
      'Content-Length',
      'Upgrade',
      'Accept-Charset',
      'Cookie',
      'Authorization',
    ),
  ),
  w(1, fc.stringMatching(/^[\w!#$%&'*+.^`|~-]{1,12}$/)),
  w(1, fc.constantFrom('', 'a b', 'x:y')),
);
export const randomHeaders = fc.oneof(
  w(3, none),
  w(1, fc.array(fc.tuple(headerName, headerValue), { minLength: 1, maxLength: 2 })),
);

const oddMedia = fc.constantFrom(
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'json',
  '',
  '*/*',
  'text/plain',
  'application/x-protobuf;x=1',
  'application/jsonx',
  'application/json, application/x-protobuf',
  'multipart/form-data; boundary=x',
  'application/',
);
export const contentType = (encoding: Encoding) =>
  fc.oneof(
    w(12, fc.constant<Headers>([['Content-Type', MEDIA[encoding]]])),
    w(1, none),
    w(1, fc.constant<Headers>([['Content-Type', MEDIA[encoding === 'json' ? 'protobuf' : 'json']]])),
    w(2, header('Content-Type', fc.oneof(oddMedia, headerValue))),
    w(
      1,
      fc.constant<Headers>([
        ['Content-Type', MEDIA[encoding]],
        ['Content-Type', MEDIA.json],
      ]),
    ),
  );
const acceptValue = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/x-protobuf',
    '*/*',
    'application/*',
    'text/html',
    'application/json;q=0',
  ),
  fc.constantFrom(
    'application/json;q=0, application/x-protobuf;q=0',
    'application/x-protobuf;q=0.5, application/json;q=0.1',
    '*/*;q=0',
  ),
  fc.constantFrom(
    'application/json;q=abc',
    'application/json;q=1e999',
    'application/json;q=-1',
    'application/json;q=NaN',
    ',,,',
    ';q=1',
  ),
  headerValue,
);
export const accept = fc.oneof(w(4, none), w(2, header('Accept', acceptValue)));
/** What an ordinary client accepts: nothing said, or an encoding the master writes. */
const plainAccept = fc.oneof(
  w(4, none),
  w(2, header('Accept', fc.constantFrom(...Object.values(MEDIA), '*/*', 'application/*'))),
);
const streamIdValue = fc.oneof(
  w(10, fc.constant(token.stream)),
  w(2, fc.uuid()),
  w(1, fc.oneof(oddString, fc.constantFrom('', ' ', token.framework, 'x'.repeat(9000)))),
);
const streamIdName = fc.constantFrom('Cluster-Stream-Id', 'MESOS-STREAM-ID', 'mesos-stream-id', 'cluster-stream-id');
const streamId = fc.oneof(
  w(10, header('Mesos-Stream-Id', streamIdValue)),
  w(2, none),
  w(
    2,
    fc.tuple(streamIdName, streamIdValue).map(([n, v]): Headers => [[n, v]]),
  ),
  w(
    1,
    fc.tuple(streamIdValue, streamIdValue).map(
      ([a, b]): Headers => [
        ['Mesos-Stream-Id', a],
        ['Cluster-Stream-Id', b],
      ],
    ),
  ),
  w(
    1,
    fc.tuple(streamIdValue, streamIdValue).map(
      ([a, b]): Headers => [
        ['Mesos-Stream-Id', a],
        ['Mesos-Stream-Id', b],
      ],
    ),
  ),
);
/** Credentials of a secured run (`secured.ts`): mostly the operator's, sometimes a refused principal's or a wrong secret. */
const operatorCredentials = fc
  .oneof(w(6, fc.constant(1)), w(2, fc.constant(2)), w(1, fc.constant(0)), w(1, fc.constant(3)))
  .map((i): Headers => [['Authorization', token.auth(i)]]);
const credentials = fc.oneof(
  w(3, operatorCredentials),
  w(2, fc.constant<Headers>([['Authorization', token.auth(0)]])),
  w(1, none),
  w(
    1,
    header(
      'Authorization',
      fc.constantFrom(
        'Basic',
        'Basic ',
        'Basic  b3BzOnNlY3JldA==',
        'basic b3BzOnNlY3JldA==',
        'Basic b3BzOnNlY3JldA',
        'Bearer x',
        'Basic Og==',
      ),
    ),
  ),
);
const encodings = fc.constantFrom(
  'gzip',
  '*',
  'gzip;q=0',
  'identity',
  'br',
  'gzip, deflate, br',
  'gzip;q=NaN',
  '*;q=0',
  'GZIP',
  '',
);
export const acceptEncoding = fc.oneof(w(3, none), w(2, header('Accept-Encoding', fc.oneof(encodings, headerValue))));

/** A call's body in `encoding`, mutated or not. */
export const bodyOf = (
  encoding: Encoding,
  call: fc.Arbitrary<Json>,
  mutated: boolean,
  message = CALL_TYPE,
): fc.Arbitrary<BodySpec> =>
  fc.record({
    kind: fc.constant('call' as const),
    message: fc.constant(message),
    encoding: fc.constant(encoding),
    call,
    json: mutated ? jsonMutations : fc.constant([]),
    proto: mutated && encoding === 'protobuf' ? protoMutations : fc.constant([]),
    bytes: mutated ? byteMutations : fc.constant([]),
  });

const oddText = fc.constantFrom(
  '{}',
  '[]',
  'null',
  '""',
  '{"type":"SUBSCRIBE"}',
  '\ufeff{}',
  '{}{}',
  "{'type':'TEARDOWN'}",
  ' ',
  '{"type":"TEARDOWN","framework_id":{"value":"x"}}/*c*/',
);

/** A body for an API: a template or (`schemaWeight` in 3 + `schemaWeight`) schema call of `message`, as JSON or protobuf, mutated a third of the time; now and then no call at all. */
export const callBody = (
  template: fc.Arbitrary<Json>,
  schema: fc.Arbitrary<Json>,
  message: string,
  schemaWeight = 2,
): fc.Arbitrary<BodySpec> =>
  fc.oneof(
    w(
      30,
      fc
        .tuple(
          fc.constantFrom<Encoding>('json', 'json', 'protobuf'),
          fc.oneof(w(3, template), w(schemaWeight, schema)),
          fc.nat({ max: 2 }),
        )
        .chain(([encoding, call, m]) => bodyOf(encoding, fc.constant(call), m === 0, message)),
    ),
    w(1, fc.constant({ kind: 'none' } as const)),
    w(
      2,
      fc.oneof(fc.string({ maxLength: 40 }), oddText).map((text) => ({ kind: 'text', text }) as const),
    ),
    w(
      1,
      fc.uint8Array({ maxLength: 64 }).map((b) => ({ kind: 'bytes', bytes: [...b] }) as const),
    ),
  );
const schedulerBody = callBody(templateCall, schemaCall, CALL_TYPE);
const operatorBody = callBody(operatorTemplateCall, operatorSchemaCall, OPERATOR_CALL_TYPE);

export const framing = fc.oneof(
  w(20, fc.constant<Framing>('length')),
  w(3, fc.constant<Framing>('chunked')),
  w(1, fc.constantFrom<Framing>('none', 'short', 'long')),
);
export const version = fc.oneof(w(20, fc.constant('HTTP/1.1' as const)), w(1, fc.constant('HTTP/1.0' as const)));
export const host = fc.oneof(
  w(30, fc.constant('normal' as const)),
  w(1, fc.constantFrom('missing' as const, 'odd' as const)),
);
export const method = (usual: fc.Arbitrary<string>) =>
  fc.oneof(
    w(30, usual),
    w(
      3,
      fc.constantFrom(
        'GET',
        'HEAD',
        'POST',
        'PUT',
        'DELETE',
        'PATCH',
        'OPTIONS',
        'TRACE',
        'QUERY',
        'PROPFIND',
        'SEARCH',
        'CONNECT',
      ),
    ),
    w(1, fc.oneof(fc.constantFrom('get', 'Post', 'M-SEARCH', 'BREW', 'G(T', ''), fc.stringMatching(/^[A-Z]{1,10}$/))),
  );

export function assemble(parts: {
  server: number;
  method: string;
  target: string;
  headers: (readonly [string, string])[][];
  body: BodySpec;
  framing: Framing;
  version: 'HTTP/1.1' | 'HTTP/1.0';
  host: 'normal' | 'missing' | 'odd';
  followUp: boolean;
  hold?: boolean;
  abort: 'no' | 'now' | 'soon';
}): RequestSpec {
  let headers = parts.headers.flat();
  // Without a body, a stray Content-Length or Transfer-Encoding announces bytes that never come: the
  // server is right to wait for them (until its request timeout), so such a request tells nothing.
  if (parts.framing === 'none')
    headers = headers.filter(([name]) => !/^(content-length|transfer-encoding)$/i.test(name));
  return { ...parts, headers, hold: parts.hold ?? false };
}

export const abort = fc.oneof(
  w(30, fc.constant('no' as const)),
  w(1, fc.constantFrom('now' as const, 'soon' as const)),
);
export const fuzzyRequest = {
  method: method(fc.constant('POST')),
  framing,
  version,
  host,
  followUp: fc.boolean(),
  hold: fc.boolean(),
  abort,
};
/** What an ordinary client sends, so that half of the calls are judged on their bodies alone. */
export const plainRequest = {
  method: fc.constant('POST'),
  framing: fc.constant<Framing>('length'),
  version: fc.constant('HTTP/1.1' as const),
  host: fc.constant('normal' as const),
  followUp: fc.boolean(),
  hold: fc.boolean(),
  abort,
};

/** A request to the scheduler API, mostly a POST with a call in it. */
const schedulerRequest = fc
  .oneof(
    fc.record({
      target: fc.constantFrom(...SCHEDULER_PATHS),
      body: schedulerBody,
      plain: fc.constant(true),
      ...plainRequest,
    }),
    fc.record({
      target: fc.constantFrom(...SCHEDULER_PATHS),
      body: schedulerBody,
      plain: fc.constant(false),
      ...fuzzyRequest,
    }),
  )
  .chain(({ plain, ...r }) => {
    const encoding: Encoding = r.body.kind === 'call' ? r.body.encoding : 'json';
    const call = r.body.kind === 'call' ? r.body.call : null;
    const subscribe = call !== null && typeof call === 'object' && !Array.isArray(call) && call['type'] === 'SUBSCRIBE';
    // An ordinary scheduler sends no stream id with its SUBSCRIBE, and its stream's id with anything else.
    const plainStreamId: Headers = subscribe ? [] : [['Mesos-Stream-Id', token.stream]];
    const headers = plain
      ? fc.tuple(
          fc.constant<Headers>([
            ['Content-Type', MEDIA[encoding]],
            ['Authorization', token.auth(0)],
          ]),
          fc.constant(plainStreamId),
          accept,
        )
      : fc.tuple(contentType(encoding), accept, streamId, acceptEncoding, randomHeaders, credentials);
    return headers.map((h) => assemble({ ...r, server: 0, headers: h }));
  });

/** An operator stream costs the master little: most are held, and read to the end of the run. */
const holdMostly = fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false)));

/** A request to the operator API, mostly a POST with a call in it; a SUBSCRIBE's stream is held open half the time. */
const operatorRequest = fc
  .oneof(
    fc.record({
      target: fc.constantFrom(...OPERATOR_PATHS.slice(0, 2)),
      body: operatorBody,
      plain: fc.constant(true),
      ...plainRequest,
      hold: holdMostly,
    }),
    fc.record({
      target: fc.constantFrom(...OPERATOR_PATHS),
      body: operatorBody,
      plain: fc.constant(false),
      ...fuzzyRequest,
      hold: holdMostly,
    }),
  )
  .chain(({ plain, ...r }) => {
    const encoding: Encoding = r.body.kind === 'call' ? r.body.encoding : 'json';
    const headers = plain
      ? fc.tuple(
          fc.constant<Headers>([['Content-Type', MEDIA[encoding]]]),
          plainAccept,
          acceptEncoding,
          operatorCredentials,
        )
      : fc.tuple(
          contentType(encoding),
          accept,
          acceptEncoding,
          randomHeaders,
          fc.oneof(w(6, none), w(1, streamId)),
          credentials,
        );
    return headers.map((h) => assemble({ ...r, server: 0, headers: h }));
  });

/** A read of the master, mostly a GET, with a query a third of the time. */
const readRequest = fc
  .record({
    path: fc.oneof(w(8, fc.constantFrom(...MASTER_READ_PATHS)), w(1, unknownPath)),
    query: fc.option(query, { freq: 2 }),
    method: method(fc.constantFrom('GET', 'GET', 'HEAD')),
    body: fc.oneof(
      w(8, fc.constant({ kind: 'none' } as const)),
      w(
        1,
        fc.string({ maxLength: 20 }).map((text) => ({ kind: 'text', text }) as const),
      ),
    ),
    headers: fc.tuple(
      accept,
      acceptEncoding,
      randomHeaders,
      fc.oneof(w(4, none), w(1, header('Content-Type', fc.oneof(oddMedia, fc.constant('application/json'))))),
    ),
    framing,
    version,
    host,
    followUp: fc.boolean(),
    abort,
  })
  .map(({ path, query: q, ...r }) => assemble({ ...r, server: 0, target: `${path}${q ?? ''}` }));

/** A request to an agent: its own endpoints, the master's, or nonsense. */
const agentRequest = fc
  .record({
    server: fc.integer({ min: 1, max: 2 }),
    path: fc.oneof(
      w(6, fc.constantFrom(...AGENT_PATHS)),
      w(1, fc.constantFrom(...SCHEDULER_PATHS, '/state', '/master/health')),
      w(1, unknownPath),
    ),
    query: fc.option(query, { freq: 4 }),
    method: method(fc.constantFrom('GET', 'HEAD')),
    body: fc.oneof(w(6, fc.constant({ kind: 'none' } as const)), w(1, schedulerBody)),
    headers: fc.tuple(accept, acceptEncoding, randomHeaders),
    framing,
    version,
    host,
    followUp: fc.boolean(),
    abort,
  })
  .map(({ path, query: q, ...r }) => assemble({ ...r, target: `${path}${q ?? ''}` }));

export const requestSpec: fc.Arbitrary<RequestSpec> = fc.oneof(
  w(12, schedulerRequest),
  w(6, operatorRequest),
  w(4, readRequest),
  w(2, agentRequest),
);

/** What resolves the tokens of a body: the live framework, or the live executors. */
export interface TokenResolver {
  /** `frameworkId`: the framework the call names, whose stream id `@@stream` stands for. */
  resolveText(text: string, frameworkId?: string): string;
  resolveJson(value: Json): Json;
}

/** `encodeURIComponent`, with a lone surrogate (which it cannot encode) sent as U+FFFD. */
export const encodePathPart = (text: string): string => encodeURIComponent(text.replace(/\p{Cs}/gu, '\ufffd'));

/** A JSON value with every token in its strings resolved by `resolveText`. */
export function resolveJsonWith(value: Json, resolveText: (text: string) => string): Json {
  if (typeof value === 'string') return resolveText(value);
  if (Array.isArray(value)) return value.map((v) => resolveJsonWith(v, resolveText));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveJsonWith(v, resolveText)]));
  return value;
}

/** The body's bytes, tokens resolved, mutations applied. */
export function renderBody(body: BodySpec, live: TokenResolver): Buffer {
  switch (body.kind) {
    case 'none':
      return Buffer.alloc(0);
    case 'text':
      return Buffer.from(live.resolveText(body.text), 'utf8');
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'call':
      return mutateBytes(callBytes(body, live), body.bytes);
  }
}

function callBytes(body: Extract<BodySpec, { kind: 'call' }>, live: TokenResolver): Buffer {
  const text = mutateJson(live.resolveJson(body.call), body.json);
  if (body.encoding === 'json') return Buffer.from(text, 'utf8');
  // A mutation may leave JSON that no longer converts: it is sent as it is, JSON posing as protobuf.
  const decoded = decodeJson<object>(body.message, text);
  if (!decoded.ok) return Buffer.from(text, 'utf8');
  return mutateProto(Buffer.from(encodeProto(body.message, decoded.value)), body.proto);
}

/** The framework a call template names, once resolved: its stream id goes into `@@stream`. */
function namedFramework(call: Json): string | undefined {
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return undefined;
  const id = call['framework_id'];
  const value = id !== null && typeof id === 'object' && !Array.isArray(id) ? id['value'] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The request as it goes on the wire to the server it names. */
export function render(spec: RequestSpec, live: TokenResolver, ports: readonly number[]): WireRequest {
  const port = spec.server === 0 || ports.length < 2 ? ports[0]! : ports[1 + ((spec.server - 1) % (ports.length - 1))]!;
  const hostHeader: (readonly [string, string])[] =
    spec.host === 'normal' ? [['Host', `127.0.0.1:${port}`]] : spec.host === 'odd' ? [['Host', 'exa mple:-1']] : [];
  const framework = spec.body.kind === 'call' ? namedFramework(live.resolveJson(spec.body.call)) : undefined;
  return {
    port,
    method: spec.method,
    target: live.resolveText(spec.target),
    version: spec.version,
    headers: [...hostHeader, ...spec.headers.map(([n, v]) => [n, live.resolveText(v, framework)] as const)],
    body: renderBody(spec.body, live),
    framing: spec.framing,
    followUp: spec.followUp,
    hold: spec.hold,
    abort: spec.abort,
    operator: spec.server === 0 && isOperatorPath(spec.target),
    executor: spec.server !== 0 && isExecutorPath(spec.target),
  };
}

/** Whether an agent's executor API serves this target (the route takes the paths below its own too). */
export function isExecutorPath(target: string): boolean {
  return /^(\/slave\(1\))?\/api\/v1\/executor(\/.*)?$/.test(routedPath(target));
}

/** Whether an agent's operator API serves this target: `/api/v1` and the paths below it but the executor API's. */
export function isAgentOperatorPath(target: string): boolean {
  return !isExecutorPath(target) && /^(\/slave\(1\))?\/api\/v1(\/.*)?$/.test(routedPath(target));
}

/** Whether the master's operator API serves this target (the route takes the paths below its own too). */
export function isOperatorPath(target: string): boolean {
  return /^(\/master)?\/api\/v1(\/(?!scheduler(\/|$)).*)?$/.test(routedPath(target));
}

/** The target's path as the servers route it: no query, no empty segments. */
function routedPath(target: string): string {
  return `/${target
    .split('?', 1)[0]!
    .split('/')
    .filter((p) => p !== '')
    .join('/')}`;
}
