/**
 * Frameworks and agents at one instant, as the operator API shows them: the
 * read calls render them from the read model, and the operator events carry
 * them, taken when the event happens (the records keep changing after).
 * Each costs what one framework or one agent holds, never a walk.
 */
import type { AgentSnapshot, FrameworkSnapshot } from '../model/operator-types.js';
import type { AgentRecord } from './agents.js';
import type { Framework } from './framework.js';
import type { Task } from '../model/records.js';
import type { Ledger } from './ledger.js';

/** What a snapshot reads of a framework: the master's record, as the read model hands it out. */
export type FrameworkRecord = Pick<
  Framework,
  | 'id'
  | 'info'
  | 'state'
  | 'registeredTimeMs'
  | 'reregisteredTimeMs'
  | 'unregisteredTimeMs'
  | 'offers'
  | 'constraints'
  | 'recovered'
>;

export function frameworkSnapshot(fw: FrameworkRecord, ledger: Ledger): FrameworkSnapshot {
  const books = ledger.framework(fw.id);
  return {
    info: fw.info,
    state: fw.state,
    recovered: fw.recovered,
    registeredTimeMs: fw.registeredTimeMs,
    reregisteredTimeMs: fw.reregisteredTimeMs,
    unregisteredTimeMs: fw.unregisteredTimeMs,
    offers: [...fw.offers.values()],
    allocated: books.used,
    offered: books.offered,
    constraints: fw.constraints,
  };
}

export function agentSnapshot(record: AgentRecord, ledger: Ledger): AgentSnapshot {
  const books = ledger.agent(record.id);
  return {
    id: record.id,
    info: record.info,
    pid: record.pid,
    active: record.offerable,
    deactivated: record.deactivated,
    registeredTimeMs: record.registeredTimeMs,
    reregisteredTimeMs: record.reregisteredTimeMs,
    allocated: books.used,
    offered: books.offered,
    drain: record.drain,
    drainStartTimeMs: record.drainStartTimeMs,
  };
}

/** A task as it is now; its status list goes on growing in the record. */
export function taskSnapshot(task: Task): Task {
  return { ...task, statuses: [...task.statuses] };
}
