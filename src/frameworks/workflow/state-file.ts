/**
 * The workflow service's state on disk: its framework id, its queue and
 * its tasks, written after every change (to a temporary file, then renamed
 * over the old one, so a crash leaves one whole version). A restarted
 * service reads it back and fails over onto its framework, which the
 * master keeps with its tasks for `failover_timeout` seconds.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SchedulerSnapshot } from './scheduler.js';

const VERSION = 1;

export function writeState(file: string, snapshot: SchedulerSnapshot): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify({ version: VERSION, ...snapshot }));
  renameSync(tmp, file);
}

/** The snapshot a file holds; undefined when there is none yet; an error for one that does not read. */
export function readState(file: string): SchedulerSnapshot | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not a state file of the workflow service: ${(e as Error).message}`);
  }
  const s = parsed as Partial<SchedulerSnapshot> & { version?: unknown };
  if (s.version !== VERSION || !Array.isArray(s.queue) || !Array.isArray(s.runs) || !Array.isArray(s.tasks)) {
    throw new Error(`${file}: not a state file of the workflow service (version ${VERSION})`);
  }
  return s as SchedulerSnapshot;
}
