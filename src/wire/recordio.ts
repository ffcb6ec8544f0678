/**
 * RecordIO framing of event streams: each record is its length in bytes as
 * ASCII decimal, a newline, then the record. Records are never empty.
 */

/** Frames one record; the result is written as one HTTP chunk. */
export function frameRecord(payload: Uint8Array | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (body.length === 0) throw new Error('recordio: records are never empty');
  return Buffer.concat([Buffer.from(`${body.length}\n`, 'ascii'), body]);
}

/**
 * Incremental reader: feed bytes as they arrive, take whole records out.
 * A malformed length prefix is an error (the stream cannot be resynced).
 */
export class RecordReader {
  #buffer: Buffer = Buffer.alloc(0);

  /** Appends bytes and returns every record completed by them. */
  push(chunk: Uint8Array): Buffer[] {
    this.#buffer = this.#buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buffer, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      const newline = this.#buffer.indexOf(0x0a);
      if (newline < 0) {
        if (this.#buffer.length > 20) throw new Error('recordio: length prefix too long');
        return out;
      }
      const prefix = this.#buffer.subarray(0, newline).toString('ascii');
      if (!/^[1-9][0-9]{0,19}$/.test(prefix)) throw new Error(`recordio: bad length prefix '${prefix}'`);
      const length = Number(prefix);
      if (this.#buffer.length < newline + 1 + length) return out;
      out.push(this.#buffer.subarray(newline + 1, newline + 1 + length));
      this.#buffer = this.#buffer.subarray(newline + 1 + length);
    }
  }

  /** Bytes held that do not yet form a whole record. */
  get pending(): number {
    return this.#buffer.length;
  }
}
