/**
 * RecordIO framing of event streams: each record is its length in bytes as
 * ASCII decimal, a newline, then the record. Records are never empty.
 */

/** Frames one record; the result is written as one HTTP chunk. */
export function frameRecord(payload: Uint8Array | string): Buffer {
  const body =
    typeof payload === 'string'
      ? Buffer.from(payload, 'utf8')
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (body.length === 0) throw new Error('recordio: records are never empty');
  return Buffer.concat([Buffer.from(`${body.length}\n`, 'ascii'), body]);
}

/**
 * Incremental reader: feed bytes as they arrive, take whole records out.
 * A malformed length prefix is an error (the stream cannot be resynced).
 * A record that spans many chunks is kept as its parts and joined once
 * when whole, so reading a record costs its length, however it is cut
 * (one OFFERS event of a big cluster is tens of megabytes).
 */
export class RecordReader {
  /** Bytes before a known length: part of a length prefix, at most 20 digits. */
  #head: Buffer = EMPTY;
  /** The parts of the record being read, once its length is known. */
  #parts: Buffer[] = [];
  /** Bytes the record being read still lacks; 0 when none is being read. */
  #missing = 0;
  /** Bytes held for the record being read, its length prefix included. */
  #held = 0;

  /** Appends bytes and returns every record completed by them. */
  push(chunk: Uint8Array): Buffer[] {
    // One copy of the chunk: the records handed out are views of it, which later changes to the caller's bytes do not touch.
    let rest: Buffer = Buffer.from(chunk);
    const out: Buffer[] = [];
    while (rest.length > 0) {
      if (this.#missing > 0) {
        rest = this.#fill(rest, out);
        continue;
      }
      const data = this.#head.length === 0 ? rest : Buffer.concat([this.#head, rest]);
      const newline = data.indexOf(0x0a);
      if (newline < 0) {
        if (data.length > 20) throw new Error('recordio: length prefix too long');
        this.#head = data;
        return out;
      }
      const prefix = data.subarray(0, newline).toString('ascii');
      if (!/^[1-9][0-9]{0,19}$/.test(prefix)) throw new Error(`recordio: bad length prefix '${prefix}'`);
      this.#head = EMPTY;
      this.#missing = Number(prefix);
      this.#held = newline + 1;
      rest = data.subarray(newline + 1);
    }
    return out;
  }

  /** Takes what the record being read lacks from `bytes`; the bytes after it. */
  #fill(bytes: Buffer, out: Buffer[]): Buffer {
    const take = Math.min(this.#missing, bytes.length);
    this.#parts.push(bytes.subarray(0, take));
    this.#missing -= take;
    this.#held += take;
    if (this.#missing === 0) {
      out.push(this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts));
      this.#parts = [];
      this.#held = 0;
    }
    return bytes.subarray(take);
  }

  /** Bytes held that do not yet form a whole record. */
  get pending(): number {
    return this.#head.length + this.#held;
  }
}

const EMPTY = Buffer.alloc(0);
