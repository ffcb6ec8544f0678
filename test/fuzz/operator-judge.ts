/**
 * What the master operator API (`POST /api/v1`) may answer, beyond the
 * rules every endpoint keeps (no hang, no crash, no unexpected 5xx):
 *
 *   statuses   200, 400, 401, 403, 404, 405, 406, 409, 413, 415, 501, 503
 *              (417 and 431 are node's, for an Expect it does not know and
 *              a head over its limit); 501 only with its catalogue text,
 *              503 only at the master's capacity
 *   errors     a reason: plain text, one line, never empty; but for the
 *              answers node and fastify give before any route runs
 *   401        with its challenge (WWW-Authenticate)
 *   200        empty for the calls that have no Response (TEARDOWN,
 *              UPDATE_QUOTA, RESERVE_RESOURCES...); for the others a
 *              Response of the call's type in the negotiated encoding (the
 *              one asked for, when the request accepts only one); for
 *              SUBSCRIBE an event stream whose records decode
 *
 * The call the master answered is read back from the request's bytes as
 * the master reads them; a body the fuzzer cannot decode leaves only the
 * status and reason rules.
 *
 * `reopen` undoes, through the API itself, what an operator may do to keep
 * a new framework from getting offers (quotas, deactivated agents), before
 * the final checks ask for offers.
 */
import { gunzipSync } from 'node:zlib';
import { httpError } from '../../src/http/errors.js';
import { decodeJson } from '../../src/wire/json.js';
import { decodeProto } from '../../src/wire/proto-codec.js';
import { EMPTY_ANSWER_CALLS, OPERATOR_CALL_TYPE, OPERATOR_RESPONSE_TYPE } from './operator-calls.js';
import type { WireRequest, WireResponse } from './transport.js';

const STATUSES = new Set([200, 400, 401, 403, 404, 405, 406, 409, 413, 415, 417, 431, 501, 503]);
const NOT_IMPLEMENTED = httpError('NOT_IMPLEMENTED');
const CAPACITY = /^Too many (subscriptions|frameworks)\b/;
const MESSAGE_TYPES = ['application/json', 'application/x-protobuf'];

/**
 * fastify's own answer to a request node could not parse (a malformed head,
 * a bad chunk), written before any route runs, in JSON.
 */
const CLIENT_ERROR = /^\{"error":"[^"]*","message":"[^"]*","statusCode":\d{3}\}$/;

/** Undefined when the operator API's answer is acceptable, else what is wrong with it. */
export function operatorVerdict(wire: WireRequest, res: WireResponse): string | undefined {
  const status = res.status ?? 0;
  const body = res.body.toString('utf8');
  if (!STATUSES.has(status)) return `the operator API answered ${status}`;
  if (status === 501 && body !== NOT_IMPLEMENTED.body)
    return `answered 501 with ${JSON.stringify(body)}, not the catalogue's text`;
  if (status === 503 && !CAPACITY.test(body))
    return `answered 503 with ${JSON.stringify(body)}, not at the master's capacity`;
  if (status === 401 && res.headers['www-authenticate'] === undefined)
    return 'answered 401 without a WWW-Authenticate challenge';
  // A HEAD's answer has a head only.
  if (status >= 400) return wire.method === 'HEAD' ? undefined : reasonError(wire, res, body);
  if (status !== 200) return undefined;
  const asked = askedFor(wire);
  if (asked !== undefined && res.body.length > 0 && res.headers['content-type'] !== asked) {
    return `asked for ${asked} alone, answered ${JSON.stringify(res.headers['content-type'])}`;
  }
  if (res.stream)
    return res.check?.api === 'operator' ? undefined : 'an operator event stream answered as a scheduler stream';
  const type = callType(wire);
  if (type === undefined) return undefined;
  if (type === 'SUBSCRIBE') return 'a SUBSCRIBE answered 200 without an event stream';
  if (EMPTY_ANSWER_CALLS.includes(type))
    return res.body.length === 0 ? undefined : `a 200 to ${type} with a body of ${res.body.length} bytes`;
  return responseError(type, res);
}

/** What is wrong with the reason of an error answer: none, more than one line, not plain text. */
export function reasonError(wire: WireRequest, res: WireResponse, body: string): string | undefined {
  const type = res.headers['content-type'];
  if (type === 'application/json' && CLIENT_ERROR.test(body)) return undefined;
  // Node answers an Expect other than 100-continue itself, and an HTTP/1.1 request without Host, with no body.
  if (res.status === 417 && body === '') return undefined;
  const host = wire.headers.some(([n]) => n.toLowerCase() === 'host');
  if (res.status === 400 && body === '' && !host && wire.version === 'HTTP/1.1') return undefined;
  if (body.length === 0) return `answered ${res.status} with no reason`;
  if (/[\r\n]/.test(body)) return `answered ${res.status} with a reason of more than one line`;
  if (type !== 'text/plain; charset=utf-8')
    return `answered ${res.status} with a reason of Content-Type ${JSON.stringify(type)}`;
  return undefined;
}

/** A read's 200: a Response (of `responseType`) of the call's type, in a message encoding. */
export function responseError(
  type: string,
  res: WireResponse,
  responseType = OPERATOR_RESPONSE_TYPE,
): string | undefined {
  const media = res.headers['content-type'];
  if (media === undefined || !MESSAGE_TYPES.includes(media))
    return `a 200 to ${type} of Content-Type ${JSON.stringify(media)}`;
  let bytes = res.body;
  if (res.headers['content-encoding'] === 'gzip') {
    try {
      bytes = gunzipSync(bytes);
    } catch (error) {
      return `a 200 to ${type} whose gzip body does not inflate: ${(error as Error).message}`;
    }
  }
  const decoded =
    media === 'application/json'
      ? decodeJson<{ type?: string }>(responseType, bytes.toString('utf8'), 'Response')
      : decodeProto<{ type?: string }>(responseType, bytes, 'Response');
  if (!decoded.ok) return `a 200 to ${type} that is no Response: ${decoded.error}`;
  if (decoded.value.type !== type) return `a 200 to ${type} with a Response of type ${String(decoded.value.type)}`;
  return undefined;
}

/** The encoding a request accepting exactly one of the two must get. */
export function askedFor(wire: WireRequest): string | undefined {
  const accepts = wire.headers.filter(([n]) => n.toLowerCase() === 'accept');
  return accepts.length === 1 && MESSAGE_TYPES.includes(accepts[0]![1]) ? accepts[0]![1] : undefined;
}

/** The type of the call in the request, read as the server reads it (the first Content-Type, compared whole); a `Call` of `callMessage`. */
export function callType(wire: WireRequest, callMessage = OPERATOR_CALL_TYPE): string | undefined {
  return callOf<{ type?: string }>(wire, callMessage)?.type;
}

/** The call in the request, decoded as the server decodes it; undefined when it does not decode. */
export function callOf<T>(wire: WireRequest, callMessage: string): T | undefined {
  const media = wire.headers.find(([n]) => n.toLowerCase() === 'content-type')?.[1];
  const decoded =
    media === 'application/json'
      ? decodeJson<T>(callMessage, wire.body.toString('utf8'))
      : media === 'application/x-protobuf'
        ? decodeProto<T>(callMessage, wire.body)
        : undefined;
  return decoded?.ok === true ? decoded.value : undefined;
}

/** Posts an operator call as JSON; the answer's status and body. */
async function postCall(
  masterUrl: string,
  call: object,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const res = await fetch(new URL('/api/v1', masterUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(call),
  });
  return { status: res.status, body: await res.text() };
}

/**
 * Every quota reset and every deactivated agent that is not draining
 * reactivated, through the operator API; a refusal is a failure of the
 * calls as much as anything the fuzzer sent. Returns what went wrong, if anything.
 */
export async function reopen(masterUrl: string, headers: Record<string, string>): Promise<string | undefined> {
  const post = (call: object) => postCall(masterUrl, call, headers);
  const quota = await post({ type: 'GET_QUOTA' });
  if (quota.status !== 200) return `GET_QUOTA got ${quota.status} ${quota.body}`;
  const configs =
    (JSON.parse(quota.body) as { get_quota?: { status?: { configs?: { role: string }[] } } }).get_quota?.status
      ?.configs ?? [];
  if (configs.length > 0) {
    const reset = await post({
      type: 'UPDATE_QUOTA',
      update_quota: { force: true, quota_configs: configs.map((c) => ({ role: c.role })) },
    });
    if (reset.status !== 200) return `resetting the quotas got ${reset.status} ${reset.body}`;
  }
  const agents = await post({ type: 'GET_AGENTS' });
  if (agents.status !== 200) return `GET_AGENTS got ${agents.status} ${agents.body}`;
  type Agent = { agent_info: { id: { value: string } }; deactivated?: boolean; drain_info?: { state?: string } };
  for (const agent of (JSON.parse(agents.body) as { get_agents?: { agents?: Agent[] } }).get_agents?.agents ?? []) {
    if (agent.deactivated !== true || agent.drain_info?.state === 'DRAINING') continue;
    const res = await post({ type: 'REACTIVATE_AGENT', reactivate_agent: { agent_id: agent.agent_info.id } });
    if (res.status !== 200) return `REACTIVATE_AGENT of ${agent.agent_info.id.value} got ${res.status} ${res.body}`;
  }
  return undefined;
}
