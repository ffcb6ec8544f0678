/**
 * The end of a search that found a failing schedule: the schedule shrunk
 * by fast-check, written out as a scenario file that `clustersim run`
 * replays, its HTML report beside it (the page `clustersim run --report`
 * writes), and the lines that say so.
 */
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scenarioWithSchedule, type ChaosOutcome } from '../scenario/chaos.js';
import { outcomeOf } from '../scenario/chaos-record.js';
import { htmlReport } from '../scenario/html-report.js';
import { loadScenario } from '../scenario/load.js';
import { TimelineRecorder } from '../scenario/report-timeline.js';
import { RunError } from '../scenario/runner.js';
import type { Scenario, TimelineEntry } from '../scenario/scenario.js';
import { runLoadedScenario } from '../start/scenario.js';

/** The lines that tell what was found, and whether a scenario was written to `out`. */
export function shrinkAndWrite(
  scenario: Scenario,
  seed: number,
  scheduleNumber: number,
  outcome: ChaosOutcome,
  out: string,
): { readonly lines: string[]; readonly written: boolean } {
  const found = `(schedule ${scheduleNumber} of seed ${seed}, shrunk in ${outcome.runs} runs)`;
  const writeOut = (schedule: readonly TimelineEntry[], lines: readonly string[]) => {
    writeFileSync(out, scenarioWithSchedule(scenario, schedule, seed, path.dirname(out)));
    return { lines: [...lines, `written to ${out}`, `replay: clustersim run ${out}`], written: true };
  };
  if (outcome.stopped !== undefined) {
    const { schedule, reason } = outcome.stopped;
    return writeOut(schedule, [
      `${scenario.file}: a schedule of ${schedule.length} fault entries stops the run ${found}: ${reason}`,
    ]);
  }
  if (outcome.failure === undefined)
    return {
      lines: [`${scenario.file}: schedule ${scheduleNumber} of seed ${seed} passed when run again: nothing to shrink`],
      written: false,
    };
  const { schedule, result } = outcome.failure;
  return writeOut(schedule, [
    `${scenario.file}: a schedule of ${schedule.length} fault entries makes it fail ${found}:`,
    ...(outcomeOf(result).failed ?? []).map((line) => `  ${line}`),
  ]);
}

/** Where the report of a scenario written to `out` goes: beside it, `.html` for its `.yaml`. */
export function reportPathOf(out: string): string {
  return `${out.replace(/\.ya?ml$/, '')}.html`;
}

/**
 * Runs the scenario written to `out` as `clustersim run --report` does and
 * writes its page beside it: the path, or why there is none (a run that
 * stops has no result to show; an `out` that is no file, `/dev/null`,
 * has nowhere beside it).
 */
export async function reportBeside(out: string): Promise<{ readonly path?: string; readonly lines: string[] }> {
  if (!statSync(out).isFile()) return { lines: [] };
  const path = reportPathOf(out);
  const recorder = new TimelineRecorder();
  try {
    const result = await runLoadedScenario(loadScenario(out), { traceSink: recorder.add });
    writeFileSync(path, htmlReport(result, recorder.timeline()));
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    return { lines: [`no report: ${out} stops when run (${error.reason})`] };
  }
  return { path, lines: [`report: ${path}`] };
}
