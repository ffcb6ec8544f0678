/**
 * A client of an agent's operator API (`POST /api/v1` on the agent's own
 * address, `mesos.v1.agent.Call`), in JSON or protobuf: the calls answered
 * with a Response (GET_STATE, GET_CONTAINERS, GET_FLAGS, ...) handed back
 * as typed upstream JSON whatever the encoding, and those answered with an
 * empty 200 (KILL_CONTAINER, REMOVE_CONTAINER, ...). An exec session into a
 * task is `execInTask` (task-exec.ts).
 */
import http from 'node:http';
import { MEDIA, decodeMessage, encodeMessage, type Encoding } from './codec.js';
import type { CallResult } from './event-queue.js';
import type {
  AgentCall,
  AgentCallType,
  AgentResponse,
  AgentResponseOf,
  AgentResponseType,
  Json,
  mesos,
} from './protocol.js';
import { clientOptions, expectAccepted, expectResponse, postRaw, type ClientOptions } from './scheduler-client.js';

/** The calls whose answer is a Response of the same type. */
export type AgentGetType = AgentCallType & AgentResponseType;

export class AgentOperatorClient {
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #url: URL;
  readonly encoding: Encoding;
  readonly headers: Readonly<Record<string, string>>;

  /** `agentUrl`: the agent's base URL (`http://127.0.0.1:5051`, the `pid`'s address the master reports). */
  constructor(agentUrl: string, options: ClientOptions = {}) {
    const given = clientOptions(options, undefined);
    this.encoding = given.encoding;
    this.headers = given.headers;
    this.#url = new URL('/api/v1', agentUrl.includes('://') ? agentUrl : `http://${agentUrl}`);
  }

  /** Posts a call; the answer whatever its status, with its Response as JSON when it has one. */
  async call(call: AgentCall): Promise<CallResult & { readonly response: AgentResponse | undefined }> {
    const media = MEDIA[this.encoding];
    const body = encodeMessage(this.encoding, 'mesos.v1.agent.Call', call);
    const raw = await postRaw(this.#url, body, { ...this.headers, 'content-type': media, accept: media }, this.#agent);
    const response =
      raw.status === 200 && raw.bytes.length > 0
        ? (decodeMessage(this.encoding, 'mesos.v1.agent.Response', raw.bytes, 'Response') as AgentResponse)
        : undefined;
    return { status: raw.status, body: raw.bytes.toString('utf8'), headers: raw.headers, response };
  }

  /** A call answered with a Response of its type (`GET_CONTAINERS`...), typed; throws a CallError when refused. */
  async get<T extends AgentGetType>(type: T, fields: Omit<AgentCall, 'type'> = {}): Promise<AgentResponseOf<T>> {
    return expectResponse(type, await this.call({ ...fields, type })) as AgentResponseOf<T>;
  }

  /** A call answered without a Response (KILL_CONTAINER, REMOVE_CONTAINER, SET_LOGGING_LEVEL, ...); throws a CallError when refused. */
  async send(call: AgentCall): Promise<void> {
    expectAccepted(call.type ?? 'call', await this.call(call));
  }

  async getState(): Promise<Json<mesos.v1.agent.Response.GetState>> {
    return (await this.get('GET_STATE')).get_state;
  }

  async getContainers(): Promise<Json<mesos.v1.agent.Response.GetContainers>> {
    return (await this.get('GET_CONTAINERS')).get_containers;
  }

  async getFlags(): Promise<Json<mesos.v1.agent.Response.GetFlags>> {
    return (await this.get('GET_FLAGS')).get_flags;
  }

  async getAgent(): Promise<Json<mesos.v1.agent.Response.GetAgent>> {
    return (await this.get('GET_AGENT')).get_agent;
  }

  async getTasks(): Promise<Json<mesos.v1.agent.Response.GetTasks>> {
    return (await this.get('GET_TASKS')).get_tasks;
  }

  async getExecutors(): Promise<Json<mesos.v1.agent.Response.GetExecutors>> {
    return (await this.get('GET_EXECUTORS')).get_executors;
  }

  async getFrameworks(): Promise<Json<mesos.v1.agent.Response.GetFrameworks>> {
    return (await this.get('GET_FRAMEWORKS')).get_frameworks;
  }

  /** Lets go of the connections it keeps. */
  close(): void {
    this.#agent.destroy();
  }
}
