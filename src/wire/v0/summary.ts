/**
 * Building blocks of the v0 read-only endpoints: the resources summary
 * object, the attributes object, the full Resource in protobuf JSON, labels
 * and times. Everything returned is JSON-able; values upstream types as
 * doubles are wrapped in `Double`, so `toV0Json` can write them as
 * upstream does (`4.0`, not `4`).
 */
import {
  formatValue,
  fromMilli,
  type DiskInfo,
  type ReservationInfo,
  type Resource,
  type Resources,
} from '../../core/model/resources.js';
import { normaliseRanges, type Range } from '../../core/model/ranges.js';
import type { Attribute, Label } from '../../core/model/types.js';
import { Double } from './json.js';

export type Json = null | boolean | number | string | Double | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** These four are always present in a summary, 0 when the bag has none. */
const ALWAYS_PRESENT = ['cpus', 'gpus', 'mem', 'disk'] as const;

/** Epoch milliseconds as the double seconds the endpoints print. */
export function secondsOf(ms: number): Double {
  return new Double(ms / 1000);
}

/**
 * The summary object: quantities by name over all roles and allocation
 * roles together. Scalars are doubles (mem and disk in MB), ranges
 * `"[31000-32000, 32005-32010]"`, sets `"{a, b}"`. Order: the four fixed
 * names, then other scalars, ranges and sets, each sorted by name, so equal
 * bags print the same.
 */
export function resourcesSummary(bag: Resources): Record<string, Double | string> {
  const scalars = new Map<string, number>(ALWAYS_PRESENT.map((name) => [name, 0]));
  const ranges = new Map<string, Range[]>();
  const sets = new Map<string, string[]>();
  for (const r of bag) {
    switch (r.type) {
      case 'SCALAR':
        scalars.set(r.name, (scalars.get(r.name) ?? 0) + (r.milli ?? 0));
        break;
      case 'RANGES':
        ranges.set(r.name, [...(ranges.get(r.name) ?? []), ...(r.ranges ?? [])]);
        break;
      case 'SET':
        sets.set(r.name, [...(sets.get(r.name) ?? []), ...(r.set ?? [])]);
        break;
    }
  }
  const out: Record<string, Double | string> = {};
  for (const name of ALWAYS_PRESENT) out[name] = new Double(fromMilli(scalars.get(name) ?? 0));
  for (const name of extraNames(scalars)) out[name] = new Double(fromMilli(scalars.get(name) ?? 0));
  for (const name of extraNames(ranges)) {
    out[name] = formatValue({ name, type: 'RANGES', ranges: normaliseRanges(ranges.get(name) ?? []), role: '*' });
  }
  for (const name of extraNames(sets)) {
    out[name] = formatValue({ name, type: 'SET', set: [...new Set(sets.get(name) ?? [])].sort(), role: '*' });
  }
  return out;
}

function extraNames(byName: ReadonlyMap<string, unknown>): string[] {
  const fixed = new Set<string>(ALWAYS_PRESENT);
  return [...byName.keys()].filter((name) => !fixed.has(name)).sort();
}

/** `name -> double | "[b-e, ...]" | "{x, y}" | "text"`, in the agent's order. */
export function attributesObject(attrs: readonly Attribute[]): Record<string, Double | string> {
  const out: Record<string, Double | string> = {};
  for (const a of attrs) {
    switch (a.type) {
      case 'SCALAR':
        out[a.name] = new Double(fromMilli(a.milli ?? 0));
        break;
      case 'RANGES':
        out[a.name] = formatValue({ name: a.name, type: 'RANGES', ranges: a.ranges ?? [], role: '*' });
        break;
      case 'SET':
        out[a.name] = formatValue({ name: a.name, type: 'SET', set: a.set ?? [], role: '*' });
        break;
      case 'TEXT':
        out[a.name] = a.text ?? '';
        break;
    }
  }
  return out;
}

/**
 * A Resource in protobuf JSON, in the endpoint format the `*_full` fields
 * use: both forms at once, the deprecated `role` (`*` when unreserved) and
 * singular `reservation` (for a dynamic reservation: its principal and
 * labels) beside the `reservations` stack. Fields follow the declaration
 * order of the message.
 */
export function resourceJson(r: Resource): JsonObject {
  const stack = r.reservations ?? [];
  const last = stack[stack.length - 1];
  return {
    name: r.name,
    type: r.type,
    ...valueJson(r),
    role: r.role,
    ...(r.allocationRole === undefined ? {} : { allocation_info: { role: r.allocationRole } }),
    ...(last?.type === 'DYNAMIC' ? { reservation: reservationJson(last, false) } : {}),
    ...(stack.length === 0 ? {} : { reservations: stack.map((x) => reservationJson(x, true)) }),
    ...(r.disk === undefined ? {} : { disk: diskJson(r.disk) }),
  };
}

/** Declaration order: type, role, principal, labels; the singular form has no type or role. */
function reservationJson(x: ReservationInfo, withRole: boolean): JsonObject {
  return {
    ...(withRole ? { type: x.type, role: x.role } : {}),
    ...(x.principal === undefined ? {} : { principal: x.principal }),
    ...(x.labels === undefined || x.labels.length === 0 ? {} : { labels: { labels: labelsJson(x.labels) } }),
  };
}

function diskJson(d: DiskInfo): JsonObject {
  const p = d.persistence;
  return {
    ...(p === undefined
      ? {}
      : { persistence: { id: p.id, ...(p.principal === undefined ? {} : { principal: p.principal }) } }),
    ...(d.volume === undefined ? {} : { volume: { mode: d.volume.mode, container_path: d.volume.containerPath } }),
  };
}

/** Empty repeated fields are left out, as protobuf JSON does. */
function valueJson(r: Resource): JsonObject {
  switch (r.type) {
    case 'SCALAR':
      return { scalar: { value: new Double(fromMilli(r.milli ?? 0)) } };
    case 'RANGES': {
      const range = (r.ranges ?? []).map(([begin, end]) => ({ begin, end }));
      return { ranges: range.length === 0 ? {} : { range } };
    }
    case 'SET': {
      const item = [...(r.set ?? [])];
      return { set: item.length === 0 ? {} : { item } };
    }
  }
}

/** Labels as `[{key, value}]`; `value` only when set. */
export function labelsJson(labels: readonly Label[]): JsonObject[] {
  return labels.map((l): JsonObject => (l.value === undefined ? { key: l.key } : { key: l.key, value: l.value }));
}
