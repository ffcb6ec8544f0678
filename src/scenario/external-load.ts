/**
 * The loader's part for external frameworks: the entries of `frameworks`
 * with a `command` or `attach`, and the time a file runs in. An external
 * framework is a process on the wall clock, so its file runs in real time;
 * a file that asks for virtual time with one is refused.
 */
import path from 'node:path';
import { ScenarioError } from './load-error.js';
import { parseDuration } from './duration.js';
import type { ExternalSpec, TimeMode } from './scenario.js';

type Path = readonly (string | number)[];
type Raw = Record<string, any>;

/** How long the runner waits for an external framework to subscribe, unless the entry says. */
export const SUBSCRIBE_TIMEOUT_MS = 30_000;

/** The fields only a scripted framework has: an external one is the user's, and does what its code does. */
const SCRIPTED_FIELDS = [
  'role',
  'encoding',
  'checkpoint',
  'failover_timeout',
  'partition_aware',
  'start_at',
  'tasks',
  'failover_every',
  'stop_at',
  'reconnect_after',
  'acknowledge',
  'reconcile',
];

/** The fields only an external framework has. */
const EXTERNAL_FIELDS = ['cwd', 'env', 'match', 'subscribe_timeout'];

export function isExternal(raw: Raw): boolean {
  return raw['command'] !== undefined || raw['attach'] === true;
}

/** Checks an entry of `frameworks` for the fields of the other kind; where(path, key) places the error. */
export function checkFrameworkFields(raw: Raw, i: number, where: (path: Path, key?: string) => string): void {
  const at = (key: string, text: string): never => {
    throw new ScenarioError(`${where(['frameworks', i], key)}: frameworks[${i}].${key}: ${text}`);
  };
  if (raw['command'] !== undefined && raw['attach'] === true)
    at('attach', 'a framework has a command or is attached, not both');
  if (isExternal(raw)) {
    const scripted = SCRIPTED_FIELDS.find((key) => raw[key] !== undefined);
    if (scripted !== undefined)
      at(scripted, 'a framework with a command or attach is the user’s own: scripted fields do not apply');
    if (raw['attach'] === true && raw['cwd'] !== undefined) at('cwd', 'an attached framework has no command to run');
    return;
  }
  const external = EXTERNAL_FIELDS.find((key) => raw[key] !== undefined);
  if (external !== undefined) at(external, 'only a framework with a command or attach takes this field');
}

/**
 * An external entry as the runner takes it. Its `cwd` is the file's
 * directory, or a directory relative to it (as a compose file's paths
 * are), made absolute here: the file runs the same from wherever it is
 * run, and a relative command path is found through it.
 */
export function externalOf(file: string, raw: Raw, line: number): ExternalSpec {
  const env = Object.fromEntries(Object.entries((raw['env'] ?? {}) as Raw).map(([k, v]) => [k, String(v)]));
  return {
    name: raw['name'],
    command: raw['command'],
    attach: raw['attach'] === true,
    cwd: raw['command'] === undefined ? undefined : path.resolve(path.dirname(file), raw['cwd'] ?? '.'),
    env,
    match: raw['match']?.['name'] ?? raw['name'],
    subscribeTimeoutMs: parseDuration(raw['subscribe_timeout']) ?? SUBSCRIBE_TIMEOUT_MS,
    line,
  };
}

/** The time a file runs in: what it says, else real time with an external framework, else virtual. */
export function timeOf(raw: Raw, where: (path: Path, key?: string) => string): TimeMode {
  const frameworks: Raw[] = raw['frameworks'] ?? [];
  const i = frameworks.findIndex(isExternal);
  if (raw['time'] === 'virtual' && i >= 0) {
    const how = frameworks[i]!['command'] !== undefined ? 'has a command' : 'is attached';
    throw new ScenarioError(
      `${where([], 'time')}: time: virtual cannot run frameworks[${i}] ('${frameworks[i]!['name']}'), which ${how}: ` +
        'a process of its own runs on the wall clock; say time: realtime or leave time out',
    );
  }
  return raw['time'] ?? (i >= 0 ? 'realtime' : 'virtual');
}
