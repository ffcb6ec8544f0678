/**
 * Dominant Resource Fairness. A client's share is its largest fraction of
 * any scalar resource of the cluster, divided by its weight:
 *
 *   share(c) = max over r of ( allocated(c, r) / total(r) ) / weight(c)
 *
 * Clients are ordered by ascending share, ties broken by name, so the
 * order never depends on insertion or hashing.
 */

export interface Sorter {
  /** Client names, least served first. */
  sort(clients: Iterable<string>, allocationOf: (client: string) => ReadonlyMap<string, number>): string[];
}

export class DrfSorter implements Sorter {
  constructor(
    private readonly totals: () => ReadonlyMap<string, number>,
    private readonly weightOf: (client: string) => number = () => 1,
  ) {}

  share(allocation: ReadonlyMap<string, number>, client: string): number {
    const totals = this.totals();
    let dominant = 0;
    for (const [name, milli] of allocation) {
      const total = totals.get(name) ?? 0;
      if (total > 0) dominant = Math.max(dominant, milli / total);
    }
    return dominant / this.weightOf(client);
  }

  sort(clients: Iterable<string>, allocationOf: (client: string) => ReadonlyMap<string, number>): string[] {
    return [...clients]
      .map((name) => ({ name, share: this.share(allocationOf(name), name) }))
      .sort((a, b) => a.share - b.share || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((c) => c.name);
  }
}
