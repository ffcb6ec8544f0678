/**
 * A list a big read writes over several turns of the event loop, read from
 * the cluster as it is written while the cluster stands still, and copied
 * (what is left of it) the moment before the cluster changes: the view
 * calls the read's `freeze` before the cluster's next input
 * (`ClusterView.beforeChange`). Either way what is written is the state of
 * the moment of the request, and a read the cluster does not interrupt
 * copies nothing.
 */
export class LiveList<T> {
  #live: Iterator<T> | undefined;
  #frozen: (() => T | undefined) | undefined;

  /** `copyRest` copies the items not read yet and returns a reader of the copies. */
  constructor(
    source: Iterable<T>,
    private readonly copyRest: (rest: Iterable<T>) => () => T | undefined,
  ) {
    this.#live = source[Symbol.iterator]();
  }

  /** The next item; undefined at the end. */
  next(): T | undefined {
    if (this.#frozen !== undefined) return this.#frozen();
    const next = this.#live!.next();
    return next.done === true ? undefined : next.value;
  }

  freeze(): void {
    if (this.#frozen !== undefined) return;
    const live = this.#live!;
    this.#frozen = this.copyRest({ [Symbol.iterator]: () => live });
    this.#live = undefined;
  }
}

/** A reader of an array's items in order. */
export function reader<T>(items: readonly T[]): () => T | undefined {
  let i = 0;
  return () => items[i++];
}

/** The items `keep` keeps, as they are read. */
export function* filtered<T>(items: Iterable<T>, keep: (item: T) => boolean): Generator<T, void, undefined> {
  for (const item of items) if (keep(item)) yield item;
}
