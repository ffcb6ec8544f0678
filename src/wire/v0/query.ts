/**
 * The query strings of the read endpoints, decoded and checked once, into
 * the typed queries the renderers take.
 *
 * Decoding is upstream's (libprocess `http::query::decode`): parameters are
 * separated by `&` or `;`, a name without `=` has the empty value, `+` is a
 * space, and a repeated name keeps its last value. A malformed `%` escape
 * fails the whole query, as it fails the request upstream. Names no endpoint
 * reads are ignored, and so are values an endpoint cannot use, as upstream
 * ignores them: `limit=abc` pages with the default limit, `order=up` sorts
 * newest first, and a `jsonp` that is no function name gives plain JSON
 * (it is written into JavaScript the client runs, so only a name is used).
 */
import type { FrameworksQuery } from './frameworks.js';
import type { SlavesQuery } from './slaves.js';
import type { TasksQuery } from './tasks.js';

export type QueryResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** Parameters by name, each with its last value. */
export type QueryParams = ReadonlyMap<string, string>;

/** What every JSON endpoint reads: `jsonp` wraps the body in a call of that function. */
export interface JsonpQuery {
  readonly jsonp?: string;
}

/** The parameters of a request target (`/path?query`); an absolute URL's query is found the same way. */
export function decodeQuery(target: string): QueryResult<QueryParams> {
  const start = target.indexOf('?');
  const params = new Map<string, string>();
  if (start < 0) return { ok: true, value: params };
  for (const token of target.slice(start + 1).split(/[&;]/)) {
    if (token === '') continue;
    const eq = token.indexOf('=');
    const name = percentDecode(eq < 0 ? token : token.slice(0, eq));
    const value = eq < 0 ? '' : percentDecode(token.slice(eq + 1));
    if (typeof name !== 'string') return name;
    if (typeof value !== 'string') return value;
    params.set(name, value);
  }
  return { ok: true, value: params };
}

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * `+` is a space and `%XX` a byte; the bytes are read as UTF-8. Node hands
 * over the request line as latin1, one character per byte, so a character
 * up to U+00FF is a byte too; one above came from a caller's own string.
 */
function percentDecode(text: string): string | { ok: false; error: string } {
  const bad = BAD_ESCAPE.exec(text);
  if (bad !== null) {
    return { ok: false, error: `Malformed % escape in '${text}': '${text.slice(bad.index, bad.index + 3)}'` };
  }
  if (!/[^\x00-\x7f]|[+%]/.test(text)) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c <= 0xff) {
      bytes.push(c === 0x2b ? 0x20 : c);
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      bytes.push(...Buffer.from(char, 'utf8'));
      i += char.length - 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `/state`, `/roles`, `/version` and the others that read nothing but `jsonp`. */
export function jsonpQuery(params: QueryParams): QueryResult<JsonpQuery> {
  const jsonp = params.get('jsonp');
  // The name is written into JavaScript the client runs: nothing but a (dotted) identifier.
  if (jsonp === undefined || !/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/.test(jsonp)) return { ok: true, value: {} };
  return { ok: true, value: { jsonp } };
}

export function tasksQuery(params: QueryParams): QueryResult<TasksQuery & JsonpQuery> {
  const base = jsonpQuery(params);
  if (!base.ok) return base;
  const order = params.get('order');
  return {
    ok: true,
    value: {
      ...base.value,
      ...defined('limit', count(params, 'limit')),
      ...defined('offset', count(params, 'offset')),
      ...defined('order', order !== undefined && isOrder(order) ? order : undefined),
      ...defined('framework_id', params.get('framework_id')),
      ...defined('task_id', params.get('task_id')),
    },
  };
}

export function frameworksQuery(params: QueryParams): QueryResult<FrameworksQuery & JsonpQuery> {
  const base = jsonpQuery(params);
  if (!base.ok) return base;
  return { ok: true, value: { ...base.value, ...defined('framework_id', params.get('framework_id')) } };
}

export function slavesQuery(params: QueryParams): QueryResult<SlavesQuery & JsonpQuery> {
  const base = jsonpQuery(params);
  if (!base.ok) return base;
  return { ok: true, value: { ...base.value, ...defined('slave_id', params.get('slave_id')) } };
}

/** The agent's `/containers/cgroup`: `container_id` picks one container. */
export function containerQuery(params: QueryParams): QueryResult<{ readonly container_id?: string } & JsonpQuery> {
  const base = jsonpQuery(params);
  if (!base.ok) return base;
  return { ok: true, value: { ...base.value, ...defined('container_id', params.get('container_id')) } };
}

const isOrder = (text: string): text is NonNullable<TasksQuery['order']> => text === 'asc' || text === 'des';

/** A non-negative decimal integer (surrounding blanks and a `+` allowed), else none: the endpoint's default. */
function count(params: QueryParams, name: string): number | undefined {
  const trimmed = params.get(name)?.trim();
  const n = trimmed !== undefined && /^\+?\d+$/.test(trimmed) ? Number(trimmed) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** `{ [key]: value }`, or nothing when the value is absent (the queries' fields are optional, not undefined). */
function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `/metrics/snapshot`: `timeout`, a duration upstream checks (its snapshot waits at most that long; this one never waits). */
export function metricsQuery(params: QueryParams): QueryResult<JsonpQuery> {
  const timeout = params.get('timeout');
  const invalid = timeout === undefined ? undefined : durationError(timeout);
  if (invalid !== undefined) return { ok: false, error: `Invalid timeout '${timeout}': ${invalid}.` };
  return jsonpQuery(params);
}

const DURATION_UNITS = ['ns', 'us', 'ms', 'secs', 'mins', 'hrs', 'days', 'weeks'];

/** Why a text is no duration as upstream's `Duration::parse` reads one (digits and dots, then a unit). */
function durationError(text: string): string | undefined {
  const digits = /^[\d.]*/.exec(text)![0];
  if (digits === text) return `Invalid duration '${text}'`;
  if (!/^(\d+\.?\d*|\.\d+)$/.test(digits)) return `Failed to convert '${digits}' to number`;
  const unit = text.slice(digits.length);
  if (DURATION_UNITS.includes(unit)) return undefined;
  return `Unknown duration unit '${unit}'; supported units are 'ns', 'us', 'ms', 'secs', 'mins', 'hrs', 'days', and 'weeks'`;
}
