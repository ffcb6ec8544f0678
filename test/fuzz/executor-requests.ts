/**
 * Generated requests to the agents' executor API (`POST /api/v1/executor`
 * and its `/slave(1)/` form): executor calls from templates or the schema,
 * as JSON or protobuf, mutated a third of the time; half of them sent as an
 * ordinary executor library sends them (so that the judge can tell the
 * exact answer), the other half with every header, method and framing the
 * scheduler fuzz knows. `server` -1 sends a request to the agent of the
 * executor its call names; n > 0 to the agent n - 1, right or wrong.
 */
import fc from 'fast-check';
import { w } from './calls.js';
import { EXECUTOR_CALL_TYPE, executorSchemaCall, executorTemplateCall } from './executor-calls.js';
import type { ExecutorPool } from './executor-live.js';
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
} from './requests.js';
import type { WireRequest } from './transport.js';

export const EXECUTOR_PATHS = ['/api/v1/executor', '/slave(1)/api/v1/executor'];
const ODD_PATHS = ['/api/v1/executor/', '/api/v1//executor', '/slave(1)/api/v1/executor/x', '/api/v1/executor?x=1'];

/** The Accept values whose answer to a SUBSCRIBE the judge knows: a stream, or 406. */
export const PLAIN_ACCEPT = [
  'application/json',
  'application/x-protobuf',
  '*/*',
  'application/*',
  'text/html',
  'application/json;q=0',
];

// Most schema calls stop at validation: the templates reach the agent.
const executorBody = callBody(executorTemplateCall, executorSchemaCall, EXECUTOR_CALL_TYPE, 1);

/** Mostly to the executor's own agent. */
const server = fc.oneof(w(10, fc.constant(-1)), w(1, fc.integer({ min: 1, max: 2 })));
const plainAccept = fc.oneof(
  w(6, none),
  w(3, header('Accept', fc.constantFrom(...PLAIN_ACCEPT.slice(0, 4)))),
  w(1, header('Accept', fc.constantFrom(...PLAIN_ACCEPT.slice(4)))),
);
// A library's request is never given up on: its one right answer is judged.
const plain = { ...plainRequest, abort: fc.constant('no' as const) };
/** A SUBSCRIBE's stream is held open most of the time: the executor lives on it. */
const hold = fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false)));

/** A request to the executor API: over TCP, or over the agent's Unix domain socket when the agents serve one. */
export type ExecutorRequestSpec = RequestSpec & { readonly socket: boolean };

const overSocket = fc.oneof(w(2, fc.constant(false)), w(1, fc.constant(true)));

export const executorRequestSpec: fc.Arbitrary<ExecutorRequestSpec> = fc
  .oneof(
    fc.record({
      target: fc.constantFrom(...EXECUTOR_PATHS),
      body: executorBody,
      plain: fc.constant(true),
      server,
      ...plain,
      hold,
    }),
    fc.record({
      target: fc.oneof(w(8, fc.constantFrom(...EXECUTOR_PATHS)), w(1, fc.constantFrom(...ODD_PATHS))),
      body: executorBody,
      plain: fc.constant(false),
      server,
      ...fuzzyRequest,
      hold,
    }),
  )
  .chain(({ plain: isPlain, ...r }) => {
    const encoding: Encoding = r.body.kind === 'call' ? r.body.encoding : 'json';
    const headers = isPlain
      ? fc.tuple(fc.constant<Headers>([['Content-Type', MEDIA[encoding]]]), plainAccept)
      : fc.tuple(contentType(encoding), accept, acceptEncoding, randomHeaders);
    return fc.tuple(headers, overSocket).map(([h, socket]) => ({ ...assemble({ ...r, headers: h }), socket }));
  });

/** The executor a call names, read back from its resolved JSON before any mutation. */
function namedExecutor(pool: ExecutorPool, spec: RequestSpec): string | undefined {
  if (spec.body.kind !== 'call') return undefined;
  const call = pool.resolveJson(spec.body.call);
  if (call === null || typeof call !== 'object' || Array.isArray(call)) return undefined;
  const id = call['executor_id'];
  const value = id !== null && typeof id === 'object' && !Array.isArray(id) ? id['value'] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The request as it goes on the wire to the agent it is for: to its port,
 * or through its domain socket (`socketPaths`, when the agents serve them).
 */
export function renderExecutorRequest(
  spec: ExecutorRequestSpec,
  pool: ExecutorPool,
  agentPorts: readonly number[],
  socketPaths?: readonly string[],
): WireRequest {
  const named = namedExecutor(pool, spec);
  const agentIds = pool.running.agents.map((a) => a.id);
  const ofExecutor = agentIds.indexOf(pool.executors.find((e) => e.executorId === named)?.agentId ?? '');
  const agent = spec.server === -1 ? Math.max(0, ofExecutor) : (spec.server - 1) % agentPorts.length;
  const port = agentPorts[agent]!;
  const hostHeader: (readonly [string, string])[] =
    spec.host === 'normal' ? [['Host', `127.0.0.1:${port}`]] : spec.host === 'odd' ? [['Host', 'exa mple:-1']] : [];
  return {
    port,
    method: spec.method,
    target: spec.target,
    version: spec.version,
    headers: [...hostHeader, ...spec.headers],
    body: renderBody(spec.body, pool),
    framing: spec.framing,
    followUp: spec.followUp,
    hold: spec.hold,
    abort: spec.abort,
    operator: false,
    executor: true,
    ...(spec.socket && socketPaths !== undefined ? { socketPath: socketPaths[agent]! } : {}),
  };
}
