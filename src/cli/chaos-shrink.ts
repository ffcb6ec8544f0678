/**
 * The end of a search that found a failing schedule: the schedule shrunk
 * by fast-check, written out as a scenario file that `clustersim run`
 * replays, and the lines that say so.
 */
import { writeFileSync } from 'node:fs';
import { scenarioWithSchedule, type ChaosOutcome } from '../scenario/chaos.js';
import { outcomeOf } from '../scenario/chaos-record.js';
import type { Scenario, TimelineEntry } from '../scenario/scenario.js';

export function shrinkAndWrite(
  scenario: Scenario,
  seed: number,
  scheduleNumber: number,
  outcome: ChaosOutcome,
  out: string,
): string[] {
  const found = `(schedule ${scheduleNumber} of seed ${seed}, shrunk in ${outcome.runs} runs)`;
  const writeOut = (schedule: readonly TimelineEntry[], lines: readonly string[]): string[] => {
    writeFileSync(out, scenarioWithSchedule(scenario, schedule, seed));
    return [...lines, `written to ${out}`, `replay: clustersim run ${out}`];
  };
  if (outcome.stopped !== undefined) {
    const { schedule, reason } = outcome.stopped;
    return writeOut(schedule, [
      `${scenario.file}: a schedule of ${schedule.length} fault entries stops the run ${found}: ${reason}`,
    ]);
  }
  if (outcome.failure === undefined)
    return [`${scenario.file}: schedule ${scheduleNumber} of seed ${seed} passed when run again: nothing to shrink`];
  const { schedule, result } = outcome.failure;
  return writeOut(schedule, [
    `${scenario.file}: a schedule of ${schedule.length} fault entries makes it fail ${found}:`,
    ...(outcomeOf(result).failed ?? []).map((line) => `  ${line}`),
  ]);
}
