/**
 * Where the scenario files this package ships are, wherever it is
 * installed: `runScenarioFile(path.join(shippedScenariosDir,
 * 'agent-lost.yaml'))` runs one from a user's project, and an editor finds
 * the files' schema at `scenarioSchemaPath`. Both sit two floors above this
 * module in the sources (`src/scenario/`) and in the build (`dist/scenario/`).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory of the shipped scenarios (`scenarios/` of the package), absolute. */
export const shippedScenariosDir: string = fileURLToPath(new URL('../../scenarios/', import.meta.url));

/** The JSON Schema of scenario files (`scenarios/scenario.schema.json` of the package), absolute. */
export const scenarioSchemaPath: string = path.join(shippedScenariosDir, 'scenario.schema.json');
