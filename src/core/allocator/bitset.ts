/**
 * A growable set of small integers, one bit each: the frameworks of a role
 * are numbered, and "which of them may take this agent" becomes a few word
 * operations instead of a walk over every framework.
 */
export class BitSet {
  words = new Uint32Array(1);
  #count = 0;

  get count(): number {
    return this.#count;
  }

  has(i: number): boolean {
    return ((this.words[i >>> 5] ?? 0) & (1 << (i & 31))) !== 0;
  }

  add(i: number): void {
    const w = i >>> 5;
    if (w >= this.words.length) {
      const grown = new Uint32Array(Math.max(w + 1, this.words.length * 2));
      grown.set(this.words);
      this.words = grown;
    }
    const bit = 1 << (i & 31);
    if ((this.words[w]! & bit) === 0) {
      this.words[w]! |= bit;
      this.#count++;
    }
  }

  delete(i: number): void {
    const w = i >>> 5;
    const bit = 1 << (i & 31);
    if (w < this.words.length && (this.words[w]! & bit) !== 0) {
      this.words[w]! &= ~bit;
      this.#count--;
    }
  }
}

/**
 * The members of `of` in none of `minus`, up to `limit` of them (then
 * undefined: too many to be worth listing).
 */
export function difference(of: BitSet, minus: readonly BitSet[], limit: number): number[] | undefined {
  const out: number[] = [];
  const words = of.words;
  for (let w = 0; w < words.length; w++) {
    let bits = words[w]!;
    for (const m of minus) bits &= ~(m.words[w] ?? 0);
    while (bits !== 0) {
      const low = bits & -bits;
      out.push(w * 32 + (31 - Math.clz32(low)));
      if (out.length > limit) return undefined;
      bits ^= low;
    }
  }
  return out;
}

/** Whether every member of `of` is in some set of `minus` (no allocation: the common "all refused" case). */
export function coveredBy(of: BitSet, minus: readonly BitSet[]): boolean {
  const words = of.words;
  for (let w = 0; w < words.length; w++) {
    let bits = words[w]!;
    for (const m of minus) bits &= ~(m.words[w] ?? 0);
    if (bits !== 0) return false;
  }
  return true;
}
