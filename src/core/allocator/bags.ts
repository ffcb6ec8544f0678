/**
 * Fast paths of resource arithmetic for the allocator's hot loop. The
 * allocator's bags are normalised, and most of its sums are trivial (an
 * offer of everything free, a decline of a whole offer): these helpers see
 * that without building identity maps, and hand anything else to
 * `resources.ts`. Fields other than the quantities (`milli`, `ranges`,
 * `set`) are compared as opaque parts of a resource's identity.
 */
import { add, contains, retag, subtract, type Resource, type Resources } from '../model/resources.js';

/** The bag with every resource tagged with `role` (or untagged); the input must carry one tag. */
export function tag(bag: Resources, role: string | undefined): Resources {
  return retag(bag, role);
}

export function plus(a: Resources, b: Resources): Resources {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return add(a, b);
}

/** `a - b`, where `a` contains `b`. */
export function minus(a: Resources, b: Resources): Resources {
  return sameBag(a, b) ? [] : subtract(a, b);
}

/** Whether `a` contains `b` (both normalised). */
export function within(a: Resources, b: Resources): boolean {
  if (sameBag(a, b)) return true;
  for (const rb of b) {
    const ra = a.find((x) => sameIdentity(x, rb));
    if (ra === undefined || !holds(ra, rb)) return false;
  }
  return true;
}

function holds(a: Resource, b: Resource): boolean {
  return b.type === 'SCALAR' && a.disk === undefined ? (a.milli ?? 0) >= (b.milli ?? 0) : contains([a], [b]);
}

/** Two normalised bags with the same resources. */
export function sameBag(a: Resources, b: Resources): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
  return true;
}

function sameIdentity(a: Resource, b: Resource): boolean {
  if (a.name !== b.name || a.type !== b.type || a.role !== b.role || a.allocationRole !== b.allocationRole)
    return false;
  for (const key of Object.keys(a) as (keyof Resource)[])
    if (!QUANTITY.has(key) && !deepEqual(a[key], b[key])) return false;
  for (const key of Object.keys(b) as (keyof Resource)[])
    if (!QUANTITY.has(key) && !(key in a) && b[key] !== undefined) return false;
  return true;
}

const QUANTITY = new Set<string>(['milli', 'ranges', 'set']);

function deepEqual(x: unknown, y: unknown): boolean {
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
    return true;
  }
  const xo = x as Record<string, unknown>;
  const yo = y as Record<string, unknown>;
  for (const key of Object.keys(xo)) if (!deepEqual(xo[key], yo[key])) return false;
  for (const key of Object.keys(yo)) if (!(key in xo) && yo[key] !== undefined) return false;
  return true;
}
