/**
 * Seeded randomness. One root seed; every component takes a named fork, so
 * an extra draw in one subsystem (say `allocator`) leaves the streams of the
 * others (`ids`, `network`, `workload`) unchanged. The generator is
 * xoshiro128**, seeded through splitmix32 from a 32-bit hash of
 * `seed/name`: small, fast and pinned here so runs replay across versions.
 */

/**
 * A stream of draws. The xoshiro128** state is four int32 fields, not a
 * typed array: a stream is a small object of its own (an executor keeps
 * one for the uuids of its updates), and int32 values are stored unboxed.
 */
export class RngStream {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  constructor(seedText: string) {
    let x = hashString(seedText);
    const s: number[] = [];
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0;
      s.push(splitmix32(x) | 0);
    }
    [this.#s0, this.#s1, this.#s2, this.#s3] = s as [number, number, number, number];
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const s1 = this.#s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    const s2 = this.#s2 ^ this.#s0;
    const s3 = this.#s3 ^ s1;
    this.#s1 = s1 ^ s2;
    this.#s0 = this.#s0 ^ s3;
    this.#s2 = s2 ^ t;
    this.#s3 = rotl(s3, 11) | 0;
    return result;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    this.#fill(out, n);
    return out;
  }

  /** `n` bytes as lower-case hex, the same draws and text as `toHex(bytes(n))`. */
  hex(n: number): string {
    if (n > SCRATCH.length) return toHex(this.bytes(n));
    this.#fill(SCRATCH, n);
    return hexOf(SCRATCH, n, NO_DASHES);
  }

  /** A version-4 UUID in its canonical text form. */
  uuid(): string {
    const b = SCRATCH;
    this.#fill(b, 16);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    // 8-4-4-4-12 hex digits: a dash before bytes 4, 6, 8 and 10.
    return hexOf(b, 16, UUID_DASHES);
  }

  /** Fisher-Yates shuffle in place, through this stream only. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  /** The first `n` bytes of `out` from the next draws, each draw's bytes low first. */
  #fill(out: Uint8Array, n: number): void {
    for (let i = 0; i < n; i += 4) {
      const v = this.nextU32();
      for (let j = 0; j < 4 && i + j < n; j++) out[i + j] = (v >>> (8 * j)) & 0xff;
    }
  }
}

/** The root stream of a seed and its named forks. */
export class Rng extends RngStream {
  readonly #seed: string;

  constructor(seed: string | number, name = 'root') {
    const text = `${seed}/${name}`;
    super(text);
    this.#seed = text;
  }

  /** An independent stream for `name`, stable whatever else draws. */
  fork(name: string): Rng {
    return new Rng(this.#seed, name);
  }

  /**
   * The stream of `fork(name)`, the same draws, for a holder that never
   * forks in turn: it keeps no seed text (a few dozen bytes per executor).
   */
  stream(name: string): RngStream {
    return new RngStream(`${this.#seed}/${name}`);
  }
}

export function toHex(bytes: Uint8Array): string {
  return hexOf(bytes, bytes.length, NO_DASHES);
}

const DIGITS = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
const DASH = '-'.charCodeAt(0);
const UUID_DASHES = new Set([4, 6, 8, 10]);
const NO_DASHES = new Set<number>();
/** Characters per String.fromCharCode call: well below any engine's argument limit. */
const CHUNK = 8192;
/** Where `hex` and `uuid` draw their bytes before writing them as text. */
const SCRATCH = new Uint8Array(64);

/**
 * Lower-case hex digits, in one flat string: built from character codes
 * rather than by `+=`, whose chain of partial strings a kept id (a status
 * update's uuid, a container's id) would hold for as long as it lives.
 */
function hexOf(bytes: Uint8Array, length: number, dashesBefore: ReadonlySet<number>): string {
  const codes: number[] = [];
  for (let i = 0; i < length; i++) {
    if (dashesBefore.has(i)) codes.push(DASH);
    const b = bytes[i]!;
    codes.push(DIGITS[b >> 4]!, DIGITS[b & 15]!);
  }
  if (codes.length <= CHUNK) return String.fromCharCode(...codes);
  const parts: string[] = [];
  for (let i = 0; i < codes.length; i += CHUNK) parts.push(String.fromCharCode(...codes.slice(i, i + CHUNK)));
  return parts.join('');
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

function splitmix32(x: number): number {
  let z = (x + 0x9e3779b9) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a over UTF-16 code units; only used to derive seeds. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
