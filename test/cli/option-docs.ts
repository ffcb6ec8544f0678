/**
 * The option table of docs/cli.md, made from the option table of the
 * start (src/start/option-table.ts) and the flags of `clustersim up`
 * alone: one row per flag with its environment variable, its default and
 * its line of `--help`. `npm run gen:docs` writes it between the markers;
 * test/cli/option-table.test.ts fails when the file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Options } from 'yargs';
import { ENV_PREFIX } from '../../src/cli/env.js';
import { logFormatOption } from '../../src/cli/log-options.js';
import { withFlags } from '../../src/cli/up-with.js';
import { FLAG_ROWS } from '../../src/start/option-table.js';

export const DOCS_FILE = new URL('../../docs/cli.md', import.meta.url);
export const BEGIN = '<!-- options:begin -->';
export const END = '<!-- options:end -->';

/** The environment variable of a flag (cli/env.ts): `--agent-port` is `CLUSTERSIM_AGENT_PORT`. */
export function envOf(flag: string): string {
  return `${ENV_PREFIX}_${flag.toUpperCase().replace(/-/g, '_')}`;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (value: unknown): string =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
    ? ''
    : `\`${String(value)}\``;

function row(flag: string, defaultText: string, describe: string): string {
  return `| \`--${flag}\` | \`${envOf(flag)}\` | ${defaultText} | ${cell(describe)} |`;
}

/** A flag of the command alone, as its yargs option says it (a number flag's `[number]` left out). */
function commandRow(flag: string, options: Options): string {
  const defaultText = options.defaultDescription ?? code(options.default);
  return row(flag, defaultText, String(options.describe).replace(/ \[number\]$/, ''));
}

/** The markdown table, with a line of its own for each flag. */
export function optionTable(): string {
  const rows = FLAG_ROWS.map((r) =>
    row(r.flag, code('flagDefault' in r ? r.flagDefault : 'default' in r ? r.default : undefined), r.describe),
  );
  const own = [['log-format', logFormatOption()] as const, ...Object.entries(withFlags())].map(([flag, options]) =>
    commandRow(flag, options),
  );
  return ['| flag | environment variable | default | meaning |', '|---|---|---|---|', ...rows, ...own].join('\n');
}

/** The block of docs/cli.md between the markers, without them. */
export function documentedTable(text: string): string | undefined {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  return begin === -1 || end < begin ? undefined : text.slice(begin + BEGIN.length, end).trim();
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const text = readFileSync(DOCS_FILE, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`${DOCS_FILE.pathname} has no ${BEGIN} ... ${END} block`);
  writeFileSync(DOCS_FILE, `${text.slice(0, begin + BEGIN.length)}\n${optionTable()}\n${text.slice(end)}`);
  process.stdout.write(`wrote ${DOCS_FILE.pathname}\n`);
}
