/**
 * The cluster runs in the fuzzer's own process, so a request that sends
 * the server into a synchronous loop stops every timer here too, the
 * per-request timeout included: the fuzzer would wait for ever, silently.
 * A worker thread watches instead. The main thread beats every 100 ms and
 * writes what it is doing (the cluster seed, the step, the request) into
 * shared memory; if the beat stops for `stallMs`, the worker prints that
 * to stderr and kills the process, which no one else can do by then.
 */
import { Worker } from 'node:worker_threads';

const NOTE_BYTES = 64 * 1024;

// Plain CommonJS: the worker must not depend on the TypeScript loader of its parent.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const beat = new Float64Array(workerData.beat);
const length = new Int32Array(workerData.length);
const note = new Uint8Array(workerData.note);
setInterval(() => {
  const silent = Date.now() - beat[0];
  if (beat[0] === 0 || silent < workerData.stallMs) return;
  const text = Buffer.from(note.slice(0, Atomics.load(length, 0))).toString('utf8');
  fs.writeSync(2, '\\nfuzz: the process stopped answering for ' + silent + ' ms (a synchronous hang), during:\\n' + text + '\\n');
  process.kill(process.pid, 'SIGKILL');
}, 250);
`;

export class Watchdog {
  readonly #beat = new Float64Array(new SharedArrayBuffer(8));
  readonly #length = new Int32Array(new SharedArrayBuffer(4));
  readonly #note = new Uint8Array(new SharedArrayBuffer(NOTE_BYTES));
  readonly #worker: Worker;
  readonly #timer: NodeJS.Timeout;

  constructor(stallMs: number) {
    this.#beat[0] = Date.now();
    this.#timer = setInterval(() => (this.#beat[0] = Date.now()), 100);
    this.#timer.unref();
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { beat: this.#beat.buffer, length: this.#length.buffer, note: this.#note.buffer, stallMs },
    });
    this.#worker.unref();
  }

  /** What the process is doing now, for the report of a hang. */
  note(text: string): void {
    const bytes = Buffer.from(text.length > NOTE_BYTES / 4 ? `${text.slice(0, NOTE_BYTES / 4)}…` : text, 'utf8');
    const n = Math.min(bytes.length, NOTE_BYTES);
    this.#note.set(bytes.subarray(0, n));
    Atomics.store(this.#length, 0, n);
  }

  stop(): Promise<number> {
    clearInterval(this.#timer);
    return this.#worker.terminate();
  }
}
