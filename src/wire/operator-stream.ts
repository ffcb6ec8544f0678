/**
 * GET_STATE and GET_TASKS written as a stream: the same bytes as
 * `encodeResponseJson` / `encodeResponseProto` of `readResponse`, in pieces.
 *
 * The snapshot is taken when the call is read, and reads the cluster as
 * it writes it while the cluster stands still; the moment before the
 * cluster changes (`ClusterView.beforeChange`) it copies what it has not
 * written yet: the tasks as of then (tasks-as-of.ts), and the executors,
 * frameworks and agents as their wire messages. JSON goes out as it is
 * written, a task at a time, straight to text (task-writer.ts). Protobuf
 * puts each message's length before it, so the tasks are first read and
 * measured, pausing now and then (`PAUSE`) so the server answers others
 * meanwhile, then written as they are encoded.
 */
import type { Task } from '../core/model/records.js';
import type { ClusterView, FrameworkView } from '../core/view.js';
import { encodeJson } from './json-encode.js';
import { agentsAsOf, getExecutors, getFrameworks, type AgentsAsOf } from './operator-state.js';
import { agentWireJson, writeAgentProto } from './agent-writer.js';
import { encodeProto } from './proto-codec.js';
import { ProtoWriter, varintLength } from './proto-writer.js';
import { messageType } from './schema.js';
import { filtered, type LiveList } from './live-list.js';
import { liveTasks, TasksAsOf } from './tasks-as-of.js';
import { taskProtoLength, taskWireJson, writeTaskProto } from './task-writer.js';
import { TextChunks } from './text-chunks.js';
import { SHOW_ALL, type Viewer } from './view-filter.js';

/** Yielded among the pieces: nothing to write yet, let the server serve others before going on. */
export const PAUSE: unique symbol = Symbol('pause');

export type OperatorPiece = string | Uint8Array | typeof PAUSE;

export interface OperatorSnapshot {
  /** The response as JSON text, in pieces of about `pieceBytes`; a snapshot is written once, as JSON or as protobuf. */
  json(pieceBytes?: number): Generator<OperatorPiece, void, undefined>;
  proto(): Generator<OperatorPiece, void, undefined>;
}

/** Tasks encoded between pauses. */
const TASKS_PER_TURN = 2000;

/** Bytes of encoded tasks (protobuf or JSON) per chunk. */
const CHUNK_BYTES = 256 * 1024;

const RESPONSE = 'mesos.v1.master.Response';

/** One framework's part of a list of GetTasks: its tasks, read live until the cluster is about to change. */
interface TaskGroup {
  readonly user: string;
  readonly tasks: LiveList<Task>;
}

/** The three lists of GetTasks we fill, with their field names, in field number order. */
type TaskLists = Readonly<Record<(typeof LIST_FIELDS)[number], readonly TaskGroup[]>>;

const LIST_FIELDS = ['tasks', 'completed_tasks', 'unreachable_tasks'] as const;

/** The tasks the reader may view, of frameworks it may view, as `getTasks` lists them. */
function liveTaskLists(view: ClusterView, viewer: Viewer): TaskLists {
  const lists = { tasks: [] as TaskGroup[], completed_tasks: [] as TaskGroup[], unreachable_tasks: [] as TaskGroup[] };
  const frameworks: FrameworkView[] = [...view.frameworks(), ...view.completedFrameworks()];
  for (const fw of frameworks) {
    const { user } = fw.info;
    if (!viewer.all && !viewer.framework(user)) continue;
    const seen = (task: Task) => viewer.all || viewer.task(task.spec, user);
    const group = (tasks: Iterable<Task>): TaskGroup => ({ user, tasks: liveTasks(tasks) });
    lists.tasks.push(group(filtered(fw.tasks.values(), (task) => task.state !== 'TASK_UNREACHABLE' && seen(task))));
    lists.unreachable_tasks.push(
      group(filtered(fw.tasks.values(), (task) => task.state === 'TASK_UNREACHABLE' && seen(task))),
    );
    lists.completed_tasks.push(group(filtered(fw.completedTasks, seen)));
  }
  return lists;
}

/** GET_TASKS: the Response with its `get_tasks`. */
export function snapshotGetTasks(view: ClusterView, viewer: Viewer = SHOW_ALL): OperatorSnapshot {
  return snapshotOf(view, 'GET_TASKS', 'get_tasks', liveTaskLists(view, viewer), []);
}

/** GET_STATE: the Response with its `get_state`, tasks first, then executors, frameworks and agents. */
export function snapshotGetState(view: ClusterView, viewer: Viewer = SHOW_ALL): OperatorSnapshot {
  const lists = liveTaskLists(view, viewer);
  const rest = [
    new Part('get_executors', () => getExecutors(view, viewer), wire('GetExecutors')),
    new Part('get_frameworks', () => getFrameworks(view, viewer), wire('GetFrameworks')),
    agentsPart(view, viewer),
  ];
  return snapshotOf(view, 'GET_STATE', 'get_state', lists, rest);
}

/** GET_AGENTS: the Response with its `get_agents`, each agent written straight to bytes for protobuf. */
export function snapshotGetAgents(view: ClusterView, viewer: Viewer = SHOW_ALL): OperatorSnapshot {
  const agents = agentsPart(view, viewer);
  const cancel = view.beforeChange(() => void agents.value);
  return {
    *json() {
      try {
        yield `{"type":"GET_AGENTS","get_agents":${agents.json()}}`;
      } finally {
        cancel();
      }
    },
    *proto() {
      try {
        const bytes = agents.proto();
        yield encodeProto(RESPONSE, { type: 'GET_AGENTS' });
        yield fieldHead(fieldNumber(RESPONSE, 'get_agents'), bytes.length);
        yield bytes;
      } finally {
        cancel();
      }
    },
  };
}

function agentsPart(view: ClusterView, viewer: Viewer): Part<AgentsAsOf> {
  return new Part('get_agents', () => agentsAsOf(view), {
    json: (asOf) => agentsJson(view, asOf, viewer),
    proto: (asOf) => agentsProto(view, asOf, viewer),
  });
}

interface PartCodec<T> {
  json(value: T): string;
  proto(value: T): Uint8Array;
}

/** A message of `Response.<type>` through the generic encoders. */
function wire(type: string): PartCodec<object> {
  return {
    json: (value) => encodeJson(`${RESPONSE}.${type}`, value),
    proto: (value) => encodeProto(`${RESPONSE}.${type}`, value),
  };
}

/** GetAgents as JSON: each agent straight to text (agent-writer.ts), the recovered ones through the generic encoder. */
function agentsJson(view: ClusterView, asOf: AgentsAsOf, viewer: Viewer): string {
  const parts: string[] = [];
  if (asOf.agents.length > 0)
    parts.push(`"agents":[${asOf.agents.map((a) => agentWireJson(view, a, viewer)).join(',')}]`);
  if (asOf.recovered.length > 0) {
    const recovered = asOf.recovered.map((info) => encodeJson('mesos.v1.AgentInfo', info));
    parts.push(`"recovered_agents":[${recovered.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

/** GetAgents as bytes: each agent straight to bytes (agent-writer.ts), the recovered ones through the generic encoder. */
function agentsProto(view: ClusterView, asOf: AgentsAsOf, viewer: Viewer): Uint8Array {
  const out = new ProtoWriter(asOf.agents.length * 512 + 1024);
  const agentsField = fieldNumber(`${RESPONSE}.GetAgents`, 'agents');
  for (const agent of asOf.agents) writeAgentProto(out, agentsField, view, agent, viewer);
  const recoveredField = fieldNumber(`${RESPONSE}.GetAgents`, 'recovered_agents');
  for (const info of asOf.recovered) out.bytes(recoveredField, encodeProto('mesos.v1.AgentInfo', info));
  return out.take(true);
}

/** A field of GetState after its tasks, read when written or when the cluster is about to change. */
interface RestPart {
  readonly field: string;
  /** Reads it (once). */
  readonly value: unknown;
  json(): string;
  proto(): Uint8Array;
}

class Part<T> implements RestPart {
  #value: T | undefined;

  constructor(
    readonly field: string,
    private readonly read: () => T,
    private readonly codec: PartCodec<T>,
  ) {}

  get value(): T {
    this.#value ??= this.read();
    return this.#value;
  }

  json(): string {
    return this.codec.json(this.value);
  }

  proto(): Uint8Array {
    return this.codec.proto(this.value);
  }
}

function snapshotOf(
  view: ClusterView,
  type: 'GET_STATE' | 'GET_TASKS',
  field: 'get_state' | 'get_tasks',
  lists: TaskLists,
  rest: readonly RestPart[],
): OperatorSnapshot {
  const nested = field === 'get_state';
  const cancel = view.beforeChange(() => {
    for (const name of LIST_FIELDS) for (const group of lists[name]) group.tasks.freeze();
    for (const part of rest) void part.value;
  });
  return {
    *json(pieceBytes = CHUNK_BYTES) {
      try {
        yield `{"type":"${type}","${field}":{`;
        if (nested) yield '"get_tasks":{';
        yield* tasksJson(lists, pieceBytes);
        if (nested) yield '}';
        for (const part of rest) yield `,"${part.field}":${part.json()}`;
        yield '}}';
      } finally {
        cancel();
      }
    },
    *proto() {
      try {
        const taken = new TasksAsOf();
        const measured = yield* measureTasks(lists, taken);
        const getTasks = measured.reduce((sum, list) => sum + list.bytes, 0);
        const parts = rest.map((part): [number, Uint8Array] => [
          fieldNumber(`${RESPONSE}.GetState`, part.field),
          part.proto(),
        ]);
        // What is left to write is in `taken` and `parts`, as of the snapshot whatever the cluster does next.
        cancel();
        const tasksField = fieldNumber(`${RESPONSE}.GetState`, 'get_tasks');
        const inner =
          (nested ? fieldLength(tasksField, getTasks) : getTasks) +
          parts.reduce((sum, [number, bytes]) => sum + fieldLength(number, bytes.length), 0);
        yield encodeProto(RESPONSE, { type });
        yield fieldHead(fieldNumber(RESPONSE, field), inner);
        if (nested) yield fieldHead(tasksField, getTasks);
        yield* writeTasks(taken, measured, getTasks);
        for (const [number, bytes] of parts) yield* [fieldHead(number, bytes.length), bytes];
      } finally {
        cancel();
      }
    },
  };
}

/** The three lists in field order, each left out when empty, as the JSON encoder writes them. */
function* tasksJson(lists: TaskLists, pieceBytes: number): Generator<OperatorPiece, void, undefined> {
  let first = true;
  const out = new TextChunks(pieceBytes);
  for (const name of LIST_FIELDS) {
    let n = 0;
    for (const { user, tasks } of lists[name]) {
      for (let task = tasks.next(); task !== undefined; task = tasks.next()) {
        if (n++ > 0) out.add(',');
        else {
          out.add(`${first ? '' : ','}"${name}":[`);
          first = false;
        }
        out.add(taskWireJson(task, user));
        if (out.size >= pieceBytes) yield out.take();
      }
    }
    if (n > 0) out.add(']');
  }
  yield out.take();
}

/** A list of GetTasks as measured: its field, the index past its last task among those taken, its entries' bytes. */
interface MeasuredList {
  readonly number: number;
  readonly end: number;
  readonly bytes: number;
}

/**
 * Protobuf puts a message's length before it: the tasks are first read
 * (into `into`, as of the snapshot) and measured without being written,
 * pausing every `TASKS_PER_TURN` tasks, so that the response's lengths
 * are known before its first byte and no task's bytes wait in memory
 * for the last one to be encoded.
 */
function* measureTasks(lists: TaskLists, into: TasksAsOf): Generator<OperatorPiece, MeasuredList[], undefined> {
  const measured: MeasuredList[] = [];
  for (const name of LIST_FIELDS) {
    const number = fieldNumber(`${RESPONSE}.GetTasks`, name);
    const tag = varintLength((number << 3) | 2);
    let bytes = 0;
    for (const { user, tasks } of lists[name]) {
      for (let task = tasks.next(); task !== undefined; task = tasks.next()) {
        into.add(task, user);
        const length = taskProtoLength(task, user);
        bytes += tag + varintLength(length) + length;
        if (into.length % TASKS_PER_TURN === 0) yield PAUSE;
      }
    }
    measured.push({ number, end: into.length, bytes });
  }
  return measured;
}

/** The entries of GetTasks measured by `measureTasks`, in chunks of about `CHUNK_BYTES`. */
function* writeTasks(taken: TasksAsOf, lists: readonly MeasuredList[], measured: number): Generator<Uint8Array> {
  const out = new ProtoWriter(CHUNK_BYTES + 4096);
  let written = 0;
  let i = 0;
  for (const { number, end } of lists) {
    for (; i < end; i++) {
      writeTaskProto(out, number, taken.at(i), taken.userAt(i));
      if (out.pos >= CHUNK_BYTES) {
        written += out.pos;
        yield out.take();
      }
    }
  }
  written += out.pos;
  // Lengths already sent that do not match would make the rest unreadable: better cut the response.
  if (written !== measured) throw new Error(`GetTasks: ${written} bytes written, ${measured} measured`);
  if (out.pos > 0) yield out.take(true);
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
