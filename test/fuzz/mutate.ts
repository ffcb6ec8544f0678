/**
 * Mutations of request bodies, as data: a generated request carries the
 * list of mutations to apply rather than the mutated bytes, so that a
 * counterexample prints short (a 1 MB string is `huge 1000000 "x"`) and
 * fast-check shrinks the list like any other.
 *
 * JSON mutations work on the value tree, addressing a node by a fraction
 * of the tree's pre-order (so the same mutation lands somewhere sensible
 * in any tree). What a JS value cannot hold (a repeated key, a bare `NaN`,
 * nesting 10,000 deep) is spliced into the text through sentinels.
 * Protobuf mutations work on the decoded field tree and re-encode it, so a
 * field with a wrong wire type sits inside otherwise well-framed parents
 * and reaches the checks of nested messages.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type JsonMutation =
  /** The node becomes another value: a wrong type, null, a string for a number, an unknown enum name. */
  | { readonly kind: 'replace'; readonly at: number; readonly value: Json }
  /** The node is written as a JSON string of itself (numbers as strings, objects as text). */
  | { readonly kind: 'stringify'; readonly at: number }
  /** The node wrapped `depth` times in arrays or objects. */
  | { readonly kind: 'nest'; readonly at: number; readonly depth: number; readonly bracket: '[' | '{' }
  /** The node becomes a string of `length` repetitions of `unit`. */
  | { readonly kind: 'huge'; readonly at: number; readonly length: number; readonly unit: string }
  /** The node becomes literal text, such as a bare `NaN`, `1e999` or `0x10`. */
  | { readonly kind: 'literal'; readonly at: number; readonly text: string }
  /** The object at or above the node gets one of its keys a second time. */
  | { readonly kind: 'repeat-key'; readonly at: number; readonly value: Json; readonly before: boolean }
  /** An enum-looking string (`ACCEPT`, `SCALAR`) at or after the node becomes another name; the root's `type` if there is none. */
  | { readonly kind: 'enum'; readonly at: number; readonly name: string }
  /** The array at or above the node gets its first element `times` times over: big lists, for costly paths. */
  | { readonly kind: 'grow'; readonly at: number; readonly times: number }
  | { readonly kind: 'drop'; readonly at: number }
  | { readonly kind: 'add-key'; readonly at: number; readonly key: string; readonly value: Json };

export type ByteMutation =
  /** Keeps this fraction of the bytes. */
  | { readonly kind: 'truncate'; readonly keep: number }
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'insert'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly kind: 'delete'; readonly at: number; readonly count: number };

export type ProtoMutation =
  /** The field at this fraction of the field tree keeps its value bytes under another wire type. */
  | { readonly kind: 'wire-type'; readonly at: number; readonly wireType: number }
  /** A field added to the message at this fraction of the message tree. */
  | {
      readonly kind: 'add-field';
      readonly at: number;
      readonly field: number;
      readonly wireType: number;
      readonly payload: readonly number[];
    }
  /** A length-delimited field's length prefix replaced, so it claims more or fewer bytes than follow. */
  | { readonly kind: 'bad-length'; readonly at: number; readonly length: number };

type Path = readonly (string | number)[];

/** Every node's path, in pre-order, the root first. */
function paths(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value))
    value.forEach((v, i) => {
      paths(v, [...prefix, i], out);
    });
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

const pick = <T>(items: readonly T[], at: number): T =>
  items[Math.min(items.length - 1, Math.floor(at * items.length))]!;

function get(root: Json, path: Path): Json {
  let node = root;
  for (const key of path) node = (node as Record<string | number, Json>)[key]!;
  return node;
}

/** Replaces the node at `path`; the root itself is replaced by returning the new value. */
function set(root: Json, path: Path, value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  const parent = get(root, path.slice(0, -1)) as Record<string | number, Json> & Json[];
  const key = path[path.length - 1]!;
  if (value !== undefined) parent[key] = value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
  return root;
}

// Sentinels are `<mark><index><mark>` with control characters as marks, which JSON.stringify writes
// escaped (\u0001): a generated string would have to hold that very pattern to be taken for one.
const VALUE_MARK = '\u0001';
const KEY_MARK = '\u0002';

/** The JSON text of `value` after the mutations, in order. */
export function mutateJson(value: Json, mutations: readonly JsonMutation[]): string {
  let root: Json = structuredClone(value);
  const splices: string[] = [];
  const sentinel = (text: string, mark = VALUE_MARK): string => `${mark}${splices.push(text) - 1}${mark}`;
  for (const m of mutations) {
    const path = pick(paths(root), m.at);
    const node = get(root, path);
    switch (m.kind) {
      case 'replace':
        root = set(root, path, structuredClone(m.value));
        break;
      case 'stringify':
        root = set(root, path, typeof node === 'string' ? node : JSON.stringify(node));
        break;
      case 'nest':
        root = set(root, path, sentinel(nested(node, m.depth, m.bracket)));
        break;
      case 'huge':
        root = set(root, path, m.unit.repeat(Math.ceil(m.length / Math.max(1, m.unit.length))));
        break;
      case 'literal':
        root = set(root, path, sentinel(m.text));
        break;
      case 'drop':
        root = set(root, path, undefined);
        break;
      case 'enum':
        root = set(root, enumPath(root, m.at), m.name);
        break;
      case 'grow':
        grow(root, path, m.times);
        break;
      default:
        root = withKey(root, path, m, sentinel);
    }
  }
  let text = JSON.stringify(root);
  // Sentinels were written as JSON strings; the last splice may hold earlier sentinels, so work backwards.
  for (let i = splices.length - 1; i >= 0; i--) {
    text = text
      .replace(`"\\u0001${i}\\u0001"`, () => splices[i]!)
      .replace(`"\\u0002${i}\\u0002":null`, () => splices[i]!);
  }
  return text;
}

/** What `grow` may add to a body: a long list, not gigabytes of copies of an element made huge before. */
const MAX_GROWTH_CHARS = 4 * 1024 * 1024;

function grow(root: Json, path: Path, times: number): void {
  for (let p = path; ; p = p.slice(0, -1)) {
    const node = get(root, p);
    if (Array.isArray(node) && node.length > 0) {
      const first = JSON.stringify(node[0]);
      const copies = Math.min(times, Math.floor(MAX_GROWTH_CHARS / Math.max(1, first.length)));
      for (let i = 0; i < copies; i++) node.push(JSON.parse(first) as Json);
      return;
    }
    if (p.length === 0) return;
  }
}

const ENUM_LIKE = /^[A-Z][A-Z0-9_]*$/;

/** The first enum-looking string from the fraction `at` of the pre-order on, wrapping round; else `type`. */
function enumPath(root: Json, at: number): Path {
  const all = paths(root);
  const start = Math.floor(at * all.length);
  for (let i = 0; i < all.length; i++) {
    const path = all[(start + i) % all.length]!;
    const node = get(root, path);
    if (typeof node === 'string' && ENUM_LIKE.test(node)) return path;
  }
  return root !== null && typeof root === 'object' && !Array.isArray(root) ? ['type'] : [];
}

function nested(node: Json, depth: number, bracket: '[' | '{'): string {
  const inner = JSON.stringify(node);
  return bracket === '['
    ? '['.repeat(depth) + inner + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

/** The nearest object at or above `path`, or undefined when there is none. */
function objectAt(root: Json, path: Path): Path | undefined {
  for (let p = path; ; p = p.slice(0, -1)) {
    const node = get(root, p);
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) return p;
    if (p.length === 0) return undefined;
  }
}

function withKey(
  root: Json,
  path: Path,
  m: Extract<JsonMutation, { kind: 'repeat-key' | 'add-key' }>,
  sentinel: (text: string, mark?: string) => string,
): Json {
  const at = objectAt(root, path);
  if (at === undefined) return root;
  const object = get(root, at) as Record<string, Json>;
  if (m.kind === 'add-key') {
    object[m.key] = structuredClone(m.value);
    return root;
  }
  const keys = Object.keys(object);
  if (keys.length === 0) return root;
  const key = pick(keys, m.at);
  // A key spliced in as text: a JS object cannot hold the same key twice.
  const repeated = sentinel(`${JSON.stringify(key)}:${JSON.stringify(m.value)}`, KEY_MARK);
  const entries = Object.entries(object);
  const rebuilt = Object.fromEntries(m.before ? [[repeated, null], ...entries] : [...entries, [repeated, null]]);
  for (const k of Object.keys(object)) delete object[k];
  Object.assign(object, rebuilt);
  return root;
}

/** The bytes after the mutations, in order. */
export function mutateBytes(bytes: Buffer, mutations: readonly ByteMutation[]): Buffer {
  let out = Buffer.from(bytes);
  for (const m of mutations) {
    const at = Math.min(out.length, Math.floor((m.kind === 'truncate' ? m.keep : m.at) * out.length));
    switch (m.kind) {
      case 'truncate':
        out = out.subarray(0, at);
        break;
      case 'flip':
        if (at < out.length) out[at] = out[at]! ^ (1 << (m.bit & 7));
        break;
      case 'insert':
        out = Buffer.concat([out.subarray(0, at), Buffer.from(m.bytes), out.subarray(at)]);
        break;
      case 'delete':
        out = Buffer.concat([out.subarray(0, at), out.subarray(at + m.count)]);
        break;
    }
  }
  return out;
}

// ---- protobuf ----

interface Field {
  number: number;
  wireType: number;
  /** The value's bytes as written after the tag (a length prefix included). */
  raw: Buffer;
  /** For a length-delimited field that parses as a message: its fields. */
  children?: Field[];
  /** A length prefix to write instead of the true one. */
  lyingLength?: number;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = BigInt(Math.max(0, Math.floor(n)));
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return Buffer.from(out);
}

function readVarint(buf: Buffer, at: number): [number, number] | undefined {
  let value = 0;
  for (let i = 0; i < 10 && at + i < buf.length; i++) {
    value += (buf[at + i]! & 0x7f) * 2 ** (7 * i);
    if ((buf[at + i]! & 0x80) === 0) return [value, at + i + 1];
  }
  return undefined;
}

/** The fields of a message, or undefined if the bytes are not one (then they stay opaque). */
function parseFields(buf: Buffer, depth: number): Field[] | undefined {
  const fields: Field[] = [];
  let at = 0;
  while (at < buf.length) {
    const tag = readVarint(buf, at);
    if (tag === undefined) return undefined;
    const [key, valueAt] = tag;
    const number = Math.floor(key / 8);
    const wireType = key % 8;
    const end = valueEnd(buf, wireType, valueAt);
    if (number === 0 || end === undefined || end > buf.length) return undefined;
    const raw = buf.subarray(valueAt, end);
    const field: Field = { number, wireType, raw };
    if (wireType === 2 && depth > 0) {
      const inner = readVarint(buf, valueAt)!;
      const children = parseFields(buf.subarray(inner[1], end), depth - 1);
      if (children !== undefined && children.length > 0) field.children = children;
    }
    fields.push(field);
    at = end;
  }
  return fields;
}

function valueEnd(buf: Buffer, wireType: number, at: number): number | undefined {
  if (wireType === 0) return readVarint(buf, at)?.[1];
  if (wireType === 1) return at + 8;
  if (wireType === 5) return at + 4;
  if (wireType !== 2) return undefined;
  const length = readVarint(buf, at);
  return length === undefined ? undefined : length[1] + length[0];
}

function encodeFields(fields: readonly Field[]): Buffer {
  return Buffer.concat(
    fields.map((f) => {
      const tag = varint(f.number * 8 + f.wireType);
      if (f.children === undefined && f.lyingLength === undefined) return Buffer.concat([tag, f.raw]);
      const body = f.children === undefined ? f.raw.subarray(readVarint(f.raw, 0)?.[1] ?? 0) : encodeFields(f.children);
      return Buffer.concat([tag, varint(f.lyingLength ?? body.length), body]);
    }),
  );
}

function allFields(fields: Field[], out: Field[] = []): Field[] {
  for (const f of fields) {
    out.push(f);
    if (f.children !== undefined) allFields(f.children, out);
  }
  return out;
}

/** The top-level field list and every nested one: the places a field can be added. */
function allMessages(fields: Field[], out: Field[][] = []): Field[][] {
  out.push(fields);
  for (const f of fields) if (f.children !== undefined) allMessages(f.children, out);
  return out;
}

/** The protobuf bytes after the mutations; bytes that do not parse as fields are left as they are. */
export function mutateProto(bytes: Buffer, mutations: readonly ProtoMutation[]): Buffer {
  const root = parseFields(bytes, 8);
  if (root === undefined) return bytes;
  for (const m of mutations) {
    if (m.kind === 'add-field') {
      const payload = Buffer.from(m.payload);
      const raw = m.wireType === 2 ? Buffer.concat([varint(payload.length), payload]) : payload;
      pick(allMessages(root), m.at).push({ number: m.field, wireType: m.wireType, raw });
      continue;
    }
    const fields = allFields(root);
    if (fields.length === 0) continue;
    const field = pick(fields, m.at);
    if (m.kind === 'wire-type') {
      // The original bytes, length prefix and all, now read under the new wire type.
      if (field.children !== undefined)
        field.raw = Buffer.concat([varint(encodeFields(field.children).length), encodeFields(field.children)]);
      delete field.children;
      field.wireType = m.wireType;
    } else if (field.wireType === 2) {
      field.lyingLength = m.length;
    }
  }
  return encodeFields(root);
}
