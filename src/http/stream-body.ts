/**
 * A big body written in slices: the renderer has already read what it
 * needs (a snapshot, taken in one `driver.read`), and its pieces are joined
 * into slices of about `SLICE_BYTES`, each written on its own turn of the
 * event loop. The first slice leaves at once, and other requests are
 * answered between slices instead of waiting for the whole body. A body
 * that fits one slice and is smaller than the gzip threshold goes out as
 * before, with a Content-Length; a longer one is chunked, and gzipped as a
 * stream when the client accepts gzip.
 */
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PAUSE } from '../wire/operator-stream.js';

/** About this many characters (or bytes) per write. */
export const SLICE_BYTES = 256 * 1024;

/** A piece of text or bytes, or `PAUSE`: nothing yet, serve others before going on. */
export type Piece = string | Uint8Array | typeof PAUSE;

export interface StreamedBody {
  readonly type: string;
  readonly pieces: Iterator<Piece>;
  /** Text before and after the pieces (a JSONP call around JSON). */
  readonly prefix?: string;
  readonly suffix?: string;
}

type Slice = Buffer | typeof PAUSE;

export function sendStreamed(req: FastifyRequest, reply: FastifyReply, body: StreamedBody): FastifyReply {
  const slices = slicesOf(body);
  const ahead: IteratorResult<Slice, void>[] = [slices.next()];
  const first = ahead[0]!;
  if (first.done === true) return sendBody(req, reply, body.type, Buffer.alloc(0));
  if (first.value !== PAUSE) {
    const second = slices.next();
    if (second.done === true) return sendBody(req, reply, body.type, first.value);
    ahead.push(second);
  }
  const stream = new Readable({
    read() {
      // A slice per turn of the loop, so that it serves others in between.
      const turn = () => {
        try {
          const next = ahead.shift() ?? slices.next();
          if (next.done !== true && next.value === PAUSE) return void setImmediate(turn);
          this.push(next.done === true ? null : next.value);
        } catch (error) {
          this.destroy(error as Error);
        }
      };
      setImmediate(turn);
    },
    destroy(error, callback) {
      // A body dropped half-way (the client went away): its snapshot need not copy the rest.
      body.pieces.return?.();
      callback(error);
    },
  });
  reply.header('content-type', body.type);
  if (acceptsGzip(req.headers['accept-encoding'])) {
    return reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding').send(stream.pipe(createGzip()));
  }
  return reply.send(stream);
}

/** The pieces joined into slices of about `SLICE_BYTES`, prefix and suffix included; a pause ends a slice. */
function* slicesOf(body: StreamedBody): Generator<Slice, void, undefined> {
  let text = body.prefix ?? '';
  const bytes: Buffer[] = [];
  let byteCount = 0;
  const flush = (): Buffer => {
    const parts = text === '' ? bytes : [...bytes, utf8(text)];
    const slice = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    text = '';
    bytes.length = 0;
    byteCount = 0;
    return slice;
  };
  for (let next = body.pieces.next(); next.done !== true; next = body.pieces.next()) {
    const piece = next.value;
    if (piece === PAUSE) {
      if (text.length + byteCount > 0) yield flush();
      yield PAUSE;
      continue;
    }
    if (typeof piece === 'string') text += piece;
    else {
      if (text !== '') bytes.push(utf8(text)), (byteCount += text.length), (text = '');
      bytes.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
      byteCount += piece.byteLength;
    }
    if (text.length + byteCount >= SLICE_BYTES) yield flush();
  }
  text += body.suffix ?? '';
  if (text.length + byteCount > 0) yield flush();
}

/**
 * The UTF-8 bytes of a slice's text. `Buffer.from` measures a long string
 * before it encodes it (a second pass over it); text that is nearly all
 * ASCII fits a buffer a little longer than itself, so it is written there
 * in one pass, and only text with many longer characters is measured.
 */
function utf8(text: string): Buffer {
  const buffer = Buffer.allocUnsafe(text.length + UTF8_MARGIN);
  const written = buffer.write(text);
  // A character takes at most 4 bytes: with more room than that left, all of the text was written.
  return written <= buffer.length - 4 ? buffer.subarray(0, written) : Buffer.from(text);
}

const UTF8_MARGIN = 1024;

/** Bodies of this size or more are gzipped when the client accepts gzip, as upstream does. */
export const GZIP_THRESHOLD_BYTES = 1024;

/** A Buffer body (gzipped at 1 KiB or more when the client accepts gzip), so that fastify adds no '; charset=utf-8' to the type. */
export function sendBody(req: FastifyRequest, reply: FastifyReply, type: string, body: Buffer): FastifyReply {
  reply.header('content-type', type);
  if (body.length >= GZIP_THRESHOLD_BYTES && acceptsGzip(req.headers['accept-encoding'])) {
    return reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding').send(gzipSync(body));
  }
  return reply.send(body);
}

export function acceptsGzip(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text.split(',').some((part) => {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}
