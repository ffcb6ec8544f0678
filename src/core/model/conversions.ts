/**
 * Reservations and persistent volumes as the offer operations change them:
 * RESERVE pushes a reservation on a resource's stack and UNRESERVE pops the
 * last one; CREATE gives disk a volume and DESTROY takes it off. Each
 * operation is a list of conversions, applied to a bag in order.
 */
import { add, contains, format, subtract, type Resource, type Resources } from './resources.js';

export function isReserved(r: Resource): boolean {
  return (r.reservations?.length ?? 0) > 0;
}

/** Reserved, and the last reservation is dynamic (it can be unreserved). */
export function isDynamicallyReserved(r: Resource): boolean {
  const stack = r.reservations ?? [];
  return stack.length > 0 && stack[stack.length - 1]!.type === 'DYNAMIC';
}

export function isPersistentVolume(r: Resource): boolean {
  return r.disk?.persistence !== undefined;
}

/** The resource with its last reservation taken off: what a RESERVE consumed, what an UNRESERVE gives back. */
export function popReservation(r: Resource): Resource {
  const stack = (r.reservations ?? []).slice(0, -1);
  const { reservations: _drop, ...rest } = r;
  const role = stack.length === 0 ? '*' : stack[stack.length - 1]!.role;
  return stack.length === 0 ? { ...rest, role } : { ...rest, role, reservations: stack };
}

/** The resource without its volume: what a CREATE consumed, what a DESTROY gives back. */
export function withoutVolume(r: Resource): Resource {
  const { disk: _drop, ...rest } = r;
  return rest;
}

/** One step of an operation: `consumed` leaves a bag, `converted` takes its place. */
export interface Conversion {
  readonly consumed: Resources;
  readonly converted: Resources;
}

/** The bag after the conversions, in order; the reason when one does not apply. */
export function applyConversions(bag: Resources, conversions: readonly Conversion[]): Resources | string {
  let out = bag;
  for (const { consumed, converted } of conversions) {
    if (!contains(out, consumed)) return `${format(out)} does not contain ${format(consumed)}`;
    out = add(subtract(out, consumed), converted);
  }
  return out;
}
