/**
 * `clustersim up` with a flag and no value: every flag but a boolean is a
 * usage error, one line and exit code 2, and no cluster starts. Every
 * flag the command declares is tried in the parser; a few as the command,
 * and a flag of each other command that reads files or a master.
 */
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { upOptions } from '../../src/cli/up.js';
import { runCli } from '../e2e/cli-process.js';

/** The flags `up` declares (aliases and yargs' own aside), and which of them are booleans. */
function upFlags(): { readonly all: string[]; readonly booleans: Set<string> } {
  let options: { key: Record<string, unknown>; boolean: string[] } | undefined;
  yargs([])
    .command('up', '', (y) => {
      const built = upOptions(y);
      // yargs keeps the declared options; its types do not name the reader.
      options = (built as unknown as { getOptions(): typeof options }).getOptions();
      return built;
    })
    .parseSync(['up']);
  // Each flag once, as it is written (yargs keys its camel-case aliases too), without yargs' own.
  const all = Object.keys(options!.key).filter((k) => k === k.toLowerCase() && !['help', 'version'].includes(k));
  return { all, booleans: new Set(options!.boolean) };
}

/** What the parser says of `up --flag` with nothing after it: the failure message, or that the command ran. */
function parsedAlone(flag: string): string {
  let said = 'the command ran';
  yargs(['up', `--${flag}`])
    .command('up', '', upOptions, () => {})
    .strict()
    .exitProcess(false)
    .fail((message) => {
      said = message;
    })
    .parseSync();
  return said;
}

describe('clustersim up with a flag and no value', () => {
  const { all, booleans } = upFlags();
  const valued = all.filter((flag) => !booleans.has(flag));

  it('declares flags of both kinds', () => {
    expect(valued).toEqual(expect.arrayContaining(['time', 'host', 'seed', 'with', 'agents', 'log-format', 'port']));
    expect(booleans.size).toBeGreaterThan(0);
  });

  it.each(valued)('refuses --%s alone as needing a value', (flag) => {
    expect(parsedAlone(flag)).toBe(`Not enough arguments following: ${flag}`);
  });

  it.each(['time', 'host', 'seed', 'with'])('clustersim up --%s: one line, exit code 2, no cluster', async (flag) => {
    const { code, stdout, stderr } = await runCli(['up', `--${flag}`, '--port', '0']).output;
    expect([code, stderr, stdout]).toEqual([2, `clustersim up: --${flag} needs a value\n`, '']);
  }, 30_000);
});

describe('the other commands with a flag and no value', () => {
  it.each([
    ['run', 'scenarios/steady-state.yaml', '--seed'],
    ['check-determinism', 'scenarios/steady-state.yaml', '--seed'],
    ['chaos', 'scenarios/steady-state.yaml', '--out'],
    ['task', 'list', '--master'],
  ])(
    'clustersim %s %s %s: one line, exit code 2',
    async (command, operand, flag) => {
      const { code, stderr } = await runCli([command, operand, flag]).output;
      const name = command === 'task' ? 'task list' : command;
      expect([code, stderr]).toEqual([2, `clustersim ${name}: ${flag} needs a value\n`]);
    },
    30_000,
  );
});
