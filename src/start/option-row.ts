/**
 * What a row of the option table (option-table.ts) says of an option: its
 * names, the kind of value it takes and the limits, its defaults, its
 * place in `--help`.
 */
import type { StartClusterOptions } from './cluster-options.js';
import type { NumberRule } from './number-rules.js';
import type { Rule } from './option-checks.js';

/** The groups of `clustersim up --help` (the other flags are under `Options:`), in the order they are shown. */
export const OPTION_GROUPS = {
  masters: 'Masters (docs/masters.md):',
  agents: 'Agents (docs/agent-api.md):',
  run: 'Time, allocation and logs (docs/determinism.md):',
  auth: 'Authentication and authorization (docs/auth.md):',
  containers: 'Containers (docs/agent-api.md, "Containers and cgroups"):',
  executors: 'Executors (docs/executor-api.md; docs/agent-api.md, "Container engine"):',
  limits: 'Limits (docs/cli.md, "Limits"):',
} as const;
export type OptionGroup = keyof typeof OPTION_GROUPS;

export type OptionName = keyof StartClusterOptions;

interface RowBase<K extends OptionName> {
  readonly name: K;
  /** The flag of `clustersim up`; none for an option of the library alone. */
  readonly flag?: string;
  /** The flag's line in `--help` and the docs. */
  readonly describe?: string;
  readonly group?: OptionGroup;
  /** What `startCluster()` takes when the option is not given. */
  readonly default?: Exclude<StartClusterOptions[K], undefined>;
  /**
   * The core applies `default` itself: `startCluster()` leaves the option
   * out of what it gives the core (whose start record, in the trace, holds
   * only what was given).
   */
  readonly coreDefault?: true;
  /** The flag's default where it is not the library's; null: none (the command decides, as `describe` says). */
  readonly flagDefault?: string | number | null;
  /** The field of a scenario file that sets it, for the file's errors. */
  readonly scenarioField?: string;
}

/**
 * A number within `rule`. The command checks it as it parses the flag;
 * `startCluster()` by the same bounds (option-checks.ts `numberCheck`)
 * unless the row has a `check` of its own.
 */
interface NumberRow<K extends OptionName> extends RowBase<K> {
  readonly kind: 'number';
  readonly rule: NumberRule;
  readonly check?: Rule;
  /** The command leaves the check to `startCluster()` (a plain yargs number). */
  readonly flagUnchecked?: true;
}

/** A string; with `parse`, one it reads (the reason when it cannot), the command's check as it parses the flag. */
interface TextRow<K extends OptionName> extends RowBase<K> {
  readonly kind: 'text';
  readonly parse?: (text: string) => string | undefined;
  /** The library's check: by default a string, and a non-empty one without `parse`. */
  readonly check?: Rule;
}

interface ChoiceRow<K extends OptionName> extends RowBase<K> {
  readonly kind: 'choice';
  readonly choices: readonly string[];
}

interface BooleanRow<K extends OptionName> extends RowBase<K> {
  readonly kind: 'boolean';
}

/** An option of the library alone that no flag could give: an object, a function. */
interface ValueRow<K extends OptionName> extends RowBase<K> {
  readonly kind: 'value';
  readonly check: Rule;
}

type RowOf<K extends OptionName> = NumberRow<K> | TextRow<K> | ChoiceRow<K> | BooleanRow<K> | ValueRow<K>;
export type OptionRow = { [K in OptionName]: RowOf<K> }[OptionName];
