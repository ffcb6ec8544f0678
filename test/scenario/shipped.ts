/** The shipped scenario files, by name (`steady-state.yaml`), sorted; run as `scenarios/<name>` from the project's root, as `clustersim run` is. */
import { readdirSync } from 'node:fs';

export const SCENARIO_DIR = 'scenarios';

export const SHIPPED_SCENARIOS: readonly string[] = readdirSync(SCENARIO_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
