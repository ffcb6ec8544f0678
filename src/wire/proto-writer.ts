/**
 * Protobuf bytes written straight into a growing buffer, for the few
 * messages the big reads write hundreds of thousands of times (a task of
 * GET_STATE). It writes what protobufjs writes for the same fields in the
 * same order: tags as varints, lengths before nested messages and strings,
 * doubles as 8 little-endian bytes. Strings must be ASCII (the caller
 * checks, and leaves anything else to the generic encoder), so that a
 * character is a byte.
 */

/** Wire types of the fields written here. */
const VARINT = 0;
const FIXED64 = 1;
const DELIMITED = 2;

/** Only ASCII text is written here: one byte per character. */
const ASCII = /^[\x00-\x7f]*$/;

export const isAscii = (text: string): boolean => ASCII.test(text);

/** Strings shorter than this are copied a character at a time, longer ones by the Buffer. */
const SHORT = 16;

export class ProtoWriter {
  #buf: Buffer;
  #view: DataView;
  pos = 0;

  constructor(private readonly capacity = 64 * 1024) {
    this.#buf = Buffer.allocUnsafe(capacity);
    this.#view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
  }

  /** The bytes written so far, and a fresh buffer for what follows (none when `last`). */
  take(last = false): Uint8Array {
    const out = this.#buf.subarray(0, this.pos);
    this.#buf = last ? Buffer.alloc(0) : Buffer.allocUnsafe(this.capacity);
    this.#view = new DataView(this.#buf.buffer, this.#buf.byteOffset, this.#buf.byteLength);
    this.pos = 0;
    return out;
  }

  #ensure(n: number): void {
    if (this.pos + n <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.pos + n, 64));
    this.#buf.copy(grown, 0, 0, this.pos);
    this.#buf = grown;
    this.#view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  varint(value: number): void {
    this.#ensure(10);
    let v = value;
    while (v >= 0x80) {
      this.#buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.pos++] = v;
  }

  /** An enum or unsigned integer field. */
  uint(field: number, value: number): void {
    this.varint((field << 3) | VARINT);
    this.varint(value);
  }

  double(field: number, value: number): void {
    this.varint((field << 3) | FIXED64);
    this.#ensure(8);
    this.#view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** An ASCII string field. */
  string(field: number, text: string): void {
    this.varint((field << 3) | DELIMITED);
    this.varint(text.length);
    this.#ensure(text.length);
    if (text.length < SHORT) for (let i = 0; i < text.length; i++) this.#buf[this.pos++] = text.charCodeAt(i);
    else this.pos += this.#buf.write(text, this.pos, 'latin1');
  }

  bytes(field: number, bytes: Uint8Array): void {
    this.varint((field << 3) | DELIMITED);
    this.varint(bytes.length);
    this.raw(bytes);
  }

  /** A bytes field from hex digits, two a byte (the caller checks them). */
  hexBytes(field: number, hex: string): void {
    const n = hex.length >> 1;
    this.varint((field << 3) | DELIMITED);
    this.varint(n);
    this.#ensure(n);
    this.pos += this.#buf.write(hex, this.pos, n, 'hex');
  }

  /** Bytes as they are (already encoded fields). */
  raw(bytes: Uint8Array): void {
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A message holding one ASCII string field 1 (TaskID, AgentID and the like). */
  idMessage(field: number, value: string): void {
    this.varint((field << 3) | DELIMITED);
    this.varint(value.length + 1 + varintLength(value.length));
    this.string(1, value);
  }

  /** Opens a nested message; `end` with what this returns closes it. */
  begin(field: number): number {
    this.varint((field << 3) | DELIMITED);
    this.#ensure(1);
    return this.pos++;
  }

  /** Writes the length of the message opened at `at`, moving its bytes when the length needs more than one byte. */
  end(at: number): void {
    const length = this.pos - at - 1;
    const extra = varintLength(length) - 1;
    if (extra > 0) {
      this.#ensure(extra);
      this.#buf.copyWithin(at + 1 + extra, at + 1, this.pos);
      this.pos += extra;
    }
    let v = length;
    let p = at;
    while (v >= 0x80) {
      this.#buf[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[p] = v;
  }
}

export function varintLength(value: number): number {
  let n = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) n++;
  return n;
}
