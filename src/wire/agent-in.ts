/**
 * Agent operator calls (`POST /api/v1` on an agent) from wire messages:
 * upstream's validation (`validation::agent::call::validate`), then what
 * the call is for the route: a read answered from the agent's own state,
 * or upstream's answer for a feature this agent does not have.
 */
import { filesCallOf, type FilesCall } from './files.js';
import type { mesos } from './generated/types.js';
import { missingPayload, type Unsupported } from './operator-in.js';

type Call = mesos.v1.agent.Call;
export type AgentCallType = mesos.v1.agent.Call.Type;

/** Calls answered from the agent's own state in the read model. */
export const AGENT_READ_CALLS = [
  'GET_HEALTH',
  'GET_FLAGS',
  'GET_VERSION',
  'GET_LOGGING_LEVEL',
  'GET_STATE',
  'GET_CONTAINERS',
  'GET_FRAMEWORKS',
  'GET_EXECUTORS',
  'GET_TASKS',
  'GET_AGENT',
  'GET_RESOURCE_PROVIDERS',
  'GET_METRICS',
] as const;
export type AgentReadCall = (typeof AGENT_READ_CALLS)[number];

export type AgentRequest =
  | { readonly kind: 'read'; readonly type: AgentReadCall; readonly call: Call }
  /** UPDATE_CONTAINER_MEMORY_LIMIT (a local extension), validated: a top-level ContainerID and a positive finite MiB. */
  | { readonly kind: 'memory-limit'; readonly containerId: string; readonly mib: number }
  | { readonly kind: 'unsupported'; readonly answer: Unsupported }
  /** LIST_FILES and READ_FILE: the agent's sandboxes, as its files API reads them. */
  | { readonly kind: 'files'; readonly call: FilesCall };

/** The payload each call must carry, as upstream's validation requires it. */
const PAYLOADS: Partial<Record<AgentCallType, keyof Call>> = {
  GET_METRICS: 'get_metrics',
  SET_LOGGING_LEVEL: 'set_logging_level',
  LIST_FILES: 'list_files',
  READ_FILE: 'read_file',
  LAUNCH_NESTED_CONTAINER: 'launch_nested_container',
  WAIT_NESTED_CONTAINER: 'wait_nested_container',
  KILL_NESTED_CONTAINER: 'kill_nested_container',
  REMOVE_NESTED_CONTAINER: 'remove_nested_container',
  LAUNCH_NESTED_CONTAINER_SESSION: 'launch_nested_container_session',
  ATTACH_CONTAINER_INPUT: 'attach_container_input',
  ATTACH_CONTAINER_OUTPUT: 'attach_container_output',
  LAUNCH_CONTAINER: 'launch_container',
  WAIT_CONTAINER: 'wait_container',
  KILL_CONTAINER: 'kill_container',
  REMOVE_CONTAINER: 'remove_container',
  ADD_RESOURCE_PROVIDER_CONFIG: 'add_resource_provider_config',
  UPDATE_RESOURCE_PROVIDER_CONFIG: 'update_resource_provider_config',
  REMOVE_RESOURCE_PROVIDER_CONFIG: 'remove_resource_provider_config',
  MARK_RESOURCE_PROVIDER_GONE: 'mark_resource_provider_gone',
  UPDATE_CONTAINER_MEMORY_LIMIT: 'update_container_memory_limit',
};

/** Upstream's agent call validation: the reason a decoded call is invalid, if it is. */
export function agentCallError(call: Call): string | undefined {
  return (
    missingPayload(call, PAYLOADS) ??
    (call.type === 'UPDATE_CONTAINER_MEMORY_LIMIT' ? memoryLimitError(call.update_container_memory_limit!) : undefined)
  );
}

/**
 * UPDATE_CONTAINER_MEMORY_LIMIT (spec rules 2 and 3): the ContainerID of a
 * top-level container (a nested one is refused) and a limit that is a
 * positive finite number of MiB.
 */
function memoryLimitError(payload: mesos.v1.agent.Call.UpdateContainerMemoryLimit): string | undefined {
  const field = 'update_container_memory_limit';
  if (payload.container_id.value === '') return `Expecting '${field}.container_id.value' to be non-empty`;
  if (payload.container_id.parent !== undefined && payload.container_id.parent !== null) {
    return `'${field}.container_id' is a nested ContainerID; only a top-level task container's memory limit can be updated`;
  }
  const mib = payload.memory_limit.value;
  if (!(Number.isFinite(mib) && mib > 0))
    return `Expecting '${field}.memory_limit.value' to be a positive finite number of MiB, got ${mib}`;
  return undefined;
}

/**
 * What a valid call is for the route. LIST_FILES and READ_FILE read its
 * sandboxes (files.ts); the logging level toggle, operations and resource
 * provider configuration are features it lacks (501). The container calls
 * (LAUNCH_CONTAINER and ATTACH_CONTAINER_OUTPUT among them) are
 * agent-containers.ts's.
 */
export function agentRequestFromWire(call: Call): AgentRequest {
  const type = call.type!;
  if ((AGENT_READ_CALLS as readonly string[]).includes(type))
    return { kind: 'read', type: type as AgentReadCall, call };
  if (type === 'UPDATE_CONTAINER_MEMORY_LIMIT') {
    const payload = call.update_container_memory_limit!;
    return { kind: 'memory-limit', containerId: payload.container_id.value, mib: payload.memory_limit.value };
  }
  const files = filesCallOf(call);
  if (files !== undefined) return { kind: 'files', call: files };
  return { kind: 'unsupported', answer: 'NOT_IMPLEMENTED' };
}
