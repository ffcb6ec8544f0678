/**
 * The checks of `startCluster()`'s options, in one place: every key must be
 * a known option, and every value one the option takes. A wrong one stops
 * the start with a StartError that names the library option (`agents`,
 * `agentResources`, never a command-line flag), what it takes and what it
 * was given; `clustersim up` turns the names into its flags.
 *
 * cluster.ts checks at compile time that `OPTION_RULES` has a rule for each
 * key of `StartClusterOptions` and no other.
 */
import { CGROUPS_VERSIONS } from '../core/agent/flags.js';
import { CUSTOM_EXECUTOR_MODES } from '../core/model/executor-api.js';
import { AGENT_ADDRESSINGS } from '../http/agent/listener.js';
import { LOG_LEVELS } from '../runtime/logging.js';
import { StartError } from './errors.js';

/** What a value must be, or undefined when it is fine. */
type Rule = (value: unknown) => string | undefined;

const MAX_PORT = 65_535;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const wholeFrom = (min: number, max = Number.MAX_SAFE_INTEGER): Rule => (v) =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max
    ? undefined
    : max === Number.MAX_SAFE_INTEGER
      ? `must be a whole number of at least ${min}`
      : `must be a whole number from ${min} to ${max}`;
const positive: Rule = (v) => (isNumber(v) && v > 0 ? undefined : 'must be a positive number');
const notNegative: Rule = (v) => (isNumber(v) && v >= 0 ? undefined : 'must be a number of at least 0');
const finite: Rule = (v) => (isNumber(v) ? undefined : 'must be a finite number');
const oneOf = (values: readonly string[]): Rule => (v) => (typeof v === 'string' && values.includes(v) ? undefined : `must be one of ${values.join(', ')}`);
const bool: Rule = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
const text: Rule = (v) => (typeof v === 'string' ? undefined : 'must be a string');
const nonEmpty: Rule = (v) => (typeof v === 'string' && v !== '' ? undefined : 'must be a non-empty string');
const func: Rule = (v) => (typeof v === 'function' ? undefined : 'must be a function');
const port = wholeFrom(0, MAX_PORT);
const seed: Rule = (v) => (typeof v === 'string' || isNumber(v) ? undefined : 'must be a string or a finite number');
const logger: Rule = (v) =>
  typeof v === 'object' && v !== null && typeof (v as { info?: unknown }).info === 'function' ? undefined : 'must be a pino logger';
/** A file path, a JSON text, or the parsed JSON. */
const authSource: Rule = (v) => (typeof v === 'string' || (typeof v === 'object' && v !== null) ? undefined : 'must be a file path, a JSON text or an object');

const advertisePorts: Rule = (v) => {
  const ports = v as { master?: unknown; firstAgent?: unknown } | null;
  const ok = typeof v === 'object' && ports !== null && port(ports.master) === undefined && port(ports.firstAgent) === undefined;
  return ok ? undefined : `must be { master, firstAgent }, each a port from 0 to ${MAX_PORT}`;
};

const agentGroups: Rule = (v) => {
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

/** A rule for every option of `StartClusterOptions` (cluster.ts holds it to that). */
export const OPTION_RULES = {
  host: nonEmpty,
  port,
  advertisePorts,
  advertiseHost: nonEmpty,
  maxCompletedTasksPerFramework: wholeFrom(0),
  maxCompletedFrameworks: wholeFrom(0),
  masters: wholeFrom(1, 64),
  electionDelaySeconds: notNegative,
  agentReregisterTimeoutSeconds: positive,
  agents: wholeFrom(0),
  agentResources: text,
  agentAttributes: text,
  agentGroups,
  agentPort: port,
  agentAddressing: oneOf(AGENT_ADDRESSINGS),
  seed,
  heartbeatIntervalSeconds: positive,
  allocationIntervalSeconds: positive,
  weights: text,
  epochMs: finite,
  time: oneOf(['realtime', 'virtual']),
  logLevel: oneOf(LOG_LEVELS),
  logger,
  recordTrace: bool,
  recordInputs: (v) => (typeof v === 'boolean' || v === 'trace' ? undefined : "must be true, false or 'trace'"),
  traceWindow: wholeFrom(1),
  onFailure: func,
  streamKeepaliveMs: wholeFrom(0),
  credentials: authSource,
  acls: authSource,
  authenticateHttpReadonly: bool,
  authenticateHttpReadwrite: bool,
  customExecutors: oneOf(CUSTOM_EXECUTOR_MODES),
  switchUser: bool,
  workDir: nonEmpty,
  executorRegistrationTimeoutSeconds: positive,
  executorShutdownGracePeriodSeconds: positive,
  httpExecutorDomainSockets: bool,
  containerizers: text,
  engineSocket: nonEmpty,
  authenticateHttpExecutors: bool,
  jwtSecretKey: nonEmpty,
  idleTimeoutSeconds: positive,
  headersTimeoutSeconds: positive,
  requestTimeoutSeconds: positive,
  maxConnections: wholeFrom(1),
  agentMaxConnections: wholeFrom(1),
  maxSubscriptions: wholeFrom(1),
  maxFrameworks: wholeFrom(1),
  streamBufferLimitMiB: positive,
  streamBufferBudgetMiB: positive,
  cgroups: oneOf(CGROUPS_VERSIONS),
  isolation: text,
  memoryControllerDelegated: bool,
} satisfies Record<string, Rule>;

export type OptionName = keyof typeof OPTION_RULES;

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
    if (reason !== undefined) throw new StartError(`${name}${reason.startsWith('[') ? '' : ': '}${reason}, got ${show(value)}`, [name]);
  }
}

/** The reason for an unknown key, with the known option it most looks like. */
function unknownOption(name: string): string {
  const near = Object.keys(OPTION_RULES)
    .map((known) => ({ known, distance: editDistance(name.toLowerCase(), known.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance || a.known.localeCompare(b.known))[0]!;
  const hint = near.distance <= Math.max(2, Math.floor(name.length / 3)) ? `; did you mean '${near.known}'?` : `; the options are ${Object.keys(OPTION_RULES).join(', ')}`;
  return `startCluster(): unknown option '${name}'${hint}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return previous[b.length]!;
}

/** A value as a message quotes it. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
