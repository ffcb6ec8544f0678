/**
 * The option table (src/start/option-table.ts) is the one place an option
 * of a cluster's start is written: its flag, environment variable, default
 * and check. docs/cli.md holds the table made from it; `clustersim up`'s
 * flags and `startCluster()`'s checks are made from it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flagOf } from '../../src/cli/option-flags.js';
import { OPTION_RULES } from '../../src/start/options.js';
import { FLAG_ROWS, OPTION_TABLE } from '../../src/start/option-table.js';
import { DOCS_FILE, documentedTable, envOf, optionTable } from './option-docs.js';

describe('the option table', () => {
  it('is what docs/cli.md shows between its markers (npm run gen:docs writes it)', () => {
    expect(documentedTable(readFileSync(DOCS_FILE, 'utf8')), 'docs/cli.md is out of date: run npm run gen:docs').toBe(
      optionTable(),
    );
  });

  it('names each option and each flag once', () => {
    const names = OPTION_TABLE.map((row) => row.name);
    const flags = FLAG_ROWS.map((row) => row.flag);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(flags).size).toBe(flags.length);
    expect(Object.keys(OPTION_RULES)).toEqual(names);
  });

  it('spells each flag as the option without its unit, in kebab case', () => {
    for (const row of FLAG_ROWS) {
      const kebab = row.name.replace(/(Seconds|MiB|Ms)$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      expect(row.flag, row.name).toBe(kebab);
      expect(flagOf(row.name)).toBe(`--${row.flag}`);
    }
    expect(envOf('executor-shutdown-grace-period')).toBe('CLUSTERSIM_EXECUTOR_SHUTDOWN_GRACE_PERIOD');
  });

  it('gives a library option no flag when a command line could not give its value', () => {
    const libraryOnly = OPTION_TABLE.filter((row) => !('flag' in row)).map((row) => row.name);
    expect(libraryOnly).toEqual([
      'advertisePorts',
      'agentGroups',
      'recordInputs',
      'traceWindow',
      'logger',
      'onFailure',
      'streamKeepaliveMs',
    ]);
    for (const name of libraryOnly) expect(flagOf(name), name).toBeUndefined();
  });
});
