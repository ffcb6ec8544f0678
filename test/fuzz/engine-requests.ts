/**
 * Generated requests to the container engine's Unix socket (spec 001, the
 * engine table): ping and version; a DOCKER task's container by its name
 * (`@@engine:0`), its engine id or a short one, or names that are none
 * (percent signs, slashes, long); exec create bodies, valid (a `Cmd` of
 * the small shell, `Tty`, `AttachStdin`) or not (no JSON, JSON of another
 * type, `Cmd` of the wrong type), mutated now and then; exec inspect and
 * start of the execs the engine made (`@@exec:1`); API version prefixes,
 * queries, methods, headers and framings of every kind. And exec starts:
 * the connection becomes the exec's stream, written to (its standard
 * input) and half-closed, or not.
 */
import fc from 'fast-check';
import { oddString, w } from './calls.js';
import { mutateBytes, mutateJson, type ByteMutation, type Json, type JsonMutation } from './mutate.js';
import { byteMutations, jsonMutations } from './mutations.js';
import { framing as anyFraming, method, randomHeaders, type Headers, type TokenResolver } from './requests.js';
import type { Framing, WireRequest } from './transport.js';

export type EngineBody =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string }
  /** A JSON value (tokens in its strings), mutated. */
  | {
      readonly kind: 'json';
      readonly value: Json;
      readonly json: readonly JsonMutation[];
      readonly bytes: readonly ByteMutation[];
    };

export interface EngineRequestSpec {
  readonly method: string;
  /** `/v1.43` and the like, or none. */
  readonly prefix: string;
  /** The path, tokens in it. */
  readonly path: string;
  readonly headers: Headers;
  readonly body: EngineBody;
  readonly framing: Framing;
  readonly followUp: boolean;
  readonly abort: 'no' | 'now' | 'soon';
}

/** An exec started on a connection of its own. */
export interface StartSpec {
  readonly exec: string;
  readonly prefix: string;
  readonly body: EngineBody;
  /** Written right after the request: the exec's standard input. */
  readonly input: string;
  /** The client half-closes: the end of the input. */
  readonly end: boolean;
  /** The stream is kept open (and read) after the step, until a release drops it. */
  readonly hold: boolean;
}

const prefix = fc.oneof(
  w(6, fc.constant('')),
  w(3, fc.constantFrom('/v1.43', '/v1.12', '/v1.41')),
  w(1, fc.constantFrom('/v99.99', '/v1', '/v1.43/v1.43', '/V1.43')),
);
/** A container as a client names it: the name, the engine id, a short id, or something that names none. */
const containerName = fc.oneof(
  w(
    6,
    fc.nat({ max: 7 }).map((i) => `@@engine:${i}`),
  ),
  w(
    2,
    fc.nat({ max: 7 }).map((i) => `@@engine-id:${i}`),
  ),
  w(
    1,
    fc.nat({ max: 7 }).map((i) => `@@engine-short:${i}`),
  ),
  w(
    1,
    fc.nat({ max: 7 }).map((i) => `%2F@@engine:${i}`),
  ),
  w(2, fc.constantFrom('%', '%zz', '%E0%A4%A', 'cluster-', '..', 'x'.repeat(3000), '%00', 'abc', '0123456789ab')),
  w(1, oddString.map(percentEncoded)),
);
const execId = fc.oneof(
  w(
    8,
    fc.nat({ max: 7 }).map((i) => `@@exec:${i}`),
  ),
  w(1, fc.constantFrom('%', 'x', '0'.repeat(64), '%zz')),
  w(1, oddString.map(percentEncoded)),
);

/** Commands of the small shell as an exec's `Cmd`: short and moderately long. */
const script = fc.oneof(
  w(
    8,
    fc.constantFrom(
      'echo hi',
      'cat',
      'sleep 5',
      'exit 3',
      'echo out; echo err >&2',
      'read x; echo $x',
      'nothing-here',
      'yes | head -n 2',
      'sleep 100',
    ),
  ),
  w(
    1,
    fc.integer({ min: 2, max: 200 }).map((n) => `echo a${' | cat'.repeat(n)}`),
  ),
);
export const cmd: fc.Arbitrary<Json> = fc.oneof(
  w(
    8,
    script.map((s): Json => ['sh', '-c', s]),
  ),
  w(2, fc.constantFrom<Json>(['echo', 'x'], ['cat'], ['true'], ['frobnicate'])),
  w(1, fc.constantFrom<Json>([], null, 'echo hi', [1, 2], [''], [null], {})),
);
const createBody = fc
  .record(
    {
      Cmd: cmd,
      Tty: fc.boolean(),
      AttachStdin: fc.boolean(),
      AttachStdout: fc.constant(true),
      AttachStderr: fc.constant(true),
      Env: fc.constant<Json>([]),
    },
    { requiredKeys: ['Cmd'] },
  )
  .map((v) => v as Json);
const oddJsonText = fc.constantFrom(
  'null',
  '[]',
  '"x"',
  '1',
  'true',
  '{',
  '{"Cmd":',
  '{}{}',
  '\ufeff{}',
  '{"Cmd":["a"]',
  ' ',
  '{"__proto__":{"Cmd":["x"]}}',
);
export const engineBody = (value: fc.Arbitrary<Json>): fc.Arbitrary<EngineBody> =>
  fc.oneof(
    w(
      10,
      fc.record({
        kind: fc.constant('json' as const),
        value,
        json: fc.oneof(w(3, fc.constant([])), w(1, jsonMutations)),
        bytes: fc.oneof(w(5, fc.constant([])), w(1, byteMutations)),
      }),
    ),
    w(
      2,
      oddJsonText.map((text) => ({ kind: 'text', text }) as const),
    ),
    w(1, fc.constant({ kind: 'none' } as const)),
  );

/** Every byte of the UTF-8 of `text` as a percent escape (a lone surrogate too, which `encodeURIComponent` refuses). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** The paths of the engine table, and a few it does not have. */
const pathAndMethod = fc.oneof(
  w(
    2,
    fc.record({
      path: fc.constantFrom('/_ping', '/version'),
      method: fc.constant('GET'),
      body: fc.constant<EngineBody>({ kind: 'none' }),
    }),
  ),
  w(
    3,
    fc.record({
      path: containerName.map((n) => `/containers/${n}/json`),
      method: fc.constant('GET'),
      body: fc.constant<EngineBody>({ kind: 'none' }),
    }),
  ),
  w(
    6,
    fc.record({
      path: containerName.map((n) => `/containers/${n}/exec`),
      method: fc.constant('POST'),
      body: engineBody(createBody),
    }),
  ),
  w(
    3,
    fc.record({
      path: execId.map((e) => `/exec/${e}/json`),
      method: fc.constant('GET'),
      body: fc.constant<EngineBody>({ kind: 'none' }),
    }),
  ),
  w(
    1,
    fc.record({
      path: fc.constantFrom(
        '/',
        '/containers',
        '/containers/json',
        '/exec',
        '/exec//start',
        '/_ping/',
        '//version',
        '/containers/a/b/json',
        '*',
        '/v1.43',
        '',
      ),
      method: fc.constantFrom('GET', 'POST'),
      body: fc.constant<EngineBody>({ kind: 'none' }),
    }),
  ),
);

const query = fc.oneof(
  w(8, fc.constant('')),
  w(1, fc.constantFrom('?x=1', '?', '?all=1&size=%zz', `?${'a'.repeat(5000)}`)),
);
const contentType = fc.oneof(
  w(8, fc.constant<Headers>([['Content-Type', 'application/json']])),
  w(1, fc.constant<Headers>([])),
  w(
    1,
    fc.constantFrom<Headers>(
      [['Content-Type', 'text/plain']],
      [['Content-Length', '5']],
      [['Content-Length', '99999999999']],
    ),
  ),
);

export const engineRequestSpec: fc.Arbitrary<EngineRequestSpec> = fc
  .record({
    target: pathAndMethod,
    prefix,
    query,
    plain: fc.boolean(),
    fuzzyMethod: method(fc.constant('')),
    headers: fc.tuple(contentType, randomHeaders),
    framing: fc.oneof(w(4, fc.constant<Framing>('length')), w(1, anyFraming)),
    followUp: fc.boolean(),
    abort: fc.oneof(w(30, fc.constant('no' as const)), w(1, fc.constantFrom('now' as const, 'soon' as const))),
  })
  .map(({ target, query: q, plain, fuzzyMethod, headers, ...r }) => ({
    ...r,
    method: plain || fuzzyMethod === '' ? target.method : fuzzyMethod,
    path: `${target.path}${q}`,
    body: target.body,
    headers: plain ? headers[0] : headers.flat(),
  }));

export const startSpec: fc.Arbitrary<StartSpec> = fc.record({
  exec: execId,
  prefix,
  body: engineBody(
    fc
      .record({ Detach: fc.oneof(w(6, fc.constant(false)), w(1, fc.constant(true))), Tty: fc.boolean() })
      .map((v) => v as Json),
  ),
  input: fc.oneof(
    w(3, fc.constant('')),
    w(3, fc.constantFrom('hello\n', 'a\nb\n', '\u0000', 'é')),
    w(
      1,
      fc.integer({ min: 1_000, max: 100_000 }).map((n) => 'z'.repeat(n)),
    ),
  ),
  end: fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false))),
  hold: fc.oneof(w(1, fc.constant(true)), w(3, fc.constant(false))),
});

/** A full exec as a client runs one: its create body (valid mostly), its start's input. */
export const execCycle = fc.record({
  container: containerName,
  create: createBody,
  input: startSpec.map((s) => s.input),
  end: fc.boolean(),
  tty: fc.boolean(),
});

/** The body's bytes: tokens resolved, mutations applied. */
export function engineBodyBytes(body: EngineBody, tokens: TokenResolver): Buffer {
  if (body.kind === 'none') return Buffer.alloc(0);
  if (body.kind === 'text') return Buffer.from(body.text, 'utf8');
  return mutateBytes(Buffer.from(mutateJson(tokens.resolveJson(body.value), body.json), 'utf8'), body.bytes);
}

/** The request as it goes on the engine's socket. */
export function renderEngineRequest(spec: EngineRequestSpec, socketPath: string, tokens: TokenResolver): WireRequest {
  return {
    port: 0,
    socketPath,
    method: spec.method,
    target: tokens.resolveText(`${spec.prefix}${spec.path}`),
    version: 'HTTP/1.1',
    headers: [['Host', 'localhost'], ...spec.headers],
    body: engineBodyBytes(spec.body, tokens),
    framing: spec.framing,
    followUp: spec.followUp,
    hold: false,
    abort: spec.abort,
    operator: false,
  };
}
