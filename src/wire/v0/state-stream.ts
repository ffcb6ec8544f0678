/**
 * `/state` written as a stream: the same text as
 * `toV0Json(renderState(view, clock, viewer))`, in pieces.
 *
 * `snapshotState` reads the head (the master and its flags) at the moment
 * of the request and nothing else: the agents and the frameworks with their
 * tasks are read as they are written, which is the state of that moment as
 * long as the cluster stands still. The moment before it changes (its next
 * input, `ClusterView.beforeChange`), the snapshot copies what it has not
 * written yet: each agent with its books, each framework apart from its
 * tasks already as text, and the tasks with the few fields the master
 * changes in place (tasks-as-of.ts). So the text is that of the moment of
 * the request, as upstream answers from one state, and its first byte waits
 * for no walk over the whole cluster.
 */
import type { Books } from '../../core/master/ledger.js';
import type { Task } from '../../core/model/records.js';
import type { ClusterView, FrameworkView, AgentView } from '../../core/view.js';
import { filtered, LiveList, reader } from '../live-list.js';
import { liveTasks } from '../tasks-as-of.js';
import { TextChunks } from '../text-chunks.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { frameworkObject } from './frameworks.js';
import { toV0Json } from './json.js';
import { slaveJson } from './slave-json.js';
import { recoveredSlaves } from './slaves.js';
import { stateHead, type StateClock } from './state.js';
import { taskJson } from './task-json.js';

interface AgentAsOf {
  readonly record: AgentView;
  readonly books: Books;
}

/** Where the three lists sit in a framework's text rendered with them empty. */
const EMPTY_LISTS = { tasks: [], unreachable_tasks: [], completed_tasks: [] };
const EMPTY_LISTS_TEXT = '"tasks":[],"unreachable_tasks":[],"completed_tasks":[]';

/** Bytes of text written before a piece is handed on. */
const PIECE_BYTES = 256 * 1024;

export interface StateSnapshot {
  /** The UTF-8 text, piece by piece, of the moment the snapshot was taken; `pieceBytes` about the size of each. */
  pieces(pieceBytes?: number): Generator<Uint8Array, void, undefined>;
}

export function snapshotState(view: ClusterView, now: StateClock = {}, viewer: Viewer = SHOW_ALL): StateSnapshot {
  const head = toV0Json(stateHead(view, now, viewer));
  const version = view.masterInfo.version;
  const recovered = toV0Json(recoveredSlaves(view));
  const agents = new LiveList(liveAgents(view), (rest) => {
    // The master changes an agent's record and books in place: keep them as they are now.
    const copies: AgentAsOf[] = [];
    for (const { record, books } of rest)
      copies.push({ record: agentAsOf(record), books: { offered: books.offered, used: books.used } });
    return reader(copies);
  });
  const seen = (fw: FrameworkView) => viewer.framework(fw.info.user);
  const frameworks = [...view.frameworks()].filter(seen).map((fw) => new FrameworkEntry(view, fw, viewer));
  const completed = view
    .completedFrameworks()
    .filter(seen)
    .map((fw) => new FrameworkEntry(view, fw, viewer));
  const cancel = view.beforeChange(() => {
    agents.freeze();
    for (const entry of [...frameworks, ...completed]) entry.freeze();
  });
  return {
    *pieces(pieceBytes = PIECE_BYTES) {
      try {
        const out = new TextChunks(pieceBytes);
        out.add(`${head.slice(0, -1)},"slaves":[`);
        let first = true;
        for (let agent = agents.next(); agent !== undefined; agent = agents.next()) {
          if (!first) out.add(',');
          out.add(slaveJson(agent.record, agent.books, version, viewer));
          first = false;
          if (out.size >= pieceBytes) yield out.take();
        }
        out.add(`],"recovered_slaves":${recovered},"frameworks":[`);
        for (const [list, end] of [
          [frameworks, '],"completed_frameworks":['],
          [completed, '],"orphan_tasks":[],"unregistered_frameworks":[]}'],
        ] as const) {
          for (let f = 0; f < list.length; f++) {
            const text = list[f]!.open();
            out.add(`${f === 0 ? '' : ','}${text.before}"tasks":[`);
            for (let l = 0; l < text.lists.length; l++) {
              if (l > 0) out.add(l === 1 ? '],"unreachable_tasks":[' : '],"completed_tasks":[');
              const tasks = text.lists[l]!;
              let i = 0;
              for (let task = tasks.next(); task !== undefined; task = tasks.next()) {
                if (i++ > 0) out.add(',');
                out.add(taskJson(task, text.user));
                if (out.size >= pieceBytes) yield out.take();
              }
            }
            out.add(`]${text.after}`);
          }
          out.add(end);
        }
        yield out.take();
      } finally {
        cancel();
      }
    },
  };
}

/** The registered agents with their books, as they are when read. */
function* liveAgents(view: ClusterView): Generator<AgentAsOf, void, undefined> {
  for (const record of view.agents()) yield { record, books: view.agentBooks(record.id) };
}

/** The record's fields as they are now (the master changes some of them in place). */
function agentAsOf(r: AgentView): AgentView {
  return {
    id: r.id,
    info: r.info,
    state: r.state,
    active: r.active,
    pid: r.pid,
    registeredTimeMs: r.registeredTimeMs,
    reregisteredTimeMs: r.reregisteredTimeMs,
  };
}

/** A framework's entry with its three task lists left out: the text before them and after them. */
interface FrameworkText {
  readonly before: string;
  readonly after: string;
  readonly user: string;
  /** Live tasks, unreachable tasks, completed tasks. */
  readonly lists: readonly LiveList<Task>[];
}

/** A framework's entry, made when it is written or when the cluster is about to change, whichever comes first. */
class FrameworkEntry {
  #text: FrameworkText | undefined;

  constructor(
    private readonly view: ClusterView,
    private readonly fw: FrameworkView,
    private readonly viewer: Viewer,
  ) {}

  open(): FrameworkText {
    this.#text ??= this.#make();
    return this.#text;
  }

  freeze(): void {
    for (const list of this.open().lists) list.freeze();
  }

  #make(): FrameworkText {
    const fw = this.fw;
    const viewer = this.viewer;
    const text = toV0Json(frameworkObject(this.view, fw, viewer, EMPTY_LISTS));
    // Keys and strings are escaped, so the lists' text occurs nowhere else in the entry.
    const at = text.indexOf(EMPTY_LISTS_TEXT);
    const { user } = fw.info;
    const seen = (task: Task) => viewer.all || viewer.task(task.spec, user);
    const lists = [
      liveTasks(filtered(fw.tasks.values(), (task) => task.state !== 'TASK_UNREACHABLE' && seen(task))),
      liveTasks(filtered(fw.tasks.values(), (task) => task.state === 'TASK_UNREACHABLE' && seen(task))),
      liveTasks(filtered(fw.completedTasks, seen)),
    ];
    return { before: text.slice(0, at), after: text.slice(at + EMPTY_LISTS_TEXT.length), user, lists };
  }
}
