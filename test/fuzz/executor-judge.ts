/**
 * What an agent's executor API (`POST /api/v1/executor`) may answer,
 * beyond the rules every endpoint keeps (no hang, no crash, no unexpected
 * 5xx), as wire-facts §3 and the route's own order have it:
 *
 *   statuses   200 (a SUBSCRIBE's event stream), 202 (UPDATE, MESSAGE,
 *              HEARTBEAT, with no body), 400, 403, 405, 406, 413, 415, and
 *              node's 417 and 431; 501 only with its catalogue text, 503
 *              only while the agent is down
 *   errors     a reason: plain text, one line, never empty; 403 is `Executor
 *              is not subscribed`; a 400 to a call that decodes is one of
 *              the executor API's texts
 *   exactly    for a request sent as an executor library sends it (POST,
 *              one Content-Type of the two, an Accept the judge knows, no
 *              other header), the one answer upstream's agent gives, told
 *              from the call as the agent reads it and the agent's state
 *              just before: validation, HEARTBEAT, 406, UNKNOWN, agent down,
 *              framework unknown, executor unknown, SUBSCRIBE (a stream
 *              whose first event is SUBSCRIBED, or SHUTDOWN for an executor
 *              being shut down, in the encoding asked for, else JSON), not
 *              subscribed, a task of another executor, else 202
 */
import { httpError } from '../../src/http/errors.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import { decodeJson } from '../../src/wire/json.js';
import type { mesos } from '../../src/wire/generated/types.js';
import { decodeProto } from '../../src/wire/proto-codec.js';
import { EXECUTOR_CALL_TYPE } from './executor-calls.js';
import { PLAIN_ACCEPT } from './executor-requests.js';
import { reasonError } from './operator-judge.js';
import type { WireRequest, WireResponse } from './transport.js';

type Call = mesos.v1.executor.Call;

const STATUSES = new Set([200, 202, 400, 403, 405, 406, 413, 415, 417, 431, 501, 503]);
const MESSAGE_TYPES = ['application/json', 'application/x-protobuf'];
export const AGENT_DOWN = 'Agent has not finished recovery';
const NOT_SUBSCRIBED = 'Executor is not subscribed';
const NOT_IMPLEMENTED = '501 Not Implemented.';
/** fastify's default body limit, which the agents keep. */
const BODY_LIMIT = 1024 * 1024;
/** An executor as its agent holds it, for the judge. */
export interface ExecutorState {
  readonly custom: boolean;
  readonly alive: boolean;
  readonly state: string;
  readonly tasks: ReadonlySet<string>;
}

/** The agent a request goes to, as it is just before the request. */
export interface AgentState {
  readonly up: boolean;
  readonly frameworks: ReadonlySet<string>;
  /** By `<framework>\u0000<executor>`. */
  readonly executors: ReadonlyMap<string, ExecutorState>;
}

export function agentState(running: RunningCluster, agentId: string): AgentState {
  return running.driver.read((view) => {
    const node = view.agentNode(agentId);
    const executors = new Map<string, ExecutorState>();
    for (const e of node?.executors() ?? []) {
      executors.set(`${e.frameworkId}\u0000${e.executorId}`, {
        custom: e.kind === 'custom',
        alive: e.alive,
        state: e.state,
        tasks: new Set(e.tasks.keys()),
      });
    }
    return {
      up: node !== undefined && node.state !== 'crashed',
      frameworks: new Set((node?.frameworks() ?? []).map((f) => f.id)),
      executors,
    };
  });
}

/** The one answer to a request sent as an executor library sends it; a pattern where the text is not the call's. */
export interface Expected {
  readonly status: number;
  readonly body?: string | RegExp;
  /** A SUBSCRIBE's stream: its first event, and its Content-Type. */
  readonly first?: string;
  readonly contentType?: string;
}

/** Undefined for a request the judge cannot tell the exact answer to. */
export function expectedAnswer(wire: WireRequest, agent: AgentState): Expected | undefined {
  const media = plainMedia(wire);
  if (media === undefined) return undefined;
  if (wire.body.length > BODY_LIMIT) return { status: 413, body: 'Request body is too large' };
  const decoded =
    media === 'application/json'
      ? decodeJson<Call>(EXECUTOR_CALL_TYPE, wire.body.toString('utf8'), 'Call')
      : decodeProto<Call>(EXECUTOR_CALL_TYPE, wire.body, 'Call');
  if (!decoded.ok) return refusal('BODY_UNDECODABLE', decoded.error);
  const call = decoded.value;
  const broken = brokenRule(call);
  if (broken !== undefined) return refusal('EXECUTOR_CALL_INVALID', broken);
  if (call.type === 'HEARTBEAT') return { status: 202, body: '' };
  const accept = wire.headers.find(([n]) => n === 'Accept')?.[1];
  if (call.type === 'SUBSCRIBE' && accept !== undefined && PLAIN_ACCEPT.indexOf(accept) >= 4)
    return { status: 406, body: /^Expecting 'Accept' to allow / };
  if (call.type === 'UNKNOWN') return { status: 501, body: NOT_IMPLEMENTED };
  return fromAgent(call, agent, accept);
}

/**
 * A 400 whose text carries what the request sent: as the catalogue writes
 * any reason (one line, cut short), and as it reads once sent as UTF-8.
 */
function refusal(code: 'BODY_UNDECODABLE' | 'EXECUTOR_CALL_INVALID' | 'CALL_REFUSED', detail: string): Expected {
  const { status, body } = httpError(code, detail);
  return { status, body: Buffer.from(body, 'utf8').toString('utf8') };
}

/** The agent's part: who is calling, and whether it may. */
function fromAgent(call: Call, agent: AgentState, accept: string | undefined): Expected {
  if (!agent.up) return { status: 503, body: AGENT_DOWN };
  if (!agent.frameworks.has(call.framework_id.value)) return { status: 400, body: 'Framework cannot be found' };
  const executor = agent.executors.get(`${call.framework_id.value}\u0000${call.executor_id.value}`);
  if (executor === undefined || !executor.custom || !executor.alive)
    return { status: 400, body: 'Executor cannot be found' };
  if (call.type === 'SUBSCRIBE') {
    // Upstream's agent tries JSON first: what accepts anything gets JSON.
    const contentType = accept !== undefined && MESSAGE_TYPES.includes(accept) ? accept : 'application/json';
    return { status: 200, first: executor.state === 'terminating' ? 'SHUTDOWN' : 'SUBSCRIBED', contentType };
  }
  if (executor.state === 'launched') return { status: 403, body: NOT_SUBSCRIBED };
  const taskId = call.update?.status.task_id.value;
  if (taskId !== undefined && !executor.tasks.has(taskId)) {
    return refusal('CALL_REFUSED', `Task '${taskId}' is not a task of executor '${call.executor_id.value}'`);
  }
  return { status: 202, body: '' };
}

/**
 * The first of upstream's validation rules (`validation::executor::call`)
 * a call breaks, in their order: a type, the payload of the type; for an
 * update a uuid of 16 bytes, the executor it names, the executor as its
 * source, and not TASK_STAGING.
 */
function brokenRule(call: Call): string | undefined {
  if (call.type === undefined) return "Expecting 'type' to be present";
  const payload = { SUBSCRIBE: call.subscribe, UPDATE: call.update, MESSAGE: call.message }[call.type as string];
  if (['SUBSCRIBE', 'UPDATE', 'MESSAGE'].includes(call.type) && payload === undefined)
    return `Expecting '${call.type.toLowerCase()}' to be present`;
  const status = call.update?.status;
  if (call.type !== 'UPDATE' || status === undefined) return undefined;
  const sender = `executor ${call.executor_id.value} of framework ${call.framework_id.value}`;
  const rules: [boolean, string][] = [
    [status.uuid === undefined, "Expecting 'uuid' to be present"],
    [status.uuid !== undefined && status.uuid.length !== 16, "'uuid' must be a 16-byte UUID"],
    [
      status.executor_id !== undefined && status.executor_id.value !== call.executor_id.value,
      `ExecutorID in Call: ${call.executor_id.value} does not match ExecutorID in TaskStatus: ${status.executor_id?.value}`,
    ],
    [
      status.source !== 'SOURCE_EXECUTOR',
      `Received Call from ${sender} with invalid source, expecting 'SOURCE_EXECUTOR'`,
    ],
    [status.state === 'TASK_STAGING', `Received TASK_STAGING from ${sender} which is not allowed`],
  ];
  return rules.find(([broken]) => broken)?.[1];
}

/** The Content-Type of a request sent as a library sends it; undefined for any other request. */
function plainMedia(wire: WireRequest): string | undefined {
  if (wire.method !== 'POST' || wire.version !== 'HTTP/1.1' || wire.framing !== 'length' || wire.abort !== 'no')
    return undefined;
  const names = wire.headers.map(([n]) => n);
  if (
    names.some((n) => !['Host', 'Content-Type', 'Accept'].includes(n)) ||
    names.filter((n) => n !== 'Accept').join() !== 'Host,Content-Type'
  )
    return undefined;
  if (wire.headers[0]![1] !== `127.0.0.1:${wire.port}`) return undefined;
  const accepts = wire.headers.filter(([n]) => n === 'Accept');
  if (accepts.length > 1 || (accepts.length === 1 && !PLAIN_ACCEPT.includes(accepts[0]![1]))) return undefined;
  const media = wire.headers.find(([n]) => n === 'Content-Type')![1];
  return MESSAGE_TYPES.includes(media) ? media : undefined;
}

/** Undefined when the executor API's answer is acceptable, else what is wrong with it. */
export function executorVerdict(
  wire: WireRequest,
  res: WireResponse,
  expected: Expected | undefined,
): string | undefined {
  const status = res.status ?? 0;
  const body = res.body.toString('utf8');
  if (expected !== undefined) {
    const exact = exactError(res, body, expected);
    if (exact !== undefined) return exact;
  }
  if (!STATUSES.has(status)) return `the executor API answered ${status}`;
  if (status === 501 && body !== NOT_IMPLEMENTED)
    return `answered 501 with ${JSON.stringify(body)}, not the catalogue's text`;
  if (status === 503 && body !== AGENT_DOWN)
    return `answered 503 with ${JSON.stringify(body)}, not while the agent is down`;
  if (status === 403 && body !== NOT_SUBSCRIBED && wire.method !== 'HEAD')
    return `answered 403 with ${JSON.stringify(body)}`;
  if (status === 202 && res.body.length > 0) return `a 202 with a body of ${res.body.length} bytes`;
  if (status === 200 && !res.stream) return 'a 200 without an event stream';
  if (res.stream && res.check?.api !== 'executor') return 'an executor event stream not read as one';
  // Node's own refusal of a request it cannot parse or whose head is over its limit, on a domain socket whose server fastify does not own.
  const nodeRefusal = (status === 400 || status === 431) && body === '' && res.headers['connection'] === 'close';
  if (nodeRefusal && wire.socketPath !== undefined) return undefined;
  if (status >= 400 && wire.method !== 'HEAD') return reasonError(wire, res, body);
  return undefined;
}

function exactError(res: WireResponse, body: string, expected: Expected): string | undefined {
  const want = `expected ${expected.status}${expected.body === undefined ? '' : ` ${String(expected.body)}`}${expected.first === undefined ? '' : ` with ${expected.first} first`}`;
  if (res.outcome !== 'response') return undefined;
  if (res.status !== expected.status) return `${want}, got ${res.status} ${JSON.stringify(body.slice(0, 200))}`;
  const text = expected.body;
  if (typeof text === 'string' ? body !== text : text !== undefined && !text.test(body))
    return `${want}, got ${JSON.stringify(body.slice(0, 200))}`;
  if (expected.first !== undefined && res.check?.types[0] !== expected.first)
    return `${want}, the stream began with ${res.check?.types[0] ?? 'nothing'}`;
  if (expected.contentType !== undefined && res.headers['content-type'] !== expected.contentType) {
    return `${want} in ${expected.contentType}, got ${JSON.stringify(res.headers['content-type'])}`;
  }
  return undefined;
}
