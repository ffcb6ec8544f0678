/**
 * A run's `--trace` file, written as the run goes: each entry a JSON line,
 * gathered into chunks of TRACE_CHUNK_BYTES and written at once, so a long
 * run's trace goes to disk rather than into memory. A write that fails
 * (a full disk) stops the writing, not the run: the run reports it.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { traceJsonLine, type TraceEntry } from '../core/kernel/trace.js';

const TRACE_CHUNK_BYTES = 1 << 20;

export class TraceFile {
  readonly #fd: number;
  #chunk: string[] = [];
  #size = 0;
  #error: string | undefined;

  /** Opens (creates or empties) the file; throws what opening it throws. */
  constructor(readonly path: string) {
    this.#fd = openSync(path, 'w');
  }

  readonly write = (entry: TraceEntry): void => {
    if (this.#error !== undefined) return;
    const line = `${traceJsonLine(entry)}\n`;
    this.#chunk.push(line);
    this.#size += line.length;
    if (this.#size >= TRACE_CHUNK_BYTES) this.#flush();
  };

  /** Writes what is left and closes the file; why the file is not whole, if it is not. */
  close(): string | undefined {
    this.#flush();
    closeSync(this.#fd);
    return this.#error;
  }

  #flush(): void {
    const bytes = Buffer.from(this.#chunk.join(''), 'utf8');
    this.#chunk = [];
    this.#size = 0;
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.#fd, bytes, done);
    } catch (error) {
      this.#error ??= `cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    }
  }
}
