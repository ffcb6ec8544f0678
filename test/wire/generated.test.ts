import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchemaSources } from '../../src/wire/codegen/generate.js';

describe('src/wire/generated/', () => {
  const generated = generateSchemaSources();
  it.each(
    Object.keys(generated) as (keyof typeof generated)[],
  )('%s matches the .proto files (run `npm run gen:wire` after editing them)', (name) => {
    const committed = readFileSync(new URL(`../../src/wire/generated/${name}`, import.meta.url), 'utf8');
    expect(committed === generated[name]).toBe(true);
  });
});
