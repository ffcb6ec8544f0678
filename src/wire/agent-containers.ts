/**
 * The agent operator API's container calls, from and to the wire: a task
 * exec session (LAUNCH_NESTED_CONTAINER_SESSION, its ProcessIO output, the
 * ATTACH_CONTAINER_INPUT records), ATTACH_CONTAINER_OUTPUT, LAUNCH_CONTAINER,
 * WAIT_CONTAINER, KILL_CONTAINER, REMOVE_CONTAINER, and their deprecated
 * *_NESTED_CONTAINER forms.
 */
import type { AclAction } from '../core/model/acl-actions.js';
import type { NestedLaunch } from '../core/agent/nested-containers.js';
import type { ContainerTermination, ProcessOutput } from '../core/model/executor-api.js';
import type { mesos } from './generated/types.js';
import { encodeJson } from './json-encode.js';
import { encodeProto } from './proto-codec.js';

type Call = mesos.v1.agent.Call;

/** SIGKILL, upstream's signal for KILL_CONTAINER without one. */
const SIGKILL = 9;

/**
 * A container call. `user` is the launched command's (`CommandInfo.user`);
 * `action` the ACL action a wait, kill or remove asks: the nested one for
 * a ContainerID with a parent (and for the deprecated *_NESTED_* calls),
 * else the standalone one, as upstream's agent picks it.
 */
export type ContainerRequest =
  | {
      readonly kind: 'launch';
      readonly launch: NestedLaunch;
      readonly session: boolean;
      readonly user?: string;
      /** LAUNCH_CONTAINER: a container that exists already is 202, as upstream's ALREADY_LAUNCHED. */
      readonly v1?: boolean;
    }
  /** ATTACH_CONTAINER_OUTPUT; `parentId` is the ContainerID's parent, if it names one. */
  | { readonly kind: 'attach-output'; readonly containerId: string; readonly parentId?: string }
  /** A valid call this agent cannot carry out, with the reason (400, as upstream's failed launches). */
  | { readonly kind: 'refused'; readonly reason: string; readonly standalone?: string }
  | { readonly kind: 'wait'; readonly containerId: string; readonly nested: boolean; readonly action: AclAction }
  | { readonly kind: 'kill'; readonly containerId: string; readonly signal: number; readonly action: AclAction }
  | { readonly kind: 'remove'; readonly containerId: string; readonly action: AclAction };

const nestedOr = (id: mesos.v1.ContainerID, nested: AclAction, standalone: AclAction): AclAction =>
  id.parent === undefined || id.parent === null ? standalone : nested;

/** Whether a decoded agent Call is one of the container calls this agent serves. */
export function isContainerCall(call: Call): boolean {
  return containerRequestFromWire(call) !== undefined;
}

/** The container call a decoded agent Call is, if it is one this agent serves; a string says why it is refused (400). */
export function containerRequestFromWire(call: Call): ContainerRequest | string | undefined {
  switch (call.type) {
    case 'LAUNCH_NESTED_CONTAINER_SESSION': {
      const { container_id, command, container } = call.launch_nested_container_session!;
      return launchOf(container_id, command, container?.tty_info !== undefined, true);
    }
    case 'LAUNCH_NESTED_CONTAINER': {
      const { container_id, command, container } = call.launch_nested_container!;
      return launchOf(container_id, command, container?.tty_info !== undefined, false);
    }
    case 'LAUNCH_CONTAINER':
      return launchContainerOf(call.launch_container!);
    case 'ATTACH_CONTAINER_OUTPUT': {
      const id = call.attach_container_output!.container_id;
      const parent = id.parent === undefined || id.parent === null ? {} : { parentId: id.parent.value };
      return { kind: 'attach-output', containerId: id.value, ...parent };
    }
    case 'WAIT_CONTAINER': {
      const id = call.wait_container!.container_id;
      return {
        kind: 'wait',
        containerId: id.value,
        nested: false,
        action: nestedOr(id, 'wait_nested_containers', 'wait_standalone_containers'),
      };
    }
    case 'WAIT_NESTED_CONTAINER':
      return {
        kind: 'wait',
        containerId: call.wait_nested_container!.container_id.value,
        nested: true,
        action: 'wait_nested_containers',
      };
    case 'KILL_CONTAINER': {
      const { container_id: id, signal } = call.kill_container!;
      return {
        kind: 'kill',
        containerId: id.value,
        signal: signal ?? SIGKILL,
        action: nestedOr(id, 'kill_nested_containers', 'kill_standalone_containers'),
      };
    }
    case 'KILL_NESTED_CONTAINER': {
      const { container_id: id, signal } = call.kill_nested_container!;
      return { kind: 'kill', containerId: id.value, signal: signal ?? SIGKILL, action: 'kill_nested_containers' };
    }
    case 'REMOVE_CONTAINER': {
      const id = call.remove_container!.container_id;
      return {
        kind: 'remove',
        containerId: id.value,
        action: nestedOr(id, 'remove_nested_containers', 'remove_standalone_containers'),
      };
    }
    case 'REMOVE_NESTED_CONTAINER':
      return {
        kind: 'remove',
        containerId: call.remove_nested_container!.container_id.value,
        action: 'remove_nested_containers',
      };
    default:
      return undefined;
  }
}

function launchOf(
  id: mesos.v1.ContainerID,
  command: mesos.v1.CommandInfo | undefined,
  tty: boolean,
  session: boolean,
): Extract<ContainerRequest, { kind: 'launch' }> | string {
  if (id.parent === undefined) return `Expecting 'container_id.parent' to be present`;
  if (command === undefined) return `Expecting 'command' to be present`;
  const shell = command.shell ?? true;
  const argv = shell
    ? ['sh', '-c', command.value ?? '']
    : (command.arguments ?? []).length > 0
      ? [...command.arguments!]
      : [command.value ?? ''];
  const user = typeof command.user === 'string' ? { user: command.user } : {};
  return {
    kind: 'launch',
    launch: { containerId: id.value, parentId: id.parent.value, argv, tty, ...user },
    session,
    ...user,
  };
}

/** Standalone containers need a sandbox and resources of the agent's own, outside what the master allocates. */
export const STANDALONE_REFUSAL =
  "Standalone containers (LAUNCH_CONTAINER without 'container_id.parent') are not supported by this agent: their resources would be taken outside the master's allocation, which the model cannot account for; launch the container under a running executor's container";

/** Nested containers share their parent's resources here: the model has no limits of their own to enforce. */
export const NESTED_RESOURCES_REFUSAL =
  "Resources or limits of a nested container (LAUNCH_CONTAINER with 'resources' or 'limits') are not supported by this agent: a nested container shares its parent's resources in this model";

/**
 * LAUNCH_CONTAINER, the v1 call: a nested container as LAUNCH_NESTED_CONTAINER
 * launches it; a ContainerInfo of another type than MESOS is upstream's
 * NOT_SUPPORTED (400); what the model cannot carry out is refused, saying why.
 */
function launchContainerOf(payload: mesos.v1.agent.Call.LaunchContainer): ContainerRequest | string {
  const { container_id, command, container } = payload;
  if (container_id.parent === undefined || container_id.parent === null)
    return { kind: 'refused', reason: STANDALONE_REFUSAL, standalone: container_id.value };
  if (container !== undefined && container.type !== 'MESOS')
    return { kind: 'refused', reason: 'The provided ContainerInfo is not supported' };
  if ((payload.resources ?? []).length > 0 || Object.keys(payload.limits ?? {}).length > 0)
    return { kind: 'refused', reason: NESTED_RESOURCES_REFUSAL };
  const launch = launchOf(container_id, command, container?.tty_info !== undefined, false);
  return typeof launch === 'string' ? launch : { ...launch, v1: true };
}

/** The answer to WAIT_CONTAINER (or the deprecated WAIT_NESTED_CONTAINER). */
export function waitResponse(termination: ContainerTermination, nested: boolean): mesos.v1.agent.Response {
  const body = {
    exit_status: termination.exitStatus,
    ...(termination.message === undefined ? {} : { message: termination.message }),
  };
  return nested
    ? { type: 'WAIT_NESTED_CONTAINER', wait_nested_container: body }
    : { type: 'WAIT_CONTAINER', wait_container: body };
}

/**
 * The agent's `--http_heartbeat_interval` (upstream's default, 30 s): how
 * often an attached output stream hears a CONTROL HEARTBEAT record.
 */
export const ATTACH_HEARTBEAT_INTERVAL_MS = 30_000;

/** A record of an output stream: a piece of output, or the heartbeat its stream writes while it is quiet. */
export type ProcessRecord = ProcessOutput | { readonly type: 'HEARTBEAT' };

function processIoOf(record: ProcessRecord): mesos.v1.agent.ProcessIO {
  if ('type' in record) {
    const interval = { nanoseconds: ATTACH_HEARTBEAT_INTERVAL_MS * 1e6 };
    return { type: 'CONTROL', control: { type: 'HEARTBEAT', heartbeat: { interval } } };
  }
  return { type: 'DATA', data: { type: record.stream, data: new TextEncoder().encode(record.data) } };
}

export function processIoToJson(record: ProcessRecord): string {
  return encodeJson('mesos.v1.agent.ProcessIO', processIoOf(record));
}

export function processIoToProto(record: ProcessRecord): Uint8Array {
  return encodeProto('mesos.v1.agent.ProcessIO', processIoOf(record));
}

/** One record of an ATTACH_CONTAINER_INPUT stream, as the route acts on it. */
export type InputRecord =
  | { readonly kind: 'container'; readonly containerId: string }
  | { readonly kind: 'stdin'; readonly data: string }
  | { readonly kind: 'end' }
  | { readonly kind: 'control' }
  | { readonly kind: 'invalid'; readonly reason: string };

/** A decoded input record (an agent Call of type ATTACH_CONTAINER_INPUT). */
export function inputRecordOf(call: Call): InputRecord {
  const input = call.attach_container_input;
  if (call.type !== 'ATTACH_CONTAINER_INPUT' || input === undefined)
    return { kind: 'invalid', reason: "Expecting 'attach_container_input' to be present" };
  if (input.type === 'CONTAINER_ID') {
    return input.container_id === undefined
      ? { kind: 'invalid', reason: "Expecting 'container_id' to be present" }
      : { kind: 'container', containerId: input.container_id.value };
  }
  const io = input.process_io;
  if (input.type !== 'PROCESS_IO' || io === undefined)
    return { kind: 'invalid', reason: "Expecting 'process_io' to be present" };
  if (io.type === 'CONTROL') return { kind: 'control' };
  if (io.type !== 'DATA' || io.data?.type !== 'STDIN')
    return { kind: 'invalid', reason: 'Expecting STDIN data or a control message' };
  const bytes = io.data.data ?? new Uint8Array();
  return bytes.length === 0 ? { kind: 'end' } : { kind: 'stdin', data: new TextDecoder().decode(bytes) };
}
