/** Writes scenarios/scenario.schema.json from src/scenario/schema.ts (`npm run gen:schema`). */
import { writeFileSync } from 'node:fs';
import { SCENARIO_SCHEMA } from '../../src/scenario/schema.js';

export const SCHEMA_FILE = new URL('../../scenarios/scenario.schema.json', import.meta.url);

export function schemaText(): string {
  return `${JSON.stringify(SCENARIO_SCHEMA, null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  writeFileSync(SCHEMA_FILE, schemaText());
  process.stdout.write(`wrote ${SCHEMA_FILE.pathname}\n`);
}
