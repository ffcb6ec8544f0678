/**
 * Generated requests to the agent operator API (`POST /api/v1` on an agent,
 * and its `/slave(1)/` form): agent calls from templates or the schema, as
 * JSON or protobuf, mutated a third of the time, half of them sent as an
 * ordinary client sends them (the headers each call wants: `Accept:
 * application/recordio` and `Message-Accept` for a session), the other
 * half with every header, method and framing the scheduler fuzz knows; and
 * ATTACH_CONTAINER_INPUT streams: `Content-Type: application/recordio`, a
 * `Message-Content-Type`, and a body of RecordIO records, the records or
 * their framing mutated now and then. `server` n sends to the agent n - 1.
 */
import fc from 'fast-check';
import { decodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { AGENT_CALL_TYPE, agentSchemaCall, agentTemplateCall, inputRecords } from './agent-calls.js';
import { w } from './calls.js';
import { mutateBytes, type ByteMutation, type Json } from './mutate.js';
import { byteMutations } from './mutations.js';
import {
  accept,
  acceptEncoding,
  assemble,
  callBody,
  contentType,
  fuzzyRequest,
  header,
  MEDIA,
  none,
  plainRequest,
  randomHeaders,
  renderBody,
  type Encoding,
  type Headers,
  type RequestSpec,
  type TokenResolver,
} from './requests.js';
import type { WireRequest } from './transport.js';

export const AGENT_OPERATOR_PATHS = ['/api/v1', '/slave(1)/api/v1'];
const ODD_PATHS = ['/api/v1/', '/slave(1)/api/v1/', '/api/v1/x', '//api/v1', '/api/v1?x=1', '/API/V1'];
const RECORDIO = 'application/recordio';

/** How a RecordIO body is framed: as it should be, or with a record's length prefix wrong. */
export type RecordFraming =
  | { readonly kind: 'plain' }
  /** The length prefix of the record at this fraction says `delta` bytes more (or fewer). */
  | { readonly kind: 'length'; readonly at: number; readonly delta: number }
  /** A prefix that is no length: `0`, a word, twenty digits, nothing. */
  | { readonly kind: 'prefix'; readonly at: number; readonly text: string };

/** An ATTACH_CONTAINER_INPUT stream: its records (tokens in them), their encoding, their framing. */
export interface InputSpec {
  readonly records: readonly Json[];
  readonly encoding: Encoding;
  readonly framing: RecordFraming;
  readonly bytes: readonly ByteMutation[];
}

export type AgentRequestSpec = RequestSpec & { readonly input?: InputSpec };

const agentBody = callBody(agentTemplateCall, agentSchemaCall, AGENT_CALL_TYPE, 1);
const server = fc.integer({ min: 1, max: 2 });
const recordioAccept = fc.constantFrom(
  RECORDIO,
  `${RECORDIO}, application/json`,
  '*/*',
  'application/json',
  `${RECORDIO};q=0`,
);
const messageMedia = fc.oneof(
  w(6, fc.constantFrom(...Object.values(MEDIA))),
  w(1, fc.constantFrom('', 'text/plain', RECORDIO, '*/*', 'application/json;q=0')),
);
const plain = { ...plainRequest, abort: fc.constant('no' as const) };
/** A session's output stream is held open most of the time, so that its input and its end can come. */
const hold = fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false)));

const typeOf = (call: Json): string | undefined =>
  call !== null && typeof call === 'object' && !Array.isArray(call) && typeof call['type'] === 'string'
    ? call['type']
    : undefined;

/** A request with a call in it: plain (the headers its call wants) or fuzzy. */
const callRequest = fc
  .oneof(
    fc.record({
      target: fc.constantFrom(...AGENT_OPERATOR_PATHS),
      body: agentBody,
      plain: fc.constant(true),
      server,
      ...plain,
      hold,
    }),
    fc.record({
      target: fc.oneof(w(8, fc.constantFrom(...AGENT_OPERATOR_PATHS)), w(1, fc.constantFrom(...ODD_PATHS))),
      body: agentBody,
      plain: fc.constant(false),
      server,
      ...fuzzyRequest,
      hold,
    }),
  )
  .chain(({ plain: isPlain, ...r }) => {
    const encoding: Encoding = r.body.kind === 'call' ? r.body.encoding : 'json';
    const session = r.body.kind === 'call' && typeOf(r.body.call) === 'LAUNCH_NESTED_CONTAINER_SESSION';
    const plainAccept: fc.Arbitrary<Headers> = session
      ? messageMedia.map(
          (m): Headers => [
            ['Accept', RECORDIO],
            ['Message-Accept', m],
          ],
        )
      : fc.oneof(w(3, none), w(2, header('Accept', fc.constantFrom(...Object.values(MEDIA)))));
    const headers = isPlain
      ? fc.tuple(fc.constant<Headers>([['Content-Type', MEDIA[encoding]]]), plainAccept)
      : fc.tuple(
          contentType(encoding),
          fc.oneof(w(2, accept), w(2, header('Accept', recordioAccept))),
          fc.oneof(
            w(3, none),
            w(1, header('Message-Accept', messageMedia)),
            w(1, header('Message-Content-Type', messageMedia)),
          ),
          acceptEncoding,
          randomHeaders,
        );
    return headers.map((h): AgentRequestSpec => assemble({ ...r, headers: h }));
  });

const recordFraming: fc.Arbitrary<RecordFraming> = fc.oneof(
  w(12, fc.constant({ kind: 'plain' } as const)),
  w(
    1,
    fc.record({
      kind: fc.constant('length' as const),
      at: fc.double({ min: 0, max: 0.999, noNaN: true }),
      delta: fc.constantFrom(-3, -1, 1, 5, 1_000, 2 ** 40),
    }),
  ),
  w(
    1,
    fc.record({
      kind: fc.constant('prefix' as const),
      at: fc.double({ min: 0, max: 0.999, noNaN: true }),
      text: fc.constantFrom('0', 'x', '', '-1', '1'.repeat(25), ' 3', '0x10'),
    }),
  ),
);

/** An ATTACH_CONTAINER_INPUT stream, mostly as a client sends it. */
const inputRequest = fc
  .record({
    server,
    target: fc.oneof(w(8, fc.constantFrom(...AGENT_OPERATOR_PATHS)), w(1, fc.constantFrom(...ODD_PATHS))),
    input: fc.record({
      records: inputRecords,
      encoding: fc.constantFrom<Encoding>('json', 'json', 'protobuf'),
      framing: recordFraming,
      bytes: fc.oneof(w(6, fc.constant([])), w(1, byteMutations)),
    }),
    method: fc.oneof(w(20, fc.constant('POST')), w(1, fc.constantFrom('PUT', 'GET'))),
    framing: fc.oneof(
      w(6, fc.constant('chunked' as const)),
      w(3, fc.constant('length' as const)),
      w(1, fc.constantFrom('short' as const, 'long' as const)),
    ),
    version: fc.constant('HTTP/1.1' as const),
    host: fc.constant('normal' as const),
    followUp: fc.boolean(),
    abort: fc.oneof(w(20, fc.constant('no' as const)), w(1, fc.constant('soon' as const))),
    messageType: fc.oneof(
      w(12, fc.constant<string | undefined>(undefined)),
      w(1, messageMedia),
      w(1, fc.constant<string | undefined>('')),
    ),
    extra: fc.oneof(w(4, none), w(1, header('Accept', recordioAccept)), w(1, randomHeaders)),
  })
  .map(({ input, messageType, extra, ...r }): AgentRequestSpec => {
    const mct: Headers = messageType === '' ? [] : [['Message-Content-Type', messageType ?? MEDIA[input.encoding]]];
    return {
      ...assemble({ ...r, body: { kind: 'none' }, headers: [[['Content-Type', RECORDIO]], mct, extra] }),
      input,
    };
  });

export const agentRequestSpec: fc.Arbitrary<AgentRequestSpec> = fc.oneof(w(6, callRequest), w(1, inputRequest));

/** The body of an input stream: each record encoded, framed `<length>\n<bytes>`, the framing and bytes mutated as drawn. */
function inputBytes(input: InputSpec, resolver: TokenResolver): Buffer {
  const records = input.records.map((record) => {
    const text = JSON.stringify(resolver.resolveJson(record));
    if (input.encoding === 'json') return Buffer.from(text, 'utf8');
    const decoded = decodeJson<object>(AGENT_CALL_TYPE, text);
    return decoded.ok ? Buffer.from(encodeProto(AGENT_CALL_TYPE, decoded.value)) : Buffer.from(text, 'utf8');
  });
  const { framing } = input;
  const target = framing.kind === 'plain' ? -1 : Math.floor(framing.at * records.length);
  const framed = records.map((bytes, i) => {
    if (i !== target || framing.kind === 'plain') return Buffer.concat([Buffer.from(`${bytes.length}\n`), bytes]);
    const prefix = framing.kind === 'length' ? String(Math.max(0, bytes.length + framing.delta)) : framing.text;
    return Buffer.concat([Buffer.from(`${prefix}\n`), bytes]);
  });
  return mutateBytes(Buffer.concat(framed), input.bytes);
}

/** The request as it goes on the wire to the agent it is for. */
export function renderAgentRequest(
  spec: AgentRequestSpec,
  agentPorts: readonly number[],
  resolver: (agent: number) => TokenResolver,
): WireRequest {
  const agent = (spec.server - 1) % agentPorts.length;
  const port = agentPorts[agent]!;
  const tokens = resolver(agent);
  const hostHeader: (readonly [string, string])[] =
    spec.host === 'normal' ? [['Host', `127.0.0.1:${port}`]] : spec.host === 'odd' ? [['Host', 'exa mple:-1']] : [];
  return {
    port,
    method: spec.method,
    target: spec.target,
    version: spec.version,
    headers: [...hostHeader, ...spec.headers],
    body: spec.input === undefined ? renderBody(spec.body, tokens) : inputBytes(spec.input, tokens),
    framing: spec.framing,
    followUp: spec.followUp,
    hold: spec.hold,
    abort: spec.abort,
    operator: false,
    session: true,
  };
}
