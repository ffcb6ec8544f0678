/**
 * GET_STATE and GET_TASKS written as a stream: the same bytes as
 * `encodeResponseJson` / `encodeResponseProto` of `readResponse`, in pieces.
 *
 * The snapshot is taken when the call is read: the tasks as of then
 * (tasks-as-of.ts), and the executors, frameworks and agents as their wire
 * messages (their count follows the agents and frameworks, not the tasks).
 * The pieces are written from it later, a task at a time. JSON goes out as
 * it is written. Protobuf puts each message's length before it, so the
 * tasks are encoded first, pausing now and then (`PAUSE`) so the server
 * answers others meanwhile, and written once all their lengths are known.
 */
import type { Task } from '../core/master/framework.js';
import type { ClusterView, FrameworkView } from '../core/view.js';
import { encodeJson } from './json-encode.js';
import { getAgents, getExecutors, getFrameworks } from './operator-state.js';
import { encodeProto } from './proto-codec.js';
import { ProtoWriter } from './proto-writer.js';
import { messageType } from './schema.js';
import { TasksAsOf } from './tasks-as-of.js';
import { taskWireJson, writeTaskProto } from './task-writer.js';
import { SHOW_ALL, type Viewer } from './view-filter.js';

/** Yielded among the pieces: nothing to write yet, let the server serve others before going on. */
export const PAUSE: unique symbol = Symbol('pause');

export type OperatorPiece = string | Uint8Array | typeof PAUSE;

export interface OperatorSnapshot {
  json(): Generator<OperatorPiece, void, undefined>;
  proto(): Generator<OperatorPiece, void, undefined>;
}

/** Tasks encoded between pauses. */
const TASKS_PER_TURN = 2000;

/** Bytes of encoded tasks per chunk. */
const CHUNK_BYTES = 256 * 1024;

const RESPONSE = 'mesos.v1.master.Response';

/** The three lists of GetTasks we fill, with their field names, in field number order. */
interface TaskLists {
  readonly tasks: TasksAsOf;
  readonly completed_tasks: TasksAsOf;
  readonly unreachable_tasks: TasksAsOf;
}

const LIST_FIELDS = ['tasks', 'completed_tasks', 'unreachable_tasks'] as const;

/** The tasks the reader may view, of frameworks it may view, as `getTasks` lists them. */
function taskListsAsOf(view: ClusterView, viewer: Viewer): TaskLists {
  const lists = { tasks: new TasksAsOf(), completed_tasks: new TasksAsOf(), unreachable_tasks: new TasksAsOf() };
  const frameworks: FrameworkView[] = [...view.frameworks(), ...view.completedFrameworks()];
  for (const fw of frameworks) {
    const { user } = fw.info;
    if (!viewer.all && !viewer.framework(user)) continue;
    const seen = (task: Task) => viewer.all || viewer.task(task.spec, user);
    for (const task of fw.tasks.values()) if (seen(task)) (task.state === 'TASK_UNREACHABLE' ? lists.unreachable_tasks : lists.tasks).add(task, user);
    for (const task of fw.completedTasks) if (seen(task)) lists.completed_tasks.add(task, user);
  }
  return lists;
}

/** GET_TASKS: the Response with its `get_tasks`. */
export function snapshotGetTasks(view: ClusterView, viewer: Viewer = SHOW_ALL): OperatorSnapshot {
  const lists = taskListsAsOf(view, viewer);
  return snapshotOf('GET_TASKS', 'get_tasks', lists, []);
}

/** GET_STATE: the Response with its `get_state`, tasks first, then executors, frameworks and agents. */
export function snapshotGetState(view: ClusterView, viewer: Viewer = SHOW_ALL): OperatorSnapshot {
  const lists = taskListsAsOf(view, viewer);
  const rest: Part[] = [
    { field: 'get_executors', type: 'GetExecutors', value: getExecutors(view, viewer) },
    { field: 'get_frameworks', type: 'GetFrameworks', value: getFrameworks(view, viewer) },
    { field: 'get_agents', type: 'GetAgents', value: getAgents(view, viewer) },
  ];
  return snapshotOf('GET_STATE', 'get_state', lists, rest);
}

/** A field of GetState after its tasks, a message of `Response.<type>`. */
interface Part {
  readonly field: string;
  readonly type: string;
  readonly value: object;
}

function snapshotOf(type: 'GET_STATE' | 'GET_TASKS', field: 'get_state' | 'get_tasks', lists: TaskLists, rest: readonly Part[]): OperatorSnapshot {
  const nested = field === 'get_state';
  return {
    *json() {
      yield `{"type":"${type}","${field}":{`;
      if (nested) yield '"get_tasks":{';
      yield* tasksJson(lists);
      if (nested) yield '}';
      for (const part of rest) yield `,"${part.field}":${encodeJson(`${RESPONSE}.${part.type}`, part.value)}`;
      yield '}}';
    },
    *proto() {
      const encoded: [number, Uint8Array[]][] = [];
      for (const name of LIST_FIELDS) encoded.push([fieldNumber(`${RESPONSE}.GetTasks`, name), []]);
      yield* encodeTasks(lists, encoded);
      const getTasks = encoded.reduce((sum, [, chunks]) => sum + chunks.reduce((s, bytes) => s + bytes.length, 0), 0);
      const parts = rest.map((part): [number, Uint8Array] => [fieldNumber(`${RESPONSE}.GetState`, part.field), encodeProto(`${RESPONSE}.${part.type}`, part.value)]);
      const tasksField = fieldNumber(`${RESPONSE}.GetState`, 'get_tasks');
      const inner = (nested ? fieldLength(tasksField, getTasks) : getTasks) + parts.reduce((sum, [number, bytes]) => sum + fieldLength(number, bytes.length), 0);
      yield encodeProto(RESPONSE, { type });
      yield fieldHead(fieldNumber(RESPONSE, field), inner);
      if (nested) yield fieldHead(tasksField, getTasks);
      for (const [, chunks] of encoded) yield* chunks;
      for (const [number, bytes] of parts) yield* [fieldHead(number, bytes.length), bytes];
    },
  };
}

/** The three lists in field order, each left out when empty, as the JSON encoder writes them. */
function* tasksJson(lists: TaskLists): Generator<OperatorPiece, void, undefined> {
  let first = true;
  for (const name of LIST_FIELDS) {
    const list = lists[name];
    if (list.length === 0) continue;
    yield `${first ? '' : ','}"${name}":[`;
    first = false;
    for (let i = 0; i < list.length; i++) yield (i === 0 ? '' : ',') + taskWireJson(list.at(i), list.userAt(i));
    yield ']';
  }
}

/**
 * Each list's entries of GetTasks (tag, length, task), in chunks of about
 * `CHUNK_BYTES`, pausing every `TASKS_PER_TURN` tasks.
 */
function* encodeTasks(lists: TaskLists, into: readonly [number, Uint8Array[]][]): Generator<OperatorPiece, void, undefined> {
  let n = 0;
  const out = new ProtoWriter(CHUNK_BYTES + 4096);
  for (let f = 0; f < LIST_FIELDS.length; f++) {
    const list = lists[LIST_FIELDS[f]!];
    const [number, chunks] = into[f]!;
    for (let i = 0; i < list.length; i++) {
      writeTaskProto(out, number, list.at(i), list.userAt(i));
      if (out.pos >= CHUNK_BYTES) chunks.push(out.take());
      if (++n % TASKS_PER_TURN === 0) yield PAUSE;
    }
    if (out.pos > 0) chunks.push(out.take());
  }
}

function fieldNumber(typeName: string, field: string): number {
  const found = messageType(typeName).fields[field];
  if (found === undefined) throw new Error(`No field '${field}' in '${typeName}'`);
  return found.id;
}

/** Tag and length of a length-delimited field. */
function fieldHead(number: number, length: number): Uint8Array {
  return Uint8Array.from([...varint((number << 3) | 2), ...varint(length)]);
}

function fieldLength(number: number, length: number): number {
  return varint((number << 3) | 2).length + varint(length).length + length;
}

function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}
