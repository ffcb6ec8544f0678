/**
 * A Map and a Set for the many that stay small: a command executor has
 * one task, its container one live task, a task's update stream a few
 * uuids. Up to `SMALL` entries they live in one exact-size array (about
 * 16 B and 8 B an entry), copied on each change; past it, in a real Map
 * or Set for good. Iteration is in insertion order, as a Map's and a
 * Set's: the array keeps it, and the Map or Set is filled in that order.
 */

/** Entries kept in the array; a change copies it, so this stays small. */
const SMALL = 8;
const NO_ITEMS: readonly never[] = Object.freeze([]);

/**
 * `items` and then `more`, in a new array of exactly that length (a spread
 * or a push leaves room for 16 more, 128 B, in each of a million small lists).
 */
export function appended<T>(items: readonly T[], ...more: T[]): T[] {
  const out = new Array<T>(items.length + more.length);
  for (let i = 0; i < items.length; i++) out[i] = items[i]!;
  for (let i = 0; i < more.length; i++) out[items.length + i] = more[i]!;
  return out;
}

/**
 * `item` added to a list the caller owns: a new exact-size array while the
 * list is small, the same array grown in place once it is not (so a long
 * list costs no copy per item).
 */
export function pushed<T>(items: T[], item: T): T[] {
  if (items.length >= SMALL) {
    items.push(item);
    return items;
  }
  return appended(items, item);
}

/** `items` without the `count` items from `index`, in a new array of exactly that length. */
function without<T>(items: readonly T[], index: number, count: number): T[] {
  const out = new Array<T>(items.length - count);
  for (let i = 0; i < index; i++) out[i] = items[i]!;
  for (let i = index + count; i < items.length; i++) out[i - count] = items[i]!;
  return out;
}

export class SmallMap<K, V> implements ReadonlyMap<K, V> {
  /** Keys and values alternating, while there are at most SMALL entries. */
  #flat: readonly (K | V)[] = NO_ITEMS;
  #map: Map<K, V> | undefined;

  get size(): number {
    return this.#map?.size ?? this.#flat.length / 2;
  }

  get(key: K): V | undefined {
    if (this.#map !== undefined) return this.#map.get(key);
    const flat = this.#flat;
    for (let i = 0; i < flat.length; i += 2) if (flat[i] === key) return flat[i + 1] as V;
    return undefined;
  }

  has(key: K): boolean {
    if (this.#map !== undefined) return this.#map.has(key);
    return this.#index(key) >= 0;
  }

  set(key: K, value: V): this {
    if (this.#map !== undefined) {
      this.#map.set(key, value);
      return this;
    }
    const i = this.#index(key);
    if (i >= 0) {
      const flat = appended(this.#flat);
      flat[i + 1] = value;
      this.#flat = flat;
    } else if (this.#flat.length < 2 * SMALL) {
      this.#flat = appended<K | V>(this.#flat, key, value);
    } else {
      this.#map = new Map([...this.entries(), [key, value]]);
      this.#flat = NO_ITEMS;
    }
    return this;
  }

  delete(key: K): boolean {
    if (this.#map !== undefined) return this.#map.delete(key);
    const i = this.#index(key);
    if (i < 0) return false;
    this.#flat = this.#flat.length === 2 ? NO_ITEMS : without(this.#flat, i, 2);
    return true;
  }

  entries(): MapIterator<[K, V]> {
    if (this.#map !== undefined) return this.#map.entries();
    const flat = this.#flat;
    const out = new Array<[K, V]>(flat.length / 2);
    for (let i = 0; i < flat.length; i += 2) out[i / 2] = [flat[i] as K, flat[i + 1] as V];
    return out.values();
  }

  keys(): MapIterator<K> {
    return this.#map?.keys() ?? (this.#every(0) as K[]).values();
  }

  values(): MapIterator<V> {
    return this.#map?.values() ?? (this.#every(1) as V[]).values();
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  /**
   * The keys (`from` 0) or the values (1) as they are now, in an array of
   * their own: its iterator is what the map's would be (a snapshot, as the
   * flat list is replaced, never changed), and cheaper than a generator's.
   */
  #every(from: 0 | 1): (K | V)[] {
    const flat = this.#flat;
    const out = new Array<K | V>(flat.length / 2);
    for (let i = from; i < flat.length; i += 2) out[i >> 1] = flat[i]!;
    return out;
  }

  #index(key: K): number {
    const flat = this.#flat;
    for (let i = 0; i < flat.length; i += 2) if (flat[i] === key) return i;
    return -1;
  }
}

export class SmallSet<T> implements ReadonlySet<T> {
  #items: readonly T[] = NO_ITEMS;
  #set: Set<T> | undefined;

  constructor(items: Iterable<T> = NO_ITEMS) {
    for (const item of items) this.add(item);
  }

  get size(): number {
    return this.#set?.size ?? this.#items.length;
  }

  has(item: T): boolean {
    return this.#set?.has(item) ?? this.#items.includes(item);
  }

  add(item: T): this {
    if (this.#set !== undefined) this.#set.add(item);
    else if (this.#items.includes(item)) return this;
    else if (this.#items.length < SMALL) this.#items = appended(this.#items, item);
    else {
      this.#set = new Set([...this.#items, item]);
      this.#items = NO_ITEMS;
    }
    return this;
  }

  values(): SetIterator<T> {
    return this.#set?.values() ?? this.#items.values();
  }

  keys(): SetIterator<T> {
    return this.values();
  }

  *entries(): SetIterator<[T, T]> {
    for (const item of this.values()) yield [item, item];
  }

  forEach(callback: (value: T, key: T, set: ReadonlySet<T>) => void): void {
    for (const item of this.values()) callback(item, item, this);
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.values();
  }
}
