/** The shipped scenario files, by name (`steady-state.yaml`), sorted; run as `scenarios/<name>` from the project's root, as `clustersim run` is. */
import { readdirSync } from 'node:fs';
import { loadScenario } from '../../src/scenario/load.js';

export const SCENARIO_DIR = 'scenarios';

const ALL: readonly string[] = readdirSync(SCENARIO_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

const inRealTime = (file: string): boolean => loadScenario(`${SCENARIO_DIR}/${file}`).time === 'realtime';

/**
 * The shipped scenarios in virtual time: each replays from its seed, so the
 * golden traces, the runs twice and the runs with other seeds hold them.
 */
export const SHIPPED_SCENARIOS: readonly string[] = ALL.filter((f) => !inRealTime(f));

/**
 * The shipped scenarios in real time (an external framework): their traces
 * depend on the wall clock and the process, so they have no golden trace;
 * test/scenario/external.test.ts runs each once and requires it to pass.
 */
export const REALTIME_SCENARIOS: readonly string[] = ALL.filter(inRealTime);
