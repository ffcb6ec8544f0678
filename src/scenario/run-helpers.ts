/** Small parts of a run: what the file watches, and waiting on the cluster (wall clock, bounded). */
import type { TraceWatched } from '../core/conditions.js';
import { traceWatched } from '../core/conditions.js';
import { formatSpan } from './duration.js';
import type { Condition, Expectation, Scenario } from './scenario.js';

/** How long (wall clock) the runner waits for an answer of the cluster before it calls the run broken. */
const SYNC_TIMEOUT_MS = 10_000;

/** The trace kinds the file's conditions count. */
export function watchedKinds(scenario: Scenario): TraceWatched[] {
  const conditions = [
    ...scenario.timeline.flatMap((e) => (e.when === undefined ? [] : [e.when])),
    ...scenario.expect.filter(isCondition),
  ];
  return conditions.flatMap(traceWatched);
}

export function isCondition(e: Expectation): e is Expectation & Condition {
  return 'tasks' in e || 'agents' in e || 'frameworks' in e || 'trace' in e || 'all' in e || 'any' in e;
}

/** The event sequences the file's expectations look for (the arrays themselves: the record finds them by identity). */
export function expectedSequences(scenario: Scenario): (readonly string[])[] {
  return scenario.expect.flatMap((e) => ('events' in e ? [e.events.sequence] : []));
}

/** Polls a test until it holds, turn by turn of the event loop, for at most SYNC_TIMEOUT_MS. */
export async function until(what: string, test: () => boolean): Promise<void> {
  const deadline = performance.now() + SYNC_TIMEOUT_MS;
  while (!test()) {
    if (performance.now() > deadline)
      throw new Error(`scenario runner: waited ${formatSpan(SYNC_TIMEOUT_MS)} of wall time for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
