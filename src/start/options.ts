/**
 * The checks of `startCluster()`'s options, in one place: every key must be
 * a known option, and every value one the option takes. A wrong one stops
 * the start with a StartError that names the library option (`agents`,
 * `agentResources`, never a command-line flag), what it takes and what it
 * was given; `clustersim up` turns the names into its flags. The rules and
 * the defaults come from the option table (option-table.ts).
 */
import { StartError } from './errors.js';
import type { StartClusterOptions } from './cluster-options.js';
import { bool, nonEmpty, numberCheck, oneOf, text, type Rule } from './option-checks.js';
import { OPTION_TABLE, type OptionName, type OptionRow, type TableRow } from './option-table.js';

export type { OptionName };

/** The check of an option's values: its own, or the one its kind of value has. */
function ruleOf(row: OptionRow): Rule {
  switch (row.kind) {
    case 'number':
      return row.check ?? numberCheck(row.rule);
    case 'text':
      return row.check ?? (row.parse === undefined ? nonEmpty : text);
    case 'choice':
      return oneOf(row.choices);
    case 'boolean':
      return bool;
    case 'value':
      return row.check;
  }
}

/** A rule for every option of `StartClusterOptions`, in the table's order. */
export const OPTION_RULES: Readonly<Record<OptionName, Rule>> = Object.fromEntries(
  OPTION_TABLE.map((row) => [row.name, ruleOf(row)]),
) as Record<OptionName, Rule>;

/** Holds the table to a row for each option of `StartClusterOptions` (a row's name can only be one). */
type TableComplete = [Exclude<OptionName, TableRow['name']>] extends [never] ? true : never;
export const OPTION_TABLE_COMPLETE: TableComplete = true;

/** The options `startCluster()` gives a default of its own (not those the core applies). */
type Defaulted = Exclude<Extract<TableRow, { default: unknown }>, { coreDefault: true }>['name'];
export type ResolvedOptions = StartClusterOptions & {
  readonly [K in Defaulted]-?: Exclude<StartClusterOptions[K], undefined>;
};

const DEFAULTS = Object.fromEntries(
  OPTION_TABLE.flatMap((row) => ('default' in row && !('coreDefault' in row) ? [[row.name, row.default]] : [])),
);

/** The options checked, with the table's defaults where one is not given (or given as `undefined`). */
export function resolveStartOptions(options: StartClusterOptions): ResolvedOptions {
  checkStartOptions(options);
  return { ...DEFAULTS, ...definedOnly(options) } as ResolvedOptions;
}

/** The options given a value: an `undefined` must not hide a default. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Throws a StartError for the first option that is not one, or whose
 * value the option does not take; an option set to `undefined` is left
 * out (its default applies).
 */
export function checkStartOptions(options: object): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new StartError(`startCluster() takes an object of options, got ${show(options)}`);
  }
  const rules: Readonly<Record<string, Rule>> = OPTION_RULES;
  for (const [name, value] of Object.entries(options)) {
    const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
    if (rule === undefined) throw new StartError(unknownOption(name), [name]);
    if (value === undefined) continue;
    const reason = rule(value);
    if (reason !== undefined)
      throw new StartError(`${name}${reason.startsWith('[') ? '' : ': '}${reason}, got ${show(value)}`, [name]);
  }
}

/** The reason for an unknown key, with the known option it most looks like. */
function unknownOption(name: string): string {
  const near = Object.keys(OPTION_RULES)
    .map((known) => ({ known, distance: editDistance(name.toLowerCase(), known.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance || a.known.localeCompare(b.known))[0]!;
  const hint =
    near.distance <= Math.max(2, Math.floor(name.length / 3))
      ? `; did you mean '${near.known}'?`
      : `; the options are ${Object.keys(OPTION_RULES).join(', ')}`;
  return `startCluster(): unknown option '${name}'${hint}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return previous[b.length]!;
}

/** A value as a message quotes it. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined)
    return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
