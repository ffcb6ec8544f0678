/**
 * `/state` written as a stream: the same text as
 * `toLegacyJson(renderState(view, clock, viewer))`, in pieces.
 *
 * `snapshotState` reads the view once, at the moment of the request, and
 * keeps what the text needs as of then: the master and its flags and every
 * framework apart from its tasks already as text (their count follows the
 * agents and frameworks, not the tasks), each agent with its books, and
 * the tasks as of that moment (tasks-as-of.ts). `pieces()` then writes the
 * text from that snapshot, a piece per agent and per task, however late it
 * is called: the cluster may move on in between, the text is that of the
 * moment of the request, as upstream answers from one state.
 */
import type { Books } from '../../core/master/ledger.js';
import type { ClusterView, FrameworkView, AgentView } from '../../core/view.js';
import { TasksAsOf } from '../tasks-as-of.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { frameworkObject } from './frameworks.js';
import { toLegacyJson } from './legacy-json.js';
import { recoveredSlaves, slaveObjectOf } from './slaves.js';
import { stateHead, type StateClock } from './state.js';
import { taskJson } from './task-json.js';

/** A framework's entry with its three task lists left out: the text before them and after them. */
interface FrameworkAsOf {
  readonly before: string;
  readonly after: string;
  readonly tasks: TasksAsOf;
  readonly unreachable: TasksAsOf;
  readonly completed: TasksAsOf;
}

interface AgentAsOf {
  readonly record: AgentView;
  readonly books: Books;
}

/** Where the three lists sit in a framework's text rendered with them empty. */
const EMPTY_LISTS = { tasks: [], unreachable_tasks: [], completed_tasks: [] };
const EMPTY_LISTS_TEXT = '"tasks":[],"unreachable_tasks":[],"completed_tasks":[]';

export interface StateSnapshot {
  /** The text, piece by piece, from what was read when the snapshot was taken. */
  pieces(): Generator<string, void, undefined>;
}

export function snapshotState(view: ClusterView, now: StateClock = {}, viewer: Viewer = SHOW_ALL): StateSnapshot {
  const head = toLegacyJson(stateHead(view, now, viewer));
  const version = view.masterInfo.version;
  const agents: AgentAsOf[] = [];
  for (const record of view.agents()) {
    // The master changes an agent's books in place: keep their bags as they are now.
    const { offered, used } = view.agentBooks(record.id);
    agents.push({ record: agentAsOf(record), books: { offered, used } });
  }
  const recovered = toLegacyJson(recoveredSlaves(view));
  const seen = (fw: FrameworkView) => viewer.framework(fw.info.user);
  const frameworks = [...view.frameworks()].filter(seen).map((fw) => frameworkAsOf(view, fw, viewer));
  const completed = view.completedFrameworks().filter(seen).map((fw) => frameworkAsOf(view, fw, viewer));
  return {
    *pieces() {
      yield `${head.slice(0, -1)},"slaves":[`;
      for (let i = 0; i < agents.length; i++) {
        const { record, books } = agents[i]!;
        yield (i === 0 ? '' : ',') + toLegacyJson(slaveObjectOf(record, books, version, viewer));
      }
      yield `],"recovered_slaves":${recovered},"frameworks":[`;
      yield* frameworkPieces(frameworks);
      yield '],"completed_frameworks":[';
      yield* frameworkPieces(completed);
      yield '],"orphan_tasks":[],"unregistered_frameworks":[]}';
    },
  };
}

/** The record's fields as they are now (the master changes some of them in place). */
function agentAsOf(r: AgentView): AgentView {
  return { id: r.id, info: r.info, state: r.state, active: r.active, pid: r.pid, registeredTimeMs: r.registeredTimeMs, reregisteredTimeMs: r.reregisteredTimeMs };
}

function frameworkAsOf(view: ClusterView, fw: FrameworkView, viewer: Viewer): FrameworkAsOf {
  const text = toLegacyJson(frameworkObject(view, fw, viewer, EMPTY_LISTS));
  // Keys and strings are escaped, so the lists' text occurs nowhere else in the entry.
  const at = text.indexOf(EMPTY_LISTS_TEXT);
  const { user } = fw.info;
  const tasks = new TasksAsOf();
  const unreachable = new TasksAsOf();
  const completed = new TasksAsOf();
  for (const task of fw.tasks.values()) {
    if (viewer.all || viewer.task(task.spec, user)) (task.state === 'TASK_UNREACHABLE' ? unreachable : tasks).add(task, user);
  }
  for (const task of fw.completedTasks) if (viewer.all || viewer.task(task.spec, user)) completed.add(task, user);
  return { before: text.slice(0, at), after: text.slice(at + EMPTY_LISTS_TEXT.length), tasks, unreachable, completed };
}

function* frameworkPieces(frameworks: readonly FrameworkAsOf[]): Generator<string, void, undefined> {
  for (let f = 0; f < frameworks.length; f++) {
    const fw = frameworks[f]!;
    yield `${f === 0 ? '' : ','}${fw.before}"tasks":[`;
    yield* taskPieces(fw.tasks);
    yield '],"unreachable_tasks":[';
    yield* taskPieces(fw.unreachable);
    yield '],"completed_tasks":[';
    yield* taskPieces(fw.completed);
    yield `]${fw.after}`;
  }
}

function* taskPieces(list: TasksAsOf): Generator<string, void, undefined> {
  for (let i = 0; i < list.length; i++) yield (i === 0 ? '' : ',') + taskJson(list.at(i), list.userAt(i));
}
