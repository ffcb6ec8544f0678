/**
 * What the big reads make of a task's bag of resources (its JSON text, its
 * protobuf bytes, its `/state` summary), made once per kind of bag. Tasks
 * launched in the core may share one bag object, but tasks launched through
 * HTTP each decode a bag of their own: keyed by the bag object, the memo
 * would make the text again for every task and keep hundreds of thousands
 * of entries (and their texts) alive as long as the tasks. So bags are
 * keyed by what they hold, for the usual kind (no reservation stack, no
 * disk info), in a memo of bounded size; any other bag is made afresh,
 * unless it is the bag seen just before.
 */
import type { Resource, Resources } from '../core/model/resources.js';

/** Kinds of bags kept at most; past it the memo starts again. */
const MAX_KINDS = 4096;

export class BagMemo<T> {
  readonly #byContent = new Map<string, T>();
  #last: Resources | undefined;
  #lastValue: T | undefined;

  /** `make` must depend on the bag's content only. */
  constructor(private readonly make: (bag: Resources) => T) {}

  of(bag: Resources): T {
    if (bag === this.#last) return this.#lastValue as T;
    const key = contentKey(bag);
    let value: T;
    if (key !== undefined && this.#byContent.has(key)) value = this.#byContent.get(key) as T;
    else {
      value = this.make(bag);
      if (key !== undefined) {
        if (this.#byContent.size >= MAX_KINDS) this.#byContent.clear();
        this.#byContent.set(key, value);
      }
    }
    this.#last = bag;
    this.#lastValue = value;
    return value;
  }
}

/**
 * Every field the encodings of a resource with no reservation stack and no
 * disk info read (name, type, quantity, ranges or items, role, allocation
 * role), each text with its length before it so that no two bags share a
 * key; undefined for a bag holding anything else.
 */
function contentKey(bag: Resources): string | undefined {
  let key = '';
  for (let i = 0; i < bag.length; i++) {
    const r = bag[i]!;
    if (r.disk !== undefined || (r.reservations !== undefined && r.reservations.length > 0)) return undefined;
    const allocation = r.allocationRole === undefined ? '-' : text(r.allocationRole);
    key += `${text(r.name)}${r.type}:${valueKey(r)}:${text(r.role)}${allocation};`;
  }
  return key;
}

const text = (s: string): string => `${s.length}:${s}`;

function valueKey(r: Resource): string {
  if (r.type === 'SCALAR') return String(r.milli ?? 0);
  if (r.type === 'RANGES') return (r.ranges ?? []).map(([begin, end]) => `${begin}-${end}`).join(',');
  return (r.set ?? []).map(text).join('');
}
