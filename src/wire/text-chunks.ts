/**
 * JSON text written straight into UTF-8 byte chunks, for the reads that
 * write hundreds of megabytes of it. Joining the text of a whole slice
 * into one string first builds a rope of millions of small strings that
 * lives long enough to reach the old generation, where collecting it over
 * a big heap costs more than writing it; here each small piece of text is
 * copied into the chunk at once and dies young.
 */

/** Room kept past a chunk's size, so that a piece of text rarely needs a bigger buffer. */
const MARGIN = 64 * 1024;

export class TextChunks {
  #buf: Buffer;
  #pos = 0;

  constructor(private readonly chunkBytes: number) {
    this.#buf = Buffer.allocUnsafe(chunkBytes + MARGIN);
  }

  /** Bytes written since the last `take`. */
  get size(): number {
    return this.#pos;
  }

  add(text: string): void {
    const room = this.#buf.length - this.#pos;
    if (text.length + 4 <= room) {
      const written = this.#buf.write(text, this.#pos);
      // A character takes at most 4 bytes: with more room than that left, all of the text was written.
      if (room - written >= 4) {
        this.#pos += written;
        return;
      }
    }
    const bytes = Buffer.from(text);
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length, this.#pos + bytes.length + MARGIN));
    this.#buf.copy(grown, 0, 0, this.#pos);
    bytes.copy(grown, this.#pos);
    this.#buf = grown;
    this.#pos += bytes.length;
  }

  /** The bytes written since the last `take`, and a fresh chunk for what follows. */
  take(): Uint8Array {
    const out = this.#buf.subarray(0, this.#pos);
    this.#buf = Buffer.allocUnsafe(this.chunkBytes + MARGIN);
    this.#pos = 0;
    return out;
  }
}
