/**
 * Conversions shared by every endpoint: resources, attributes, labels,
 * commands and durations between wire messages and core types.
 */
import {
  fromMilli,
  normalise,
  toMilli,
  type DiskInfo,
  type ReservationInfo,
  type Resource,
  type Resources,
} from '../core/model/resources.js';
import { rangesOverlapWithin, type Range } from '../core/model/ranges.js';
import type { Attribute, CommandSpec, Label } from '../core/model/types.js';
import type { mesos } from './generated/types.js';

type W = mesos.v1.Resource;

/**
 * Bags of plain scalars (unreserved, no disk, no allocation) as read from
 * the wire, by their names and values: the tasks of a launch mostly ask for
 * the same few, and one shared read-only bag per kind keeps each task's
 * record small and lets the books reuse what they worked out for it
 * (bags are never changed). Bounded: emptied when full.
 */
const PLAIN_BAGS = new Map<string, Resources>();
const PLAIN_BAGS_MAX = 4096;

/** The key of a list of plain scalars, or undefined when the list holds anything else. */
function plainKey(list: readonly mesos.v1.Resource[]): string | undefined {
  let key = '';
  for (const r of list) {
    if (
      r.type !== 'SCALAR' ||
      (r.reservations?.length ?? 0) > 0 ||
      r.reservation !== undefined ||
      r.disk !== undefined ||
      r.allocation_info !== undefined
    )
      return undefined;
    if (r.role !== undefined && r.role !== '*') return undefined;
    const value = r.scalar?.value;
    if (typeof value !== 'number') return undefined;
    // Length-prefixed names: no two lists share a key.
    key += `${r.name.length}:${r.name}=${value};`;
  }
  return key;
}

/**
 * Wire lists of plain scalars (each resource exactly `name`, `type`
 * SCALAR, `scalar.value` and perhaps `role` `*`), one shared read-only list
 * per kind: a task keeps its TaskInfo's list to render it back, and a
 * launch's tasks mostly send the same few. Other lists are kept as given.
 * Bounded: emptied when full.
 */
const WIRE_LISTS = new Map<string, mesos.v1.Resource[]>();

export function sharedWireResources(list: mesos.v1.Resource[]): mesos.v1.Resource[] {
  let key = '';
  for (const r of list) {
    const part = plainWireKey(r);
    if (part === undefined) return list;
    key += part;
  }
  let shared = WIRE_LISTS.get(key);
  if (shared === undefined) {
    if (WIRE_LISTS.size >= PLAIN_BAGS_MAX) WIRE_LISTS.clear();
    shared = Object.freeze(
      list.map((r) => Object.freeze({ ...r, scalar: Object.freeze({ ...r.scalar! }) })),
    ) as mesos.v1.Resource[];
    WIRE_LISTS.set(key, shared);
  }
  return shared;
}

/** The key of one plain scalar wire resource, or undefined when it holds anything more. */
function plainWireKey(r: mesos.v1.Resource): string | undefined {
  if (
    r.type !== 'SCALAR' ||
    r.scalar === undefined ||
    typeof r.scalar.value !== 'number' ||
    Object.is(r.scalar.value, -0)
  )
    return undefined;
  if (r.role !== undefined && r.role !== '*') return undefined;
  for (const field in r)
    if (field !== 'name' && field !== 'type' && field !== 'scalar' && field !== 'role') return undefined;
  for (const field in r.scalar) if (field !== 'value') return undefined;
  // Length-prefixed names: no two lists share a key; the role's presence is part of it.
  return `${r.name.length}:${r.name}=${r.scalar.value}${r.role === undefined ? '' : '*'};`;
}

/** A resource list from the wire, or the reason it is invalid. */
export function resourcesFromWire(list: readonly mesos.v1.Resource[] | undefined): Resources | string {
  const key = list === undefined ? undefined : plainKey(list);
  if (key === undefined) return readResources(list);
  let bag = PLAIN_BAGS.get(key);
  if (bag !== undefined) return bag;
  const read = readResources(list);
  if (typeof read === 'string') return read;
  if (PLAIN_BAGS.size >= PLAIN_BAGS_MAX) PLAIN_BAGS.clear();
  PLAIN_BAGS.set(key, (bag = read));
  return bag;
}

function readResources(list: readonly mesos.v1.Resource[] | undefined): Resources | string {
  const out: Resource[] = [];
  // A volume is one unit: two entries of one volume (role and persistence id) are refused, not added up.
  const volumes = new Set<string>();
  for (const r of list ?? []) {
    const reserved = reservationFromWire(r);
    if (typeof reserved === 'string') return `Invalid resource '${r.name}': ${reserved}`;
    const disk = diskFromWire(r.disk);
    if (typeof disk === 'string') return `Invalid resource '${r.name}': ${disk}`;
    const volume = disk?.persistence === undefined ? undefined : `${reserved.role}\u0000${disk.persistence.id}`;
    if (volume !== undefined && volumes.has(volume))
      return `Invalid resource '${r.name}': persistent volume '${disk!.persistence!.id}' is listed twice`;
    if (volume !== undefined) volumes.add(volume);
    const base = {
      name: r.name,
      ...reserved,
      ...(disk === undefined ? {} : { disk }),
      ...(r.allocation_info?.role === undefined ? {} : { allocationRole: r.allocation_info.role }),
    };
    switch (r.type) {
      case 'SCALAR': {
        const value = r.scalar?.value;
        if (value === undefined || !Number.isFinite(value) || value < 0) {
          return `Invalid scalar resource '${r.name}': ${value ?? 'missing value'}`;
        }
        // Three decimal digits are kept, as upstream does: a positive amount that rounds to nothing is refused, not dropped.
        if (value !== 0 && toMilli(value) <= 0)
          return `Invalid scalar resource '${r.name}': ${value} is below 0.001 (value <= 0)`;
        out.push({ ...base, type: 'SCALAR', milli: toMilli(value) });
        break;
      }
      case 'RANGES': {
        const ranges = (r.ranges?.range ?? []).map((x) => [x.begin, x.end] as const);
        if (ranges.some(([b, e]) => b > e)) return `Invalid ranges resource '${r.name}'`;
        // Within one resource list a port is claimed once: overlaps would be counted twice.
        const clash = rangesOverlapWithin([...ranges, ...sameRanges(out, base)]);
        if (clash !== undefined) return `Invalid ranges resource '${r.name}': ${clash}`;
        out.push({ ...base, type: 'RANGES', ranges });
        break;
      }
      case 'SET': {
        const items = [...(r.set?.item ?? []), ...sameSet(out, base)];
        if (new Set(items).size !== items.length) return `Invalid set resource '${r.name}': an item is repeated`;
        out.push({ ...base, type: 'SET', set: [...new Set(r.set?.item ?? [])].sort() });
        break;
      }
      default:
        return `Unsupported resource type '${String(r.type)}' for '${r.name}'`;
    }
  }
  return normalise(out);
}

/** Ranges already listed for the same resource (name and role) earlier in the list. */
function sameRanges(out: readonly Resource[], base: { name: string; role: string }): Range[] {
  return out
    .filter((r) => r.type === 'RANGES' && r.name === base.name && r.role === base.role)
    .flatMap((r) => [...(r.ranges ?? [])]);
}

function sameSet(out: readonly Resource[], base: { name: string; role: string }): string[] {
  return out
    .filter((r) => r.type === 'SET' && r.name === base.name && r.role === base.role)
    .flatMap((r) => [...(r.set ?? [])]);
}

/**
 * The reservation stack of a wire resource, as upstream upgrades it: with
 * `reservations` as given; else from the deprecated `role` (`*`:
 * unreserved) and singular `reservation` (set: DYNAMIC, unset: STATIC).
 */
function reservationFromWire(r: W): { role: string; reservations?: ReservationInfo[] } | string {
  const list = r.reservations ?? [];
  if (list.length === 0) {
    const role = r.role ?? '*';
    if (role === '*') return r.reservation === undefined ? { role } : "'reservation' is set for an unreserved resource";
    const dynamic = r.reservation;
    if (dynamic === undefined) return { role, reservations: [{ type: 'STATIC', role }] };
    return { role, reservations: [{ type: 'DYNAMIC', role, ...principalAndLabels(dynamic) }] };
  }
  const stack: ReservationInfo[] = [];
  for (const x of list) {
    if (x.type !== 'STATIC' && x.type !== 'DYNAMIC') return "'ReservationInfo.type' must be STATIC or DYNAMIC";
    if (x.role === undefined) return "'ReservationInfo.role' must be set";
    stack.push({ type: x.type, role: x.role, ...principalAndLabels(x) });
  }
  const role = stack[stack.length - 1]!.role;
  // An echo of the pre-refinement form may repeat the role; a different one contradicts the stack.
  if (r.role !== undefined && r.role !== '*' && r.role !== role)
    return "'Resource.role' differs from the role of its last reservation";
  return { role, reservations: stack };
}

function principalAndLabels(x: mesos.v1.Resource.ReservationInfo): {
  principal?: string;
  labels?: ReservationInfo['labels'];
} {
  const labels = labelsFromWire(x.labels);
  return {
    ...(x.principal === undefined ? {} : { principal: x.principal }),
    ...(labels.length === 0 ? {} : { labels }),
  };
}

/** Persistent volumes only: disks from other sources (mounts, paths) are not modelled. */
function diskFromWire(d: mesos.v1.Resource.DiskInfo | undefined): DiskInfo | undefined | string {
  if (d === undefined) return undefined;
  if (d.source !== undefined) return "'DiskInfo.source' is not supported";
  if (d.volume?.host_path !== undefined) return "Expecting 'host_path' to be unset for persistent volume";
  if (d.persistence === undefined && d.volume === undefined) return 'DiskInfo is set but empty';
  const p = d.persistence;
  return {
    ...(p === undefined
      ? {}
      : { persistence: { id: p.id, ...(p.principal === undefined ? {} : { principal: p.principal }) } }),
    ...(d.volume === undefined
      ? {}
      : { volume: { containerPath: d.volume.container_path, mode: d.volume.mode ?? 'RW' } }),
  };
}

/**
 * Resources for the wire, in the form the reader understands: with
 * RESERVATION_REFINEMENT the `reservations` stack and no `role`; without
 * it the pre-refinement form, `role` always set (`*` when unreserved) and
 * the singular `reservation` for a dynamic reservation.
 */
export function resourcesToWire(bag: Resources, refinement = false): W[] {
  return bag.map((r) => resourceToWire(r, refinement));
}

export function resourceToWire(r: Resource, refinement = false): W {
  const base = { name: r.name, type: r.type };
  const value =
    r.type === 'SCALAR'
      ? { scalar: { value: fromMilli(r.milli ?? 0) } }
      : r.type === 'RANGES'
        ? { ranges: { range: (r.ranges ?? []).map(([begin, end]) => ({ begin, end })) } }
        : { set: { item: [...(r.set ?? [])] } };
  return {
    ...base,
    ...value,
    ...(refinement ? {} : { role: r.role }),
    ...(r.allocationRole === undefined ? {} : { allocation_info: { role: r.allocationRole } }),
    ...reservationToWire(r, refinement),
    ...(r.disk === undefined ? {} : { disk: diskToWire(r.disk) }),
  };
}

function reservationToWire(r: Resource, refinement: boolean): Partial<W> {
  const stack = r.reservations ?? [];
  const last = stack[stack.length - 1];
  if (last === undefined) return {};
  const extra = (x: ReservationInfo) => ({
    ...(x.principal === undefined ? {} : { principal: x.principal }),
    ...(x.labels === undefined ? {} : { labels: labelsToWire(x.labels)! }),
  });
  if (refinement) return { reservations: stack.map((x) => ({ type: x.type, role: x.role, ...extra(x) })) };
  return last.type === 'DYNAMIC' ? { reservation: extra(last) } : {};
}

function diskToWire(d: DiskInfo): mesos.v1.Resource.DiskInfo {
  return {
    ...(d.persistence === undefined ? {} : { persistence: { ...d.persistence } }),
    ...(d.volume === undefined ? {} : { volume: { mode: d.volume.mode, container_path: d.volume.containerPath } }),
  };
}

export function attributeFromWire(a: mesos.v1.Attribute): Attribute {
  switch (a.type) {
    case 'SCALAR':
      return { name: a.name, type: 'SCALAR', milli: toMilli(a.scalar?.value ?? 0) };
    case 'RANGES':
      return { name: a.name, type: 'RANGES', ranges: (a.ranges?.range ?? []).map((x) => [x.begin, x.end] as const) };
    case 'SET':
      return { name: a.name, type: 'SET', set: a.set?.item ?? [] };
    default:
      return { name: a.name, type: 'TEXT', text: a.text?.value ?? '' };
  }
}

export function attributeToWire(a: Attribute): mesos.v1.Attribute {
  switch (a.type) {
    case 'SCALAR':
      return { name: a.name, type: 'SCALAR', scalar: { value: fromMilli(a.milli ?? 0) } };
    case 'RANGES':
      return {
        name: a.name,
        type: 'RANGES',
        ranges: { range: (a.ranges ?? []).map(([begin, end]) => ({ begin, end })) },
      };
    case 'SET':
      return { name: a.name, type: 'SET', set: { item: [...(a.set ?? [])] } };
    case 'TEXT':
      return { name: a.name, type: 'TEXT', text: { value: a.text ?? '' } };
  }
}

/**
 * Parses the agent flag form `rack:r1;zone:z1;weight:2.5;slots:[1-4];tags:{a,b}`:
 * numbers are SCALAR, `[..]` RANGES, `{..}` SET, anything else TEXT.
 */
export function parseAttributes(text: string): Attribute[] | string {
  const out: Attribute[] = [];
  for (const part of text
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const i = part.indexOf(':');
    if (i <= 0) return `Invalid attribute '${part}': expected name:value`;
    const name = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    const range = /^\[(.*)\]$/.exec(value);
    const set = /^\{(.*)\}$/.exec(value);
    if (range !== null) {
      const ranges: [number, number][] = [];
      for (const piece of range[1]!
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '')) {
        const m = /^(\d+)-(\d+)$/.exec(piece);
        if (m === null) return `Invalid range '${piece}' in attribute '${name}'`;
        ranges.push([Number(m[1]), Number(m[2])]);
      }
      out.push({ name, type: 'RANGES', ranges });
    } else if (set !== null) {
      out.push({
        name,
        type: 'SET',
        set: set[1]!
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p !== ''),
      });
    } else if (value !== '' && Number.isFinite(Number(value))) {
      out.push({ name, type: 'SCALAR', milli: toMilli(Number(value)) });
    } else {
      out.push({ name, type: 'TEXT', text: value });
    }
  }
  return out;
}

const NO_LABELS: Label[] = Object.freeze([]) as unknown as Label[];

export function labelsFromWire(labels: mesos.v1.Labels | undefined): Label[] {
  const list = labels?.labels;
  if (list === undefined || list.length === 0) return NO_LABELS;
  return list.map((l) => (l.value === undefined ? { key: l.key } : { key: l.key, value: l.value }));
}

export function labelsToWire(labels: readonly Label[]): mesos.v1.Labels | undefined {
  return labels.length === 0 ? undefined : { labels: labels.map((l) => ({ ...l })) };
}

/** A command as the core runs it and as the task keeps it to render back. */
export interface CommandParts {
  readonly spec: CommandSpec;
  readonly wire: mesos.v1.CommandInfo;
}

/** Plain commands (a value, perhaps `shell`, nothing more), both parts shared read-only: tasks often repeat theirs. */
const plainCommands = new Map<string, CommandParts>();

export function commandParts(c: mesos.v1.CommandInfo): CommandParts {
  const key = plainCommandKey(c);
  if (key === undefined) return { spec: commandSpecOf(c), wire: c };
  let parts = plainCommands.get(key);
  if (parts === undefined) {
    if (plainCommands.size >= PLAIN_BAGS_MAX) plainCommands.clear();
    parts = { spec: Object.freeze(commandSpecOf(c)), wire: Object.freeze({ ...c }) };
    plainCommands.set(key, parts);
  }
  return parts;
}

export function commandFromWire(c: mesos.v1.CommandInfo | undefined): CommandSpec | undefined {
  return c === undefined ? undefined : commandParts(c).spec;
}

function commandSpecOf(c: mesos.v1.CommandInfo): CommandSpec {
  const user = typeof c.user === 'string' ? { user: c.user } : {};
  return {
    shell: c.shell ?? true,
    ...(c.value === undefined ? {} : { value: c.value }),
    arguments: c.arguments ?? [],
    ...user,
  };
}

/** Longer commands are kept as sent: the cache holds at most this much text per entry. */
const SHARED_COMMAND_MAX = 1024;

/** The key of a CommandInfo of a value and perhaps `shell`, nothing more (no arguments, uris, environment, user). */
function plainCommandKey(c: mesos.v1.CommandInfo): string | undefined {
  if (typeof c.value !== 'string' || c.value.length > SHARED_COMMAND_MAX) return undefined;
  for (const field in c) if (field !== 'value' && field !== 'shell') return undefined;
  return `${c.shell === undefined ? '-' : c.shell ? 't' : 'f'}${c.value}`;
}

export function durationMs(d: mesos.v1.DurationInfo | undefined): number | undefined {
  return d === undefined ? undefined : Math.max(0, Math.round(d.nanoseconds / 1e6));
}
