import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchemaSource } from '../../src/wire/codegen/generate.js';

describe('src/wire/generated/schema.ts', () => {
  it('matches the .proto files (run `npm run gen:wire` after editing them)', () => {
    const committed = readFileSync(
      new URL('../../src/wire/generated/schema.ts', import.meta.url),
      'utf8',
    );
    expect(committed === generateSchemaSource()).toBe(true);
  });
});
