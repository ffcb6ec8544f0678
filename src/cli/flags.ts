/**
 * How every command checks its flags and reports a mistake: one line on
 * stderr naming the command, the flag, the value and what is allowed, exit
 * code 2, no help (`--help` shows it). The option builders here give each
 * flag a coerce function that checks its value as yargs parses it; the
 * failure handler turns yargs' own complaints (unknown flags and commands,
 * choices, missing values) into the same one-line form.
 */
import type { Argv, Options } from 'yargs';
import { nearest } from '../runtime/spelling.js';
import type { NumberRule } from '../start/number-rules.js';

// The kinds of numbers live with the options they bound (start/number-rules.ts); the commands take them from here.
export { COUNT, COUNT_OR_ZERO, MIB, PORT, SECONDS, SECONDS_OR_ZERO, type NumberRule } from '../start/number-rules.js';

/** A mistake on the command line: the line to print, without the command's prefix. */
export class UsageError extends Error {}

/** Exit code of a usage error (and of any refused start of `clustersim up`). */
export const USAGE_EXIT_CODE = 2;

/** A value as the user typed it (strings quoted), for a message. */
export function shown(raw: unknown): string {
  return typeof raw === 'string' ? JSON.stringify(raw) : String(raw);
}

/** One value: a flag given twice is a mistake, not a list. */
function single(flag: string, raw: unknown): unknown {
  if (Array.isArray(raw))
    throw new UsageError(`--${flag}: given ${raw.length} times (${raw.map(shown).join(', ')}); give it once`);
  return raw;
}

/** The number a value spells, or undefined. */
function numberOf(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

/** The checked number of `--flag`, or a UsageError naming it, the value and what is allowed. */
export function checkNumber(flag: string, raw: unknown, rule: NumberRule): number {
  const value = single(flag, raw);
  const n = numberOf(value);
  const unit = rule.unit === undefined ? '' : ` ${rule.unit}`;
  const noun =
    rule.noun ??
    (rule.whole === true ? 'a whole number' : `a number${rule.unit === undefined ? '' : ` of ${rule.unit}`}`);
  const outside =
    n !== undefined &&
    rule.noun !== undefined &&
    ((rule.min !== undefined && n < rule.min) || (rule.max !== undefined && n > rule.max));
  if (n === undefined || (rule.whole === true && !Number.isInteger(n)) || outside)
    throw new UsageError(`--${flag}: ${shown(value)} is not ${noun}`);
  if (rule.min !== undefined && n < rule.min)
    throw new UsageError(`--${flag}: ${n} is not allowed: at least ${rule.min}${unit}`);
  if (rule.above !== undefined && n <= rule.above)
    throw new UsageError(`--${flag}: ${n} is not allowed: more than ${rule.above}${unit}`);
  if (rule.max !== undefined && n > rule.max)
    throw new UsageError(`--${flag}: ${n} is not allowed: at most ${rule.max}${unit}`);
  return n;
}

/**
 * A number flag: checked as it is parsed (the raw text is kept for the
 * message, so no yargs `type`), with a value required after it.
 */
export function numberFlag(flag: string, rule: NumberRule, options: Omit<Options, 'coerce' | 'type'>): Options {
  const describe = options.describe === undefined ? undefined : `${options.describe} [number]`;
  return {
    ...options,
    ...(describe === undefined ? {} : { describe }),
    requiresArg: true,
    coerce: (raw: unknown) => checkNumber(flag, raw, rule),
  };
}

/** A text flag whose value `check` accepts (it returns the reason when not), given once. */
export function textFlag(
  flag: string,
  check: (text: string) => string | undefined,
  options: Omit<Options, 'coerce' | 'type'>,
): Options {
  return {
    ...options,
    type: 'string',
    requiresArg: true,
    coerce: (raw: unknown) => {
      const text = String(single(flag, raw));
      const problem = check(text);
      if (problem !== undefined) throw new UsageError(`--${flag}: ${problem}`);
      return text;
    },
  };
}

/** A choice flag; yargs checks the choice and the failure handler words it. */
export function choiceFlag<C extends string>(
  choices: readonly C[],
  options: Omit<Options, 'choices' | 'type'>,
): Options {
  return { ...options, choices, requiresArg: true };
}

/** The commands, each with its subcommands, so that an unknown word can be told from an unknown flag. */
export interface CommandTree {
  readonly [command: string]: CommandTree;
}

/** The commands named on the command line, as far as the tree knows them (`orch list`). */
export function commandPath(argv: readonly string[], tree: CommandTree): { path: string[]; rest: CommandTree } {
  const path: string[] = [];
  let rest = tree;
  for (const word of argv) {
    if (word === '--') break;
    if (word.startsWith('-') || !Object.hasOwn(rest, word)) continue;
    path.push(word);
    rest = rest[word]!;
  }
  return { path, rest };
}

/** How `name` was typed as a flag (`--name`, `--no-name`, `-n`; without `=value`), if it was. */
function typedAsFlag(name: string, argv: readonly string[]): string | undefined {
  const forms = [`--${name}`, `--no-${name}`, `-${name}`];
  return argv.map((word) => word.split('=')[0]!).find((word) => forms.includes(word));
}

/** The names yargs reports (`agent-resorces, agentResorces`): each once, as typed. */
function reportedNames(list: string): string[] {
  const names = list
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const camel = (n: string) => n.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  return names.filter((n) => !names.some((other) => other !== n && other.includes('-') && camel(other) === n));
}

function unknownWords(list: string, argv: readonly string[], knownFlags: readonly string[], rest: CommandTree): string {
  const names = reportedNames(list);
  const flags = names.filter((n) => typedAsFlag(n, argv) !== undefined);
  if (flags.length > 0) {
    const guess = flags.length === 1 ? nearest(flags[0]!, knownFlags) : undefined;
    const typed = flags.map((n) => typedAsFlag(n, argv)!);
    return `unknown flag${flags.length === 1 ? '' : 's'} ${typed.join(', ')}${guess === undefined ? '' : ` (did you mean --${guess}?)`}; see --help`;
  }
  const word = names[0] ?? list;
  const commands = Object.keys(rest);
  if (commands.length === 0) return `unexpected argument ${shown(word)}`;
  const guess = nearest(word, commands);
  return `unknown command ${shown(word)}${guess === undefined ? '' : ` (did you mean ${guess}?)`}; commands: ${commands.join(', ')}`;
}

/** One line for what yargs complains of, in the form of the flag checks' lines. */
export function usageLine(
  message: string,
  argv: readonly string[],
  knownFlags: readonly string[],
  rest: CommandTree,
): string {
  const unknown = /^Unknown arguments?: (.*)$/s.exec(message);
  if (unknown !== null) return unknownWords(unknown[1]!, argv, knownFlags, rest);
  const choice = /Argument: (\S+), Given: (.*), Choices: (.*)$/m.exec(message);
  if (choice !== null) {
    const allowed = choice[3]!.split(', ').map((c) => c.replace(/^"(.*)"$/, '$1'));
    return `--${choice[1]}: ${choice[2]} is not one of ${allowed.join(', ')}`;
  }
  const few = /^Not enough non-option arguments: got (\d+), need at least (\d+)$/.exec(message);
  if (few !== null) return `needs ${few[2]} argument${few[2] === '1' ? '' : 's'}, got ${few[1]}; see --help`;
  const noValue = /^Not enough arguments following: (\S+)$/.exec(message);
  if (noValue !== null) return `--${noValue[1]} needs a value`;
  const missing = /^Missing required arguments?: (.*)$/.exec(message);
  if (missing !== null)
    return `${missing[1]!
      .split(', ')
      .map((n) => `--${n}`)
      .join(', ')} ${missing[1]!.includes(',') ? 'are' : 'is'} required`;
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
}

/**
 * Every complaint of yargs and of the flag checks becomes a UsageError
 * holding the whole line (`clustersim up: --port: "abc" is not a port
 * (0-65535)`), thrown out of the parse; `--help` and `--version` are
 * untouched.
 */
export function failOnUsage<T>(y: Argv<T>, tree: CommandTree, argv: readonly string[]): Argv<T> {
  return y.showHelpOnFail(false).fail((message, error, usage) => {
    const { path, rest } = commandPath(argv, tree);
    // The third argument is yargs' usage of the command that failed: its flags are the ones to suggest.
    const described =
      (usage as unknown as { getDescriptions?: () => Record<string, unknown> }).getDescriptions?.() ?? {};
    const line = usageLine(message ?? error?.message ?? 'invalid command line', argv, Object.keys(described), rest);
    throw new UsageError(`${['clustersim', ...path].join(' ')}: ${line}`);
  });
}

/** Runs the parse; a usage error is its one line on stderr and exit code 2. */
export async function parseOrExplain(y: Argv): Promise<void> {
  try {
    await y.parseAsync();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = USAGE_EXIT_CODE;
  }
}
