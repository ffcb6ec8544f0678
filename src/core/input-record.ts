/**
 * The record of a cluster's inputs: every call of the `Cluster` port, by
 * method name, with its arguments and its virtual time. Kept in memory (as
 * given: a rebuild replays them exactly) and written into the trace as an
 * `input:<method>` entry whose text is the arguments as a JSON array, so
 * that a trace file alone rebuilds the run (`clustersim replay`).
 *
 * The text is plain JSON with four tagged forms for what JSON has no
 * value for:
 *
 *   {"$bytes": "<base64>"}       a Uint8Array (a MESSAGE's data)
 *   {"$map": [[key, value]...]}  a Map (quota guarantees, weights)
 *   {"$undefined": true}         an argument left out, in its place
 *   {"$authorizer": claims}      an executor call's `authorize` check: the
 *                                claims of the caller's token it compares
 *                                (null when the check carries none)
 *
 * A check is a function outside the core (the executor API's token check),
 * so it is recorded by what it decides from (the claims) and rebuilt from
 * them by whoever replays (`decodeArgs`'s `authorizerOf`), giving the same
 * answers for the same executors.
 */
import type { ExecutorAuthorizer } from './model/executor-api.js';

export interface InputRecord {
  /** The `Cluster` method. */
  readonly name: string;
  readonly args: readonly unknown[];
  readonly timeMs: number;
}

/** The trace kind of an input's entry. */
export const INPUT_KIND_PREFIX = 'input:';

export type AuthorizerOf = (claims: Readonly<Record<string, unknown>> | null) => ExecutorAuthorizer;

/** Arguments as the JSON text of an `input:` entry. */
export function encodeArgs(args: readonly unknown[]): string {
  // Argument by argument: one left out (an unauthenticated call's principal)
  // would send the whole list the slow way, through the replacer.
  let text = '[';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    text += `${i === 0 ? '' : ','}${arg === undefined ? UNDEFINED_TEXT : encodeValue(arg)}`;
  }
  return `${text}]`;
}

const UNDEFINED_TEXT = JSON.stringify({ $undefined: true });

/** Any value in the same tagged JSON (the first trace entry uses it for the options). */
export function encodeValue(value: unknown): string {
  // A replacer function makes JSON.stringify several times slower; most
  // inputs (a launch of many tasks among them) hold nothing to tag.
  return isPlainJson(value, 0) ? JSON.stringify(value) : JSON.stringify(value, replacer);
}

/** Deeper than this, the replacer's path decides (and reports a cycle as JSON.stringify does). */
const PLAIN_DEPTH_MAX = 64;

/** True when the value holds none of the tagged forms: the replacer would change nothing. */
function isPlainJson(value: unknown, depth: number): boolean {
  if (typeof value === 'function') return false;
  if (typeof value !== 'object' || value === null) return true;
  if (depth > PLAIN_DEPTH_MAX) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || !isPlainJson(item, depth + 1)) return false;
    }
    return true;
  }
  if (value instanceof Uint8Array || value instanceof Map || value instanceof Set) return false;
  for (const key of Object.keys(value)) {
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function replacer(this: unknown, key: string, value: unknown): unknown {
  // `this[key]` is the value before any toJSON (a Buffer has one).
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Uint8Array) return { $bytes: toBase64(raw) };
  if (raw instanceof Map) return { $map: [...raw.entries()] };
  if (raw instanceof Set) return { $set: [...raw.values()] };
  if (typeof raw === 'function') return { $authorizer: (raw as { claims?: unknown }).claims ?? null };
  if (raw === undefined && Array.isArray(this)) return { $undefined: true };
  return value;
}

/** The arguments of an `input:` entry's text; a text that is not such an array throws. */
export function decodeArgs(text: string, authorizerOf: AuthorizerOf): unknown[] {
  const args = decodeValue(text, authorizerOf);
  if (!Array.isArray(args)) throw new Error('input record: the arguments are not a JSON array');
  return args;
}

export function decodeValue(text: string, authorizerOf: AuthorizerOf): unknown {
  const parsed: unknown = JSON.parse(text);
  return revive(parsed, authorizerOf);
}

function revive(value: unknown, authorizerOf: AuthorizerOf): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => revive(v, authorizerOf));
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.length === 1) {
    const [key] = keys as [string];
    const tagged = object[key];
    if (key === '$bytes' && typeof tagged === 'string') return fromBase64(tagged);
    if (key === '$map' && Array.isArray(tagged))
      return new Map(tagged.map((e) => revive(e, authorizerOf) as [unknown, unknown]));
    if (key === '$set' && Array.isArray(tagged)) return new Set(tagged.map((e) => revive(e, authorizerOf)));
    if (key === '$undefined' && tagged === true) return undefined;
    if (key === '$authorizer')
      return authorizerOf(typeof tagged === 'object' ? (tagged as Record<string, unknown> | null) : null);
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = revive(object[key], authorizerOf);
  return out;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function toBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63]! : '=';
  }
  return out;
}

export function fromBase64(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let buffer = 0;
  let at = 0;
  for (const char of clean) {
    const v = ALPHABET.indexOf(char);
    if (v < 0) throw new Error(`input record: '${char}' is not a base64 digit`);
    buffer = (buffer << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (buffer >> bits) & 0xff;
    }
  }
  return out;
}

/** What of a cluster's options the first trace entry keeps. */
export interface StartOptions {
  readonly networkLatencyMs?: number;
  readonly master: unknown;
  readonly masters?: number;
  readonly electionDelayMs?: number;
  readonly workDir?: string;
  readonly sandboxBytes?: number;
  readonly sandboxesBytes?: number;
}

/** What the first trace entry says: all that builds the same cluster again (see `optionsFromStart` of the replay). */
export function startRecord(seed: string, epochMs: number, options: StartOptions): object {
  // Invariant checks write nothing into the trace: a replay chooses its own.
  return {
    seed,
    epochMs,
    networkLatencyMs: options.networkLatencyMs ?? 0,
    master: options.master,
    masters: options.masters ?? 1,
    ...(options.electionDelayMs === undefined ? {} : { electionDelayMs: options.electionDelayMs }),
    // Written only when given, so that a cluster of the defaults starts its trace as before.
    ...(options.workDir === undefined ? {} : { workDir: options.workDir }),
    ...(options.sandboxBytes === undefined ? {} : { sandboxBytes: options.sandboxBytes }),
    ...(options.sandboxesBytes === undefined ? {} : { sandboxesBytes: options.sandboxesBytes }),
  };
}
