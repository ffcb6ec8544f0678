/**
 * The kinds of numbers the options take: the bounds a value must keep and
 * the words a message uses for them. `clustersim up` checks its flags by
 * them (cli/flags.ts), and `startCluster()` its options (option-checks.ts).
 */
export interface NumberRule {
  /** Whole numbers only. */
  readonly whole?: boolean;
  /** The least value allowed. */
  readonly min?: number;
  /** Values must be above this (not equal). */
  readonly above?: number;
  readonly max?: number;
  /** The unit, for the message: `seconds`, `MiB`. */
  readonly unit?: string;
  /** What a value is, for the message when it is not one: `a port (0-65535)`. */
  readonly noun?: string;
}

/** The rules of the kinds of numbers the commands take. */
export const PORT: NumberRule = { whole: true, min: 0, max: 65535, noun: 'a port (0-65535)' };
export const SECONDS: NumberRule = { above: 0, unit: 'seconds' };
export const SECONDS_OR_ZERO: NumberRule = { min: 0, unit: 'seconds' };
export const COUNT: NumberRule = { whole: true, min: 1 };
export const COUNT_OR_ZERO: NumberRule = { whole: true, min: 0 };
export const MIB: NumberRule = { above: 0, unit: 'MiB' };
