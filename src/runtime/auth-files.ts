/**
 * The files of `--credentials` and `--acls`, read and checked once at start.
 * Both are upstream's formats, so a master's files work unchanged:
 *
 *   credentials  {"credentials": [{"principal": "p", "secret": "s"}, ...]}
 *                or upstream's older text form, one `principal secret` a line
 *   acls         {"permissive": true, "register_frameworks": [{"principals":
 *                {"values": ["p"]}, "roles": {"type": "ANY"}}], ...}; entities
 *                are {"values": [...]} (type SOME, the default) or
 *                {"type": "ANY" | "NONE"}
 *
 * Where upstream would quietly run with something else than was meant (an
 * unknown key, a misspelled action, a secret that HTTP Basic can never
 * carry, a principal listed twice), the file is refused here instead, with
 * one line naming the file and what is wrong. Every ACL action of upstream
 * is accepted (core/acl-actions.ts), including those clustersim has
 * nothing to apply to, which are checked all the same. One action is
 * clustersim's own: `control_simulation`, who may change the simulation
 * through the control API, its objects `{"type": "ANY"}` or
 * `{"type": "NONE"}` under the key `objects`.
 * A value that starts with `{` is the JSON itself; `file://` before a path
 * is dropped, as upstream's flags do.
 */
import { readFileSync } from 'node:fs';
import { distance } from './spelling.js';
import {
  ACL_ACTIONS,
  ACTION_NAMES,
  AUTHORIZABLE_ENDPOINTS,
  fieldOf,
  type AclAction,
} from '../core/model/acl-actions.js';
import type { AclEntity, AclRule, Acls } from '../core/model/authz.js';

export interface CredentialsJson {
  readonly credentials: readonly { readonly principal: string; readonly secret?: string }[];
}

/** A file path, the JSON text itself, or the parsed JSON (library use). */
export type AuthFileSource = string | object;

export type Loaded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

class FileError extends Error {}

const fail = (message: string): never => {
  throw new FileError(message);
};

/** The file's JSON (or text), and how an error names it. */
function read(flag: string, source: AuthFileSource): { text?: string; json?: unknown; where: string } {
  if (typeof source !== 'string') return { json: source, where: `${flag} (object)` };
  if (source.trimStart().startsWith('{')) return { text: source, where: `${flag} (inline JSON)` };
  const path = source.startsWith('file://') ? source.slice('file://'.length) : source;
  try {
    return { text: readFileSync(path, 'utf8'), where: `${flag} ${path}` };
  } catch (error) {
    throw new FileError(`${flag} ${path}: cannot read the file: ${(error as Error).message}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return fail(`not JSON: ${(error as Error).message}`);
  }
}

function loaded<T>(where: string, parse: () => T): Loaded<T> {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (!(error instanceof FileError)) throw error;
    return { ok: false, error: `${where}: ${error.message}` };
  }
}

function load<T>(
  flag: string,
  source: AuthFileSource,
  fromJson: (json: unknown) => T,
  fromText?: (text: string) => T,
): Loaded<T> {
  let file: ReturnType<typeof read>;
  try {
    file = read(flag, source);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  return loaded(file.where, () => {
    if (file.json !== undefined) return fromJson(file.json);
    const text = file.text!;
    if (text.trim() === '') return fail('the file is empty');
    if (text.trimStart().startsWith('{') || fromText === undefined) return fromJson(parseJson(text));
    return fromText(text);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
  if (!isObject(value)) return fail(`'${path}' must be a JSON object`);
  const unknown = Object.keys(value).find((k) => !allowed.includes(k));
  if (unknown !== undefined) return fail(`unknown field '${unknown}' in '${path}'${hint(unknown, allowed)}`);
  return value;
}

/** The known field nearest a misspelled one, or the few there are. */
function hint(unknown: string, allowed: readonly string[]): string {
  const [nearest] = [...allowed].sort((a, b) => distance(unknown, a) - distance(unknown, b));
  if (nearest !== undefined && distance(unknown, nearest) <= 3) return ` (did you mean '${nearest}'?)`;
  return allowed.length <= 4 ? ` (expected ${allowed.map((k) => `'${k}'`).join(', ')})` : '';
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail(`'${path}' must be a JSON array`);
  return value;
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') return fail(`'${path}' must be a string`);
  return value;
}

// ---- credentials ----

/** Secrets by principal, from `--credentials`. */
export function loadCredentials(source: AuthFileSource): Loaded<Map<string, string>> {
  return load('credentials', source, credentialsFromJson, credentialsFromText);
}

function credentialsFromJson(json: unknown): Map<string, string> {
  const top = object(json, 'the file', ['credentials']);
  const entries = list(top.credentials, 'credentials').map((entry, i) => {
    const path = `credentials[${i}]`;
    const e = object(entry, path, ['principal', 'secret']);
    if (e.principal === undefined) fail(`'${path}.principal' is missing`);
    return [
      string(e.principal, `${path}.principal`),
      e.secret === undefined ? '' : string(e.secret, `${path}.secret`),
    ] as const;
  });
  return credentialMap(entries);
}

/** Upstream's deprecated text form: `principal secret` on each line. */
function credentialsFromText(text: string): Map<string, string> {
  const lines = text.split('\n').filter((line) => line !== '');
  const entries = lines.map((line, i) => {
    const words = line.split(' ').filter((w) => w !== '');
    if (words.length !== 2) fail(`Invalid credential format at line ${i + 1}`);
    return [words[0]!, words[1]!] as const;
  });
  return credentialMap(entries);
}

function credentialMap(entries: readonly (readonly [string, string])[]): Map<string, string> {
  if (entries.length === 0) fail('holds no credentials: every request would be refused');
  const map = new Map<string, string>();
  for (const [principal, secret] of entries) {
    if (principal === '') fail('a principal is empty');
    if (principal.includes(':')) fail(`principal '${principal}' contains ':', which HTTP Basic cannot carry`);
    if (secret.includes(':'))
      fail(`the secret of '${principal}' contains ':', which the master's HTTP Basic authentication never accepts`);
    if (map.has(principal)) fail(`principal '${principal}' is listed twice`);
    map.set(principal, secret);
  }
  return map;
}

// ---- ACLs ----

/** The ACLs of `--acls`. */
export function loadAcls(source: AuthFileSource): Loaded<Acls> {
  return load('acls', source, aclsFromJson);
}

function aclsFromJson(json: unknown): Acls {
  const top = object(json, 'the file', ['permissive', ...ACTION_NAMES]);
  const acls: Record<string, unknown> = { permissive: permissive(top.permissive) };
  for (const action of ACTION_NAMES) acls[fieldOf(action)] = rules(top[action], action);
  return acls as unknown as Acls;
}

/** A bool as upstream's JSON parser takes one: `true`/`false`, or those words as strings. */
function permissive(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return fail(`'permissive' must be true or false, got ${JSON.stringify(value)}`);
}

function rules(value: unknown, action: AclAction): AclRule[] {
  const { objects, kind } = ACL_ACTIONS[action];
  return list(value, action).map((entry, i) => {
    const path = `${action}[${i}]`;
    const rule = object(entry, path, ['principals', objects]);
    for (const field of ['principals', objects]) {
      if (rule[field] === undefined || rule[field] === null) fail(`'${path}.${field}' is missing`);
    }
    const parsed = {
      principals: entity(rule.principals, `${path}.principals`),
      objects: entity(rule[objects], `${path}.${objects}`),
    };
    if (kind === 'implicit' && parsed.objects.type === 'SOME') fail(`acls.${action} type must be either NONE or ANY`);
    if (action === 'get_endpoints' && parsed.objects.type === 'SOME') {
      const path = parsed.objects.values.find((p) => !AUTHORIZABLE_ENDPOINTS.includes(p));
      if (path !== undefined)
        fail(`Path: '${path}' is not an authorizable path (${AUTHORIZABLE_ENDPOINTS.join(', ')})`);
    }
    return parsed;
  });
}

function entity(value: unknown, path: string): AclEntity {
  const e = object(value, path, ['type', 'values']);
  const type = e.type === undefined || e.type === null ? 'SOME' : e.type;
  if (type === 'ANY' || type === 'NONE') return { type };
  if (type !== 'SOME') return fail(`'${path}.type' must be SOME, ANY or NONE, got ${JSON.stringify(type)}`);
  // Upstream takes a lone value where a list is expected.
  const values = typeof e.values === 'string' ? [e.values] : list(e.values, `${path}.values`);
  return { type: 'SOME', values: values.map((v, i) => string(v, `${path}.values[${i}]`)) };
}
