/**
 * What the agent operator API (`POST /api/v1` on an agent) may answer,
 * beyond the rules every endpoint keeps (no hang, no crash, no unexpected
 * 5xx):
 *
 *   statuses   200, 400, 404, 405, 406, 409, 413, 415, and node's 417 and
 *              431; 202 only to LAUNCH_CONTAINER, without a body; 501 only
 *              with its catalogue text; 503 only while the agent is down,
 *              with upstream's text; 500 only for UPDATE_CONTAINER_MEMORY_LIMIT
 *              on an agent that cannot set a memory limit (no `cgroups/mem`,
 *              or a memory controller not delegated), as the spec has it,
 *              and for ATTACH_CONTAINER_OUTPUT with upstream's containerizer
 *              failures
 *   errors     a reason: plain text, one line, never empty
 *   200        a container's output stream (RecordIO, its records ProcessIO
 *              in the `Message-Content-Type` named) for
 *              LAUNCH_NESTED_CONTAINER_SESSION and ATTACH_CONTAINER_OUTPUT
 *              alone; no body for
 *              the calls without a Response (launch, kill, remove, memory
 *              limit, an input stream); for a wait or a read, a Response of
 *              the call's type in the encoding asked for
 *   exactly    for a request sent as an ordinary client sends it (POST, one
 *              Content-Type of the two, an Accept of the two or none, no
 *              other header) with a valid call: a read is 200 while the
 *              agent runs, 503 while it is down; a memory limit on a
 *              running task's container is 200, or 500 where the agent
 *              cannot set one, and 503 while the agent is down
 */
import { httpError } from '../../src/http/errors.js';
import { AGENT_READ_CALLS, agentCallError } from '../../src/wire/agent-in.js';
import type { mesos } from '../../src/wire/generated/types.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import { AGENT_CALL_TYPE, AGENT_RESPONSE_TYPE } from './agent-calls.js';
import { AGENT_OPERATOR_PATHS } from './agent-requests.js';
import { AGENT_DOWN } from './executor-judge.js';
import { askedFor, callOf, reasonError, responseError } from './operator-judge.js';
import type { WireRequest, WireResponse } from './transport.js';

type Call = mesos.v1.agent.Call;

const STATUSES = new Set([200, 202, 400, 404, 405, 406, 409, 413, 415, 417, 431, 500, 501, 503]);
const MESSAGE_TYPES = ['application/json', 'application/x-protobuf'];
const NOT_IMPLEMENTED = httpError('NOT_IMPLEMENTED');
const CALL_FAILED = httpError('CALL_FAILED');
/** What upstream's containerizer fails an ATTACH_CONTAINER_OUTPUT with (a 500). */
const ATTACH_FAILURE = /^(Unknown container \S+|I\/O switchboard server was disabled for this container)$/;
/** The calls whose answer may be a container's output stream. */
const STREAM_CALLS: readonly (string | undefined)[] = ['LAUNCH_NESTED_CONTAINER_SESSION', 'ATTACH_CONTAINER_OUTPUT'];
/** The calls whose 200 has no body. */
const EMPTY_ANSWER_CALLS: readonly string[] = [
  'LAUNCH_NESTED_CONTAINER',
  'LAUNCH_CONTAINER',
  'KILL_CONTAINER',
  'KILL_NESTED_CONTAINER',
  'REMOVE_CONTAINER',
  'REMOVE_NESTED_CONTAINER',
  'UPDATE_CONTAINER_MEMORY_LIMIT',
];
const RESPONSE_CALLS: readonly string[] = [...AGENT_READ_CALLS, 'WAIT_CONTAINER', 'WAIT_NESTED_CONTAINER'];

/** The agent a request goes to, as it is just before the request. */
export interface AgentOperatorState {
  readonly up: boolean;
  /** Whether UPDATE_CONTAINER_MEMORY_LIMIT can be carried out on this cluster's agents. */
  readonly memoryLimits: boolean;
  /** The containers of the tasks it runs. */
  readonly running: ReadonlySet<string>;
}

export function agentOperatorState(
  running: RunningCluster,
  agentId: string,
  memoryLimits: boolean,
): AgentOperatorState {
  return running.driver.read((view) => {
    const node = view.agentNode(agentId);
    const tasks = (node?.executors() ?? []).filter(
      (e) => e.alive && [...e.tasks.values()].some((t) => t.state === 'TASK_RUNNING'),
    );
    return {
      up: node !== undefined && node.state !== 'crashed',
      memoryLimits,
      running: new Set(tasks.map((e) => e.containerId)),
    };
  });
}

/** What is wrong with the answer, if anything, and whether it was held to the one right answer. */
export function agentVerdict(
  wire: WireRequest,
  res: WireResponse,
  state: AgentOperatorState | undefined,
): { problem?: string; exact: boolean } {
  const problem = generalProblem(wire, res);
  if (problem !== undefined) return { problem, exact: false };
  const expected = state === undefined ? undefined : expectedAnswer(wire, state);
  if (expected === undefined) return { exact: false };
  const got = `${res.status} ${res.status === 200 ? '' : res.body.toString('utf8')}`.trim();
  return got === expected ? { exact: true } : { problem: `answered ${got}, expected ${expected}`, exact: true };
}

function generalProblem(wire: WireRequest, res: WireResponse): string | undefined {
  const status = res.status ?? 0;
  const body = res.body.toString('utf8');
  if (!STATUSES.has(status)) return `the agent operator API answered ${status}`;
  if (status === 501 && body !== NOT_IMPLEMENTED.body)
    return `answered 501 with ${JSON.stringify(body)}, not the catalogue's text`;
  if (status === 503 && body !== AGENT_DOWN)
    return `answered 503 with ${JSON.stringify(body)}, not while the agent is down`;
  const call = callOf<Call>(wire, AGENT_CALL_TYPE);
  const failed =
    (body === CALL_FAILED.body && call?.type === 'UPDATE_CONTAINER_MEMORY_LIMIT') ||
    (ATTACH_FAILURE.test(body) && call?.type === 'ATTACH_CONTAINER_OUTPUT');
  if (status === 500 && !failed) {
    return `answered 500 ${JSON.stringify(body)} to ${call?.type ?? 'a call it could not read'}`;
  }
  if (status >= 400) return wire.method === 'HEAD' ? undefined : reasonError(wire, res, body);
  if (status === 202)
    return call?.type === 'LAUNCH_CONTAINER' && res.body.length === 0 ? undefined : `answered 202 to ${call?.type}`;
  if (status !== 200) return undefined;
  const input = wire.headers.some(([n, v]) => n.toLowerCase() === 'content-type' && v === 'application/recordio');
  if (input)
    return res.body.length === 0 ? undefined : `a 200 to an input stream with a body of ${res.body.length} bytes`;
  const type = call?.type;
  if (res.stream)
    return STREAM_CALLS.includes(type)
      ? undefined
      : `a 200 to ${type ?? 'a call it could not read'} with a session's output stream`;
  if (type === undefined) return undefined;
  if (type === 'LAUNCH_NESTED_CONTAINER_SESSION') return 'a session answered 200 without its output stream';
  if (EMPTY_ANSWER_CALLS.includes(type))
    return res.body.length === 0 ? undefined : `a 200 to ${type} with a body of ${res.body.length} bytes`;
  if (!RESPONSE_CALLS.includes(type)) return `answered 200 to ${type}`;
  const asked = askedFor(wire);
  if (asked !== undefined && res.headers['content-type'] !== asked)
    return `asked for ${asked} alone, answered ${JSON.stringify(res.headers['content-type'])}`;
  return responseError(type, res, AGENT_RESPONSE_TYPE);
}

/** Sent as an ordinary client sends it: POST, one Content-Type of the two, an Accept of the two or none, nothing else. */
function isPlain(wire: WireRequest): boolean {
  if (wire.method !== 'POST' || wire.framing !== 'length' || wire.version !== 'HTTP/1.1' || wire.abort !== 'no')
    return false;
  if (!AGENT_OPERATOR_PATHS.includes(wire.target)) return false;
  const names = wire.headers.map(([n]) => n.toLowerCase());
  if (names[0] !== 'host' || names.filter((n) => n === 'content-type').length !== 1) return false;
  return wire.headers
    .slice(1)
    .every(([n, v]) => ['content-type', 'accept'].includes(n.toLowerCase()) && MESSAGE_TYPES.includes(v));
}

/** The one answer (`200`, or the status and reason) upstream's agent gives, where the judge can tell it. */
function expectedAnswer(wire: WireRequest, state: AgentOperatorState): string | undefined {
  if (!isPlain(wire)) return undefined;
  const call = callOf<Call>(wire, AGENT_CALL_TYPE);
  if (call === undefined || agentCallError(call) !== undefined) return undefined;
  if ((AGENT_READ_CALLS as readonly (string | undefined)[]).includes(call.type))
    return state.up ? '200' : `503 ${AGENT_DOWN}`;
  if (call.type !== 'UPDATE_CONTAINER_MEMORY_LIMIT') return undefined;
  if (!state.up) return `503 ${AGENT_DOWN}`;
  if (!state.running.has(call.update_container_memory_limit!.container_id.value)) return undefined;
  return state.memoryLimits ? '200' : `500 ${CALL_FAILED.body}`;
}
