/**
 * A queue request (spec 002, "Queue request body") read from the JSON the
 * workflow operator posts, checked field by field: a malformed body is
 * refused with one line that names the field. The older operator's names
 * are accepted too: `airflow_task_id` for `workflow_task_id`, `memlimit`
 * for `mem_limit`, and `container_type` `MESOS`.
 */
import { idError } from '../../core/master/validation.js';
import { isConstraint, NETWORK_MODES, type NetworkMode, type WorkflowConfig } from './config.js';

export type ContainerType = 'DOCKER' | 'MESOS';

export interface QueueRequest {
  /** Given by the client, or `workflow.<n>` when it gave none (as the integration does). */
  readonly taskId: string;
  readonly containerType: ContainerType;
  /** The command and its arguments (a string was turned into `/bin/sh -c <string>`). */
  readonly command: readonly string[];
  readonly image: string;
  readonly cpus: number;
  readonly memMib: number;
  readonly diskMib: number;
  /** `<name>:<value>` constraints of this request (the configured global ones are added at matching). */
  readonly attributes: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly forcePull: boolean;
  readonly networkMode: NetworkMode | undefined;
  readonly user: string | undefined;
  /** `source:container_path[:ro|rw]`. */
  readonly volumes: readonly string[];
}

export type RequestResult =
  | { readonly ok: true; readonly request: QueueRequest }
  | { readonly ok: false; readonly error: string };

/** The integration's own answer to a body without a command. */
export const NO_COMMAND = 'Expecting command in queue_command call';

const MEM_UNITS: Record<string, number> = { '': 1, k: 1 / 1024, m: 1, g: 1024 };

/**
 * Memory in MiB: a plain number (MiB), or a number with a unit suffix
 * `k`, `m` or `g` (optionally followed by `b`, any case) as engine
 * memory limits are written: `128m`, `1g`, `65536k`.
 */
export function parseMemLimit(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)b?\s*$/i.exec(value);
  if (m === null) return undefined;
  const mib = Number(m[1]) * MEM_UNITS[m[2]!.toLowerCase()]!;
  return mib > 0 ? mib : undefined;
}

/** The command: a list of strings as given, a string through `/bin/sh -c`. */
function commandOf(value: unknown): readonly string[] | string {
  if (typeof value === 'string') return value.trim() === '' ? "'command' must not be empty" : ['/bin/sh', '-c', value];
  if (!Array.isArray(value) || value.length === 0) return "'command' must be a non-empty list of strings or a string";
  if (!value.every((w) => typeof w === 'string' || typeof w === 'number'))
    return "'command' must be a non-empty list of strings or a string";
  return value.map(String);
}

function stringList(
  body: Record<string, unknown>,
  field: string,
  check: (s: string) => boolean,
  what: string,
): readonly string[] | string {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && check(s)))
    return `'${field}' must be a list of ${what}`;
  return value as string[];
}

function environmentOf(value: unknown): Readonly<Record<string, string>> | string {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return "'environment' must be an object of strings";
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      return `'environment.${k}' must be a string`;
    out[k] = String(v);
  }
  return out;
}

function quantity(body: Record<string, unknown>, field: string, fallback: number): number | string {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : `'${field}' must be a non-negative number`;
}

function optionalText(body: Record<string, unknown>, field: string): string | undefined | { error: string } {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : { error: `'${field}' must be a non-empty string` };
}

/**
 * The longest request id: its task's id on the cluster is the request id,
 * or `<id>.<run>` when an ended id is queued again, and the cluster takes
 * task ids of at most 255 characters; this leaves room for the run.
 */
export const MAX_TASK_ID_LENGTH = 240;

/**
 * Why a request id cannot be a cluster task id, or undefined: the cluster's
 * rules for ids (not empty, not `.` or `..`, no control characters, no
 * slash or backslash) and `MAX_TASK_ID_LENGTH`; and text that is not
 * Unicode (a lone surrogate) names nothing a client could look up.
 */
export function taskIdError(id: string, field: string): string | undefined {
  if (id.length > MAX_TASK_ID_LENGTH)
    return `'${field}' must be at most ${MAX_TASK_ID_LENGTH} characters, got ${id.length}`;
  if (/\p{Cs}/u.test(id)) return `'${field}' must be Unicode text (it holds a lone surrogate)`;
  const error = idError(id);
  return error === undefined ? undefined : `'${field}' is not a task id the cluster takes: ${error}`;
}

/** DOCKER (the spec's ENGINE) runs an engine container; MESOS (the spec's CLUSTER) the cluster's own with the image. */
function containerTypeOf(value: unknown): ContainerType | undefined {
  if (value === undefined || value === null) return 'DOCKER';
  const s = typeof value === 'string' ? value.toUpperCase() : '';
  if (s === 'DOCKER' || s === 'ENGINE') return 'DOCKER';
  if (s === 'MESOS' || s === 'CLUSTER') return 'MESOS';
  return undefined;
}

const isVolume = (s: string): boolean => /^[^:]+:\/[^:]*(?::(?:ro|rw))?$/i.test(s);

/** Reads a queue request; `nextId` names a request that carries no id. */
export function parseQueueRequest(body: unknown, config: WorkflowConfig, nextId: () => string): RequestResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, error: 'The body must be a JSON object' };
  const b = body as Record<string, unknown>;
  if (b['command'] === undefined || b['command'] === null) return { ok: false, error: NO_COMMAND };
  const idField = b['workflow_task_id'] !== undefined ? 'workflow_task_id' : 'airflow_task_id';
  const id = optionalText(b, idField);
  const badId = typeof id === 'string' ? taskIdError(id, idField) : undefined;
  if (badId !== undefined) return { ok: false, error: badId };
  const image = optionalText(b, 'image') ?? config.engineImageSlave;
  const user = optionalText(b, 'user');
  const memField = b['mem_limit'] !== undefined ? 'mem_limit' : 'memlimit';
  const mem = b[memField] === undefined || b[memField] === null ? config.taskMemoryMib : parseMemLimit(b[memField]);
  const network =
    b['network_mode'] === undefined || b['network_mode'] === null ? undefined : String(b['network_mode']).toUpperCase();
  const fields = {
    command: commandOf(b['command']),
    cpus: quantity(b, 'cpus', config.taskCpus),
    diskMib: quantity(b, 'disk', config.taskDiskMib),
    attributes: stringList(b, 'attributes', isConstraint, '<name>:<value> strings'),
    volumes: stringList(b, 'volumes', isVolume, 'source:/container/path[:ro|rw] strings'),
    environment: environmentOf(b['environment']),
  };
  for (const value of Object.values(fields)) if (typeof value === 'string') return { ok: false, error: value };
  const containerType = containerTypeOf(b['container_type']);
  if (containerType === undefined) return { ok: false, error: "'container_type' must be DOCKER or MESOS" };
  for (const value of [id, user]) if (typeof value === 'object') return { ok: false, error: value.error };
  if (typeof image !== 'string')
    return {
      ok: false,
      error: image === undefined ? "'image' is required (no engine_image_slave is configured)" : image.error,
    };
  if (mem === undefined)
    return { ok: false, error: `'${memField}' must be a positive number of MiB or a number with a unit k, m or g` };
  if (network !== undefined && !(NETWORK_MODES as readonly string[]).includes(network))
    return { ok: false, error: `'network_mode' must be one of ${NETWORK_MODES.join(', ')}` };
  if (b['force_pull'] !== undefined && b['force_pull'] !== null && typeof b['force_pull'] !== 'boolean')
    return { ok: false, error: "'force_pull' must be a boolean" };
  return {
    ok: true,
    request: {
      taskId: (id as string | undefined) ?? nextId(),
      ...(fields as Pick<QueueRequest, keyof typeof fields>),
      containerType,
      image,
      memMib: mem,
      forcePull: b['force_pull'] === true,
      networkMode: network as NetworkMode | undefined,
      user: user as string | undefined,
    },
  };
}
