/**
 * Resources with integer arithmetic. Scalars are fixed point with three
 * decimal digits (`milli`: 1.5 cpus = 1500), as upstream keeps them, so sums
 * and differences are exact; ranges are sorted, disjoint, inclusive integer
 * intervals (ranges.ts); sets are sorted string lists. Floats appear only
 * at the wire boundary (`toMilli`/`fromMilli`).
 *
 * A resource's identity is everything but its quantity: name, type, its
 * reservation stack (and so its role), its disk info (a persistent volume
 * is not plain disk) and its allocation role. `Resources` is a normalised
 * list with at most one entry per identity, in a canonical order, so equal
 * bags print the same. A persistent volume is never split: a bag contains
 * it, and gives it up, only whole.
 *
 * Reservations stack as upstream's `reservations`: the first is the
 * agent's static one or the first dynamic one, each later one refines the
 * role before it. `role` is always the role of the last reservation (`*`
 * when unreserved), which is the role the resource may be offered to. The
 * operations that push and pop reservations and volumes are in conversions.ts.
 */
import { normaliseRanges, rangesSize, subtractRanges, type Range } from './ranges.js';

export type ValueType = 'SCALAR' | 'RANGES' | 'SET';

export interface ResourceLabel {
  readonly key: string;
  readonly value?: string;
}

export interface ReservationInfo {
  readonly type: 'STATIC' | 'DYNAMIC';
  readonly role: string;
  readonly principal?: string;
  readonly labels?: readonly ResourceLabel[];
}

export interface DiskInfo {
  readonly persistence?: { readonly id: string; readonly principal?: string };
  readonly volume?: { readonly containerPath: string; readonly mode: 'RW' | 'RO' };
}

export interface Resource {
  readonly name: string;
  readonly type: ValueType;
  /** SCALAR quantity in thousandths. */
  readonly milli?: number;
  readonly ranges?: readonly Range[];
  readonly set?: readonly string[];
  /** Reservation role (the last reservation's); `*` when unreserved. */
  readonly role: string;
  /** The reservation stack, oldest first; absent or empty when unreserved. */
  readonly reservations?: readonly ReservationInfo[];
  /** Disk info; a persistent volume has `persistence` and `volume`. */
  readonly disk?: DiskInfo;
  /** The role this resource is allocated (offered or used) to, if any. */
  readonly allocationRole?: string;
}

export type Resources = readonly Resource[];

export const toMilli = (value: number): number => Math.round(value * 1000);
export const fromMilli = (milli: number): number => milli / 1000;

/** A role other than `*` makes the resource statically reserved to it, as the agent's resources flag does. */
export function scalar(name: string, value: number, role = '*'): Resource {
  return { name, type: 'SCALAR', milli: toMilli(value), ...staticTo(role) };
}

export function ranges(name: string, items: readonly Range[], role = '*'): Resource {
  return { name, type: 'RANGES', ranges: normaliseRanges(items), ...staticTo(role) };
}

export function set(name: string, items: readonly string[], role = '*'): Resource {
  return { name, type: 'SET', set: [...new Set(items)].sort(), ...staticTo(role) };
}

function staticTo(role: string): { role: string; reservations?: ReservationInfo[] } {
  return role === '*' ? { role } : { role, reservations: [{ type: 'STATIC', role }] };
}

/**
 * The identity key. Plain resources (no reservation stack, no disk info)
 * keep the short key, so the common case costs what it did; the details of
 * reserved resources and volumes are serialised once per stack and disk
 * object (they are shared, never copied, when a resource changes quantity).
 */
function identity(r: Resource): string {
  const base = `${r.name}\u0000${r.type}\u0000${r.role}\u0000${r.allocationRole ?? ''}`;
  return isPlain(r) ? base : `${base}\u0000${detailKey(r)}`;
}

/** The identity key, optionally without the allocation role: what an agent's total knows of a resource. */
export function identityKey(r: Resource, ignoreAllocation = false): string {
  if (!ignoreAllocation) return identity(r);
  const base = `${r.name}\u0000${r.type}\u0000${r.role}\u0000`;
  return isPlain(r) ? base : `${base}\u0000${detailKey(r)}`;
}

function isPlain(r: Resource): boolean {
  return (r.reservations === undefined || r.reservations.length === 0) && r.disk === undefined;
}

const detailKeys = new WeakMap<object, string>();

function detailKey(r: Resource): string {
  return `${cached(r.reservations, reservationsKey)}\u0000${cached(r.disk, diskKey)}`;
}

function cached<T extends object>(value: T | undefined, key: (value: T) => string): string {
  if (value === undefined) return '';
  let text = detailKeys.get(value);
  if (text === undefined) detailKeys.set(value, (text = key(value)));
  return text;
}

/** Field by field, so that equal reservations built in different key orders agree. */
function reservationsKey(stack: readonly ReservationInfo[]): string {
  const labels = (ls: readonly ResourceLabel[] | undefined) =>
    (ls ?? []).map((l) => `${l.key}=${l.value ?? ''}`).join('\u0002');
  return stack.map((x) => [x.type, x.role, x.principal ?? '', labels(x.labels)].join('\u0001')).join('\u0003');
}

function diskKey(disk: DiskInfo): string {
  const p = disk.persistence;
  const v = disk.volume;
  return [p?.id ?? '', p?.principal ?? '', v?.containerPath ?? '', v?.mode ?? ''].join('\u0001');
}

export function isEmptyResource(r: Resource): boolean {
  switch (r.type) {
    case 'SCALAR':
      return (r.milli ?? 0) <= 0;
    case 'RANGES':
      return (r.ranges?.length ?? 0) === 0;
    case 'SET':
      return (r.set?.length ?? 0) === 0;
  }
}

export function isEmpty(bag: Resources): boolean {
  return bag.every(isEmptyResource);
}

/**
 * Bags `normalise` and `subtract` returned: read-only, so already in normal
 * form, and a bag passed through the books again and again (an agent's
 * free resources, a task's) is normalised once.
 */
const NORMALISED = new WeakSet<Resources>();

/** Merges entries of the same identity, drops empty ones, sorts canonically. */
export function normalise(bag: Resources): Resources {
  if (NORMALISED.has(bag)) return bag;
  const byId = new Map<string, Resource>();
  for (const r of bag) {
    const key = identity(r);
    const prev = byId.get(key);
    byId.set(key, prev === undefined ? r : combine(prev, r));
  }
  const out = [...byId.entries()]
    .filter(([, r]) => !isEmptyResource(r))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);
  NORMALISED.add(out);
  return out;
}

function combine(a: Resource, b: Resource): Resource {
  switch (a.type) {
    case 'SCALAR':
      return { ...a, milli: (a.milli ?? 0) + (b.milli ?? 0) };
    case 'RANGES':
      return { ...a, ranges: normaliseRanges([...(a.ranges ?? []), ...(b.ranges ?? [])]) };
    case 'SET':
      return { ...a, set: [...new Set([...(a.set ?? []), ...(b.set ?? [])])].sort() };
  }
}

export function add(a: Resources, b: Resources): Resources {
  if (a.length === 0) return normalise(b);
  if (b.length === 0) return normalise(a);
  if (NORMALISED.has(a) && NORMALISED.has(b)) return mergeNormal(a, b);
  return normalise([...a, ...b]);
}

/**
 * The sum of two normal bags by one walk over both in their canonical
 * order (what `normalise` of the two would give, without its map and
 * sort): the books add a task's bag to an agent's on every launch.
 */
function mergeNormal(a: Resources, b: Resources): Resources {
  const out: Resource[] = [];
  let i = 0;
  let j = 0;
  let ka = identity(a[0]!);
  let kb = identity(b[0]!);
  while (i < a.length && j < b.length) {
    if (ka === kb) out.push(combine(a[i]!, b[j]!));
    else out.push(ka < kb ? a[i]! : b[j]!);
    const stepA = ka <= kb;
    const stepB = kb <= ka;
    if (stepA && ++i < a.length) ka = identity(a[i]!);
    if (stepB && ++j < b.length) kb = identity(b[j]!);
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  NORMALISED.add(out);
  return out;
}

/** `a - b`; the caller must know that `a` contains `b` (asserted). */
export function subtract(a: Resources, b: Resources): Resources {
  // A bag taken from itself, as a book that held one offer or task gives it back.
  if (a === b) return [];
  if (NORMALISED.has(a) && NORMALISED.has(b)) return subtractNormal(a, b);
  // One pass: both sides normalised once, containment checked per identity.
  // The result keeps the canonical order of `a`, so it needs no new sort.
  const left = new Map(normalise(a).map((r) => [identity(r), r]));
  for (const r of normalise(b)) {
    const key = identity(r);
    const have = left.get(key);
    if (have === undefined || !containsOne(have, r)) {
      throw new Error(`resources: subtracting ${format(b)} from ${format(a)} that does not contain it`);
    }
    left.set(key, minus(have, r));
  }
  const out = [...left.values()].filter((r) => !isEmptyResource(r));
  NORMALISED.add(out);
  return out;
}

/** `a - b` for two normal bags, by one walk over both in their canonical order. */
function subtractNormal(a: Resources, b: Resources): Resources {
  const out: Resource[] = [];
  let i = 0;
  for (const r of b) {
    const key = identity(r);
    let ka = i < a.length ? identity(a[i]!) : undefined;
    while (ka !== undefined && ka < key) {
      out.push(a[i++]!);
      ka = i < a.length ? identity(a[i]!) : undefined;
    }
    const have = a[i];
    if (ka !== key || have === undefined || !containsOne(have, r)) {
      throw new Error(`resources: subtracting ${format(b)} from ${format(a)} that does not contain it`);
    }
    const left = minus(have, r);
    if (!isEmptyResource(left)) out.push(left);
    i++;
  }
  while (i < a.length) out.push(a[i++]!);
  NORMALISED.add(out);
  return out;
}

function minus(a: Resource, b: Resource): Resource {
  switch (a.type) {
    case 'SCALAR':
      return { ...a, milli: (a.milli ?? 0) - (b.milli ?? 0) };
    case 'RANGES':
      return { ...a, ranges: subtractRanges(a.ranges ?? [], b.ranges ?? []) };
    case 'SET': {
      const drop = new Set(b.set ?? []);
      return { ...a, set: (a.set ?? []).filter((item) => !drop.has(item)) };
    }
  }
}

/** True when every part of `b` is in `a` (same identities; a persistent volume only whole). */
export function contains(a: Resources, b: Resources): boolean {
  if (NORMALISED.has(a) && NORMALISED.has(b)) return containsNormal(a, b);
  const have = new Map(normalise(a).map((r) => [identity(r), r]));
  return normalise(b).every((r) => {
    const h = have.get(identity(r));
    return h !== undefined && containsOne(h, r);
  });
}

/** `contains` of two normal bags, by one walk over both in their canonical order (a launch checks each task so). */
function containsNormal(a: Resources, b: Resources): boolean {
  let i = 0;
  for (const r of b) {
    const key = identity(r);
    while (i < a.length && identity(a[i]!) < key) i++;
    const have = a[i];
    if (have === undefined || identity(have) !== key || !containsOne(have, r)) return false;
    i++;
  }
  return true;
}

/**
 * A persistent volume is one unit: a bag holds it only whole, as upstream
 * subtracts a volume only from an equal one. No operation, task or book
 * can take a part of it and leave the rest a smaller volume.
 */
function containsOne(a: Resource, b: Resource): boolean {
  switch (a.type) {
    case 'SCALAR':
      return a.disk?.persistence === undefined ? (a.milli ?? 0) >= (b.milli ?? 0) : a.milli === b.milli;
    case 'RANGES':
      return (b.ranges ?? []).every(([lo, hi]) => (a.ranges ?? []).some(([alo, ahi]) => alo <= lo && hi <= ahi));
    case 'SET': {
      const have = new Set(a.set ?? []);
      return (b.set ?? []).every((item) => have.has(item));
    }
  }
}

/** Sum of a scalar over all roles, in milli. */
export function scalarMilli(bag: Resources, name: string): number {
  let total = 0;
  for (const r of bag) if (r.name === name && r.type === 'SCALAR') total += r.milli ?? 0;
  return total;
}

/** Scalar quantities by name (all roles together), in milli. */
export function scalarQuantities(bag: Resources): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of bag) {
    if (r.type === 'SCALAR') out.set(r.name, (out.get(r.name) ?? 0) + (r.milli ?? 0));
  }
  return out;
}

export function allocate(bag: Resources, role: string | undefined): Resources {
  // Already so: the bag itself. The same bag is often offered again and again: the last answer is kept.
  if (bag.every((r) => r.allocationRole === role)) return normalise(bag);
  const kept = ALLOCATED.get(bag);
  if (kept !== undefined && kept.role === role) return kept.bag;
  const out = normalise(bag.map((r) => withAllocation(r, role)));
  ALLOCATED.set(bag, { role, bag: out });
  return out;
}

/**
 * Every resource of `bag` with allocation role `role` (none when
 * undefined), in the bag's order, merging nothing. A normal bag of one
 * allocation role gives a normal bag (the canonical order holds, no two
 * entries become one), known as such, so the books take their one-walk paths.
 */
export function retag(bag: Resources, role: string | undefined): Resources {
  const out = bag.map((r) => {
    if (r.allocationRole === role) return r;
    if (role !== undefined) return { ...r, allocationRole: role };
    const { allocationRole: _drop, ...rest } = r;
    return rest;
  });
  const first = bag[0]?.allocationRole;
  if (NORMALISED.has(bag) && bag.every((r) => r.allocationRole === first)) NORMALISED.add(out);
  return out;
}

/** The last `allocate` of each bag (bags are never changed). */
const ALLOCATED = new WeakMap<Resources, { readonly role: string | undefined; readonly bag: Resources }>();

function withAllocation(r: Resource, role: string | undefined): Resource {
  const { allocationRole: _drop, ...rest } = r;
  return role === undefined ? rest : { ...rest, allocationRole: role };
}

/**
 * Where two bags claim the same range value or set item of one resource
 * (the same name and reservation role), described for an error; undefined
 * when they are disjoint. Scalars always add up, so they never overlap.
 */
export function overlap(a: Resources, b: Resources): string | undefined {
  for (const x of a) {
    for (const y of b) {
      if (x.name !== y.name || x.type !== y.type || x.role !== y.role || x.type === 'SCALAR') continue;
      if (x.type === 'RANGES') {
        const both = [...(x.ranges ?? []), ...(y.ranges ?? [])];
        if (rangesSize(normaliseRanges(both)) < rangesSize(x.ranges ?? []) + rangesSize(y.ranges ?? [])) {
          return `'${x.name}' ${formatValue(x)} overlaps ${formatValue(y)}`;
        }
      } else {
        const shared = (y.set ?? []).find((item) => x.set?.includes(item));
        if (shared !== undefined) return `'${x.name}' item '${shared}' is used twice`;
      }
    }
  }
  return undefined;
}

/**
 * Human-readable form in the upstream style: `cpus(*):1.5; ports(*):[31000-32000]`.
 * Reservations beyond a static one and volumes are spelled out:
 * `disk(r1)[(DYNAMIC,r1,ops)][vol-1:data]:64`.
 */
export function format(bag: Resources): string {
  return normalise(bag)
    .map((r) => {
      const role = r.allocationRole === undefined ? r.role : `${r.role},alloc:${r.allocationRole}`;
      return `${r.name}(${role})${detailText(r)}:${formatValue(r)}`;
    })
    .join('; ');
}

function detailText(r: Resource): string {
  const stack = r.reservations ?? [];
  const reservations =
    stack.some((x) => x.type === 'DYNAMIC') || stack.length > 1
      ? `[${stack.map((x) => `(${[x.type, x.role, ...(x.principal === undefined ? [] : [x.principal])].join(',')})`).join(',')}]`
      : '';
  const p = r.disk?.persistence;
  const volume = p === undefined ? '' : `[${p.id}:${r.disk?.volume?.containerPath ?? ''}]`;
  return reservations + volume;
}

export function formatValue(r: Resource): string {
  switch (r.type) {
    case 'SCALAR':
      return String(fromMilli(r.milli ?? 0));
    case 'RANGES':
      return `[${(r.ranges ?? []).map(([lo, hi]) => `${lo}-${hi}`).join(', ')}]`;
    case 'SET':
      return `{${(r.set ?? []).join(', ')}}`;
  }
}

/**
 * Parses the agent flag form `cpus:4;mem:8192;ports:[31000-32000];gpus(gpu):1;zones:{a,b}`.
 * Returns an error string for malformed text.
 */
export function parseResources(text: string): Resources | string {
  const out: Resource[] = [];
  for (const part of text
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const m = /^([A-Za-z0-9_.\-/]+)(?:\(([^)]*)\))?\s*:\s*(.+)$/.exec(part);
    if (m === null) return `Invalid resource '${part}'`;
    const [, name, role = '*', value] = m as unknown as [string, string, string | undefined, string];
    const parsed = parseValue(name, value.trim(), role === '' ? '*' : role);
    if (typeof parsed === 'string') return parsed;
    out.push(parsed);
  }
  return normalise(out);
}

function parseValue(name: string, value: string, role: string): Resource | string {
  if (value.startsWith('[')) {
    if (!value.endsWith(']')) return `Invalid ranges for '${name}': '${value}'`;
    const items: Range[] = [];
    for (const piece of value
      .slice(1, -1)
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')) {
      const r = /^(\d+)\s*-\s*(\d+)$/.exec(piece);
      if (r === null) return `Invalid range '${piece}' for '${name}'`;
      items.push([Number(r[1]), Number(r[2])]);
    }
    return ranges(name, items, role);
  }
  if (value.startsWith('{')) {
    if (!value.endsWith('}')) return `Invalid set for '${name}': '${value}'`;
    return set(
      name,
      value
        .slice(1, -1)
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
      role,
    );
  }
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || value === '') return `Invalid scalar for '${name}': '${value}'`;
  return scalar(name, n, role);
}
