/**
 * The checks of `startCluster()`'s option values, each a rule that gives
 * the reason a value is not one the option takes (`must be a whole number
 * of at least 0`) or undefined. The option table (option-table.ts) names
 * the rule of each option; options.ts runs them.
 */
import type { NumberRule } from './number-rules.js';

/** What a value must be, or undefined when it is fine. */
export type Rule = (value: unknown) => string | undefined;

const MAX_PORT = 65_535;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
export const wholeFrom =
  (min: number, max = Number.MAX_SAFE_INTEGER): Rule =>
  (v) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : max === Number.MAX_SAFE_INTEGER
        ? `must be a whole number of at least ${min}`
        : `must be a whole number from ${min} to ${max}`;
const positive: Rule = (v) => (isNumber(v) && v > 0 ? undefined : 'must be a positive number');
const notNegative: Rule = (v) => (isNumber(v) && v >= 0 ? undefined : 'must be a number of at least 0');
export const finite: Rule = (v) => (isNumber(v) ? undefined : 'must be a finite number');
export const oneOf =
  (values: readonly string[]): Rule =>
  (v) =>
    typeof v === 'string' && values.includes(v) ? undefined : `must be one of ${values.join(', ')}`;
export const bool: Rule = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
export const text: Rule = (v) => (typeof v === 'string' ? undefined : 'must be a string');
export const nonEmpty: Rule = (v) => (typeof v === 'string' && v !== '' ? undefined : 'must be a non-empty string');
export const func: Rule = (v) => (typeof v === 'function' ? undefined : 'must be a function');
const port = wholeFrom(0, MAX_PORT);
export const seed: Rule = (v) =>
  typeof v === 'string' || isNumber(v) ? undefined : 'must be a string or a finite number';
export const logger: Rule = (v) =>
  typeof v === 'object' && v !== null && typeof (v as { info?: unknown }).info === 'function'
    ? undefined
    : 'must be a pino logger';
/** A file path, a JSON text, or the parsed JSON. */
export const authSource: Rule = (v) =>
  typeof v === 'string' || (typeof v === 'object' && v !== null)
    ? undefined
    : 'must be a file path, a JSON text or an object';
export const recordInputs: Rule = (v) =>
  typeof v === 'boolean' || v === 'trace' ? undefined : "must be true, false or 'trace'";

/**
 * The library's check of a number the command checks by `rule`: the same
 * bounds, in the library's words (whole numbers by their range; seconds
 * and MiB above 0 are positive, from 0 not negative).
 */
export function numberCheck(rule: NumberRule): Rule {
  if (rule.whole === true) return wholeFrom(rule.min ?? Number.MIN_SAFE_INTEGER, rule.max);
  if (rule.above === 0 && rule.min === undefined && rule.max === undefined) return positive;
  if (rule.min === 0 && rule.above === undefined && rule.max === undefined) return notNegative;
  // A rule of other bounds needs its words here before an option takes it.
  throw new Error(`no library check for the number rule ${JSON.stringify(rule)}`);
}

export const advertisePorts: Rule = (v) => {
  const ports = v as { master?: unknown; firstAgent?: unknown } | null;
  const ok =
    typeof v === 'object' && ports !== null && port(ports.master) === undefined && port(ports.firstAgent) === undefined;
  return ok ? undefined : `must be { master, firstAgent }, each a port from 0 to ${MAX_PORT}`;
};

export const agentGroups: Rule = (v) => {
  if (!Array.isArray(v)) return 'must be an array of { count, resources?, attributes? }';
  for (const [i, group] of v.entries()) {
    const g = group as { count?: unknown; resources?: unknown; attributes?: unknown } | null;
    if (typeof g !== 'object' || g === null) return `[${i}] must be an object { count, resources?, attributes? }`;
    if (wholeFrom(0)(g.count) !== undefined) return `[${i}].count must be a whole number of at least 0`;
    if (g.resources !== undefined && typeof g.resources !== 'string') return `[${i}].resources must be a string`;
    if (g.attributes !== undefined && typeof g.attributes !== 'string') return `[${i}].attributes must be a string`;
  }
  return undefined;
};
