/**
 * Weighted Dominant Resource Fairness. A client's share is its largest
 * fraction of any scalar resource of the cluster, divided by its weight:
 *
 *   share(c) = max over r of ( allocated(c, r) / total(r) ) / weight(c)
 *
 * Clients are ordered by ascending share, ties broken by name, so the
 * order never depends on insertion or hashing.
 *
 * The order is kept, not recomputed: a client whose allocation changes is
 * taken out at its old place and put back at its new one (two binary
 * searches), so a decision costs O(log n) comparisons and one array move
 * rather than a sort of every client. Only a change of the cluster's
 * totals, which moves every share at once, re-sorts (lazily, at the next
 * read of the order).
 *
 * Clients outside the order (inactive ones) keep their allocation, so that
 * their share is right when they come back.
 */

export interface DrfClient {
  readonly name: string;
  /** Allocated scalar quantities, milli, by resource name. */
  readonly allocation: Map<string, number>;
  weight: number;
  /** The share the client is placed by; recomputed on every change. */
  share: number;
  /** Whether the client is in its sorter's order. */
  inOrder: boolean;
}

export interface Sorter<C extends DrfClient> {
  /** The clients in order, least served first. The caller must not change it. */
  order(): readonly C[];
  /** Whether `a` comes before `b`. */
  before(a: C, b: C): boolean;
}

export class DrfSorter<C extends DrfClient> implements Sorter<C> {
  #order: C[] = [];
  #stale = false;

  constructor(private readonly totals: () => ReadonlyMap<string, number>) {}

  get size(): number {
    return this.#order.length;
  }

  order(): readonly C[] {
    if (this.#stale) {
      this.#stale = false;
      for (const c of this.#order) c.share = this.share(c);
      this.#order.sort(compare);
    }
    return this.#order;
  }

  before(a: C, b: C): boolean {
    return compare(a, b) < 0;
  }

  /** Puts a client into the order. */
  activate(c: C): void {
    if (c.inOrder) return;
    c.share = this.share(c);
    c.inOrder = true;
    this.#order.splice(this.#position(c), 0, c);
  }

  /** Takes a client out of the order; it keeps its allocation. */
  deactivate(c: C): void {
    if (!c.inOrder) return;
    this.#order.splice(this.#indexOf(c), 1);
    c.inOrder = false;
  }

  /** Adds (sign 1) or takes away (sign -1) scalar quantities, and moves the client. */
  allocate(c: C, quantities: ReadonlyMap<string, number>, sign: 1 | -1): void {
    for (const [name, milli] of quantities) {
      const next = (c.allocation.get(name) ?? 0) + sign * milli;
      if (next === 0) c.allocation.delete(name);
      else c.allocation.set(name, next);
    }
    this.#reposition(c);
  }

  setWeight(c: C, weight: number): void {
    c.weight = weight;
    this.#reposition(c);
  }

  /** The cluster's totals changed: every share moves; re-sort at the next read. */
  totalsChanged(): void {
    this.#stale = true;
  }

  share(c: DrfClient): number {
    const totals = this.totals();
    let dominant = 0;
    for (const [name, milli] of c.allocation) {
      const total = totals.get(name) ?? 0;
      if (total > 0 && milli / total > dominant) dominant = milli / total;
    }
    return dominant / c.weight;
  }

  #reposition(c: C): void {
    if (!c.inOrder) {
      c.share = this.share(c);
      return;
    }
    this.#order.splice(this.#indexOf(c), 1);
    c.share = this.share(c);
    this.#order.splice(this.#position(c), 0, c);
  }

  /** Where `c` goes: the first place whose client comes after it. */
  #position(c: C): number {
    let lo = 0;
    let hi = this.#order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.#order[mid]!, c) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #indexOf(c: C): number {
    const at = this.#position(c);
    if (this.#order[at] === c) return at;
    // The order is stale (totals changed): the client may sit elsewhere.
    const found = this.#order.indexOf(c);
    if (found < 0) throw new Error(`sorter: client '${c.name}' is not in the order`);
    return found;
  }
}

function compare(a: DrfClient, b: DrfClient): number {
  return a.share - b.share || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
