/**
 * Quota (upstream 1.9+ semantics): per role, limits (a ceiling) and
 * guarantees (deprecated; here they only give a role below its guarantee
 * first pick of each agent). A role's limit covers its descendants.
 *
 *   consumption(role) = unreserved resources allocated (offered or used)
 *                       to the role or a descendant
 *                     + resources reserved to the role or a descendant,
 *                       allocated or not
 *
 * which is the role's allocation plus its reservations that are not
 * allocated. Reserved resources are consumed whether offered or not, so
 * offering them never moves consumption; only unreserved scalars do, and
 * those are what an offer is cut down to the headroom:
 *
 *   headroom(role, r) = min over the role and its ancestors with a limit on r
 *                       of ( limit(r) - consumption(r) )
 *
 * Quantities are scalar milli by resource name; consumption is kept per
 * role with its descendants summed in, updated as allocations and
 * reservations change, so a read or a headroom is a few map look-ups.
 */
import type { Resource, Resources } from '../model/resources.js';

export interface QuotaConfig {
  /** Resource name -> milli. */
  readonly limits: ReadonlyMap<string, number>;
  readonly guarantees: ReadonlyMap<string, number>;
}

export class QuotaBooks {
  readonly #configs = new Map<string, QuotaConfig>();
  /** Role -> consumption of the role and its descendants. */
  readonly #consumed = new Map<string, Map<string, number>>();
  readonly #lineage = new Map<string, readonly string[]>();
  /** Role -> the role and ancestors with limits; cleared when a quota changes. */
  readonly #limiting = new Map<string, readonly string[]>();
  /** Number of roles with limits, so that the common case skips all work. */
  #limited = 0;
  #guaranteed = 0;

  set(role: string, config: QuotaConfig): void {
    this.remove(role);
    this.#limiting.clear();
    if (config.limits.size === 0 && config.guarantees.size === 0) return;
    this.#configs.set(role, config);
    if (config.limits.size > 0) this.#limited++;
    if (config.guarantees.size > 0) this.#guaranteed++;
  }

  remove(role: string): void {
    const old = this.#configs.get(role);
    if (old === undefined) return;
    this.#limiting.clear();
    if (old.limits.size > 0) this.#limited--;
    if (old.guarantees.size > 0) this.#guaranteed--;
    this.#configs.delete(role);
  }

  get(role: string): QuotaConfig | undefined {
    return this.#configs.get(role);
  }

  roles(): string[] {
    return [...this.#configs.keys()].sort();
  }

  get hasGuarantees(): boolean {
    return this.#guaranteed > 0;
  }

  /** Consumption of a role and its descendants, milli by name (a copy). */
  consumption(role: string): Map<string, number> {
    return new Map(this.#consumed.get(role) ?? []);
  }

  /** Adds (sign 1) or takes away (sign -1) consumption of `role`, and of its ancestors. */
  charge(role: string, quantities: ReadonlyMap<string, number>, sign: 1 | -1): void {
    if (quantities.size === 0) return;
    for (const r of this.lineage(role)) {
      let q = this.#consumed.get(r);
      if (q === undefined) this.#consumed.set(r, (q = new Map()));
      for (const [name, milli] of quantities) {
        const next = (q.get(name) ?? 0) + sign * milli;
        if (next === 0) q.delete(name);
        else q.set(name, next);
      }
      if (q.size === 0) this.#consumed.delete(r);
    }
  }

  /** Whether some guarantee of the role is not met by its consumption. */
  belowGuarantee(role: string): boolean {
    const config = this.#configs.get(role);
    if (config === undefined) return false;
    const consumed = this.#consumed.get(role);
    for (const [name, milli] of config.guarantees) if ((consumed?.get(name) ?? 0) < milli) return true;
    return false;
  }

  /**
   * The offer cut down to the headroom of the role (and of its ancestors):
   * the same bag when no limit applies, else a new one. `cut` says whether
   * a limit took something away.
   */
  fit(role: string, offer: Resources): { readonly offer: Resources; readonly cut: boolean } {
    if (this.#limited === 0) return { offer, cut: false };
    let limiting = this.#limiting.get(role);
    if (limiting === undefined) {
      limiting = this.lineage(role).filter((r) => (this.#configs.get(r)?.limits.size ?? 0) > 0);
      this.#limiting.set(role, limiting);
    }
    if (limiting.length === 0) return { offer, cut: false };
    let cut = false;
    const out: Resource[] = [];
    for (const r of offer) {
      const room = r.type === 'SCALAR' && r.role === '*' ? this.#headroom(limiting, r.name) : Infinity;
      if (room >= (r.milli ?? Infinity)) out.push(r);
      else {
        cut = true;
        if (room > 0) out.push({ ...r, milli: room });
      }
    }
    return cut ? { offer: out, cut } : { offer, cut };
  }

  /** The role, then its ancestors: `a/b/c`, `a/b`, `a`. */
  lineage(role: string): readonly string[] {
    let out = this.#lineage.get(role);
    if (out === undefined) {
      const parts = role.split('/');
      out = parts.map((_, i) => parts.slice(0, parts.length - i).join('/'));
      this.#lineage.set(role, out);
    }
    return out;
  }

  #headroom(limiting: readonly string[], name: string): number {
    let room = Infinity;
    for (const role of limiting) {
      const limit = this.#configs.get(role)!.limits.get(name);
      if (limit === undefined) continue;
      room = Math.min(room, limit - (this.#consumed.get(role)?.get(name) ?? 0));
    }
    return room;
  }
}

/** Unreserved scalar quantities of a bag: what allocating it charges to quota. */
export function unreservedScalars(bag: Resources): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of bag) {
    if (r.type === 'SCALAR' && r.role === '*') out.set(r.name, (out.get(r.name) ?? 0) + (r.milli ?? 0));
  }
  return out;
}

/** Reserved scalar quantities by reservation role: what a total charges to quota. */
export function reservedScalars(bag: Resources): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const r of bag) {
    if (r.type !== 'SCALAR' || r.role === '*') continue;
    let q = out.get(r.role);
    if (q === undefined) out.set(r.role, (q = new Map()));
    q.set(r.name, (q.get(r.name) ?? 0) + (r.milli ?? 0));
  }
  return out;
}
