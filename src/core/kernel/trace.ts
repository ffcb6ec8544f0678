/**
 * The trace: every accepted input and every emitted event, in order, with its
 * virtual time. Each entry is one line of canonical JSON, folded into a
 * rolling 64-bit hash (two FNV-1a lanes), so two runs can be compared by
 * hash and, when recording, diffed entry by entry to the first divergence.
 * Data holds plain JSON values (ids, states, counts; byte lengths rather
 * than bytes), so the text is stable. A cluster that records its inputs
 * adds an `input:<method>` entry for each, its arguments in full
 * (input-record.ts): those lines alone re-run it.
 */

export interface TraceEntry {
  readonly seq: number;
  readonly timeMs: number;
  readonly kind: string;
  readonly line: string;
}

export type TraceListener = (entry: TraceEntry, data: Readonly<Record<string, unknown>>) => void;

export interface TraceOptions {
  /** Keep every entry in memory (tests, scenarios); otherwise only the tail. */
  readonly record?: boolean;
  /** How many recent entries to keep when not recording. */
  readonly tailSize?: number;
}

export class Trace {
  #seq = 0;
  #h1 = 0x811c9dc5;
  #h2 = 0xcbf29ce4;
  readonly #record: boolean;
  readonly #tailSize: number;
  readonly #entries: TraceEntry[] = [];
  readonly #listeners: TraceListener[] = [];
  /** Listeners of one kind each, told the entry alone: hot entries build no data for them. */
  readonly #kindListeners = new Map<string, ((entry: TraceEntry) => void)[]>();

  constructor(
    private readonly clock: { now(): number },
    options: TraceOptions = {},
  ) {
    this.#record = options.record ?? false;
    this.#tailSize = options.tailSize ?? 256;
  }

  append(kind: string, data: Readonly<Record<string, unknown>> = {}): void {
    // No replacer: a replacer function makes JSON.stringify several times
    // slower, and callers put lengths, not bytes, into trace data.
    this.#add(kind, JSON.stringify(data), data);
  }

  /**
   * The fast path for the hottest entries (every event sent to a
   * framework): the caller formats the text, no JSON serialisation.
   */
  appendText(kind: string, text: string): void {
    this.#add(kind, text, undefined);
  }

  /**
   * For hot entries whose caller writes the JSON text of their data itself
   * (byte for byte what `append` writes, with `jsonString`): no
   * serialisation, and the data is built only for a listener.
   */
  appendJson(kind: string, text: string, data: () => Readonly<Record<string, unknown>>): void {
    this.#add(kind, text, this.#listeners.length === 0 ? undefined : data());
  }

  #add(kind: string, text: string, data: Readonly<Record<string, unknown>> | undefined): void {
    const timeMs = this.clock.now();
    const seq = ++this.#seq;
    const line = `${timeMs} ${kind} ${text}`;
    this.#fold(line);
    const entry: TraceEntry = { seq, timeMs, kind, line };
    this.#entries.push(entry);
    if (!this.#record && this.#entries.length > this.#tailSize * 2) {
      this.#entries.splice(0, this.#entries.length - this.#tailSize);
    }
    for (const listener of this.#listeners) listener(entry, data ?? { text });
    if (this.#kindListeners.size > 0) for (const listener of this.#kindListeners.get(kind) ?? []) listener(entry);
  }

  onEntry(listener: TraceListener): void {
    this.#listeners.push(listener);
  }

  offEntry(listener: TraceListener): void {
    const i = this.#listeners.indexOf(listener);
    if (i >= 0) this.#listeners.splice(i, 1);
  }

  /** Tells `listener` of each entry of `kind`, without its data (so the hot entries, of other kinds, build none). */
  onKind(kind: string, listener: (entry: TraceEntry) => void): void {
    this.#kindListeners.set(kind, [...(this.#kindListeners.get(kind) ?? []), listener]);
  }

  /** Number of entries appended so far. */
  get length(): number {
    return this.#seq;
  }

  /** The rolling hash of everything appended so far, as 16 hex digits. */
  hash(): string {
    return (this.#h1 >>> 0).toString(16).padStart(8, '0') + (this.#h2 >>> 0).toString(16).padStart(8, '0');
  }

  /** The recorded entries (all of them when recording, else the tail). */
  entries(): readonly TraceEntry[] {
    return this.#entries;
  }

  #fold(line: string): void {
    let h1 = this.#h1;
    let h2 = this.#h2;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
    }
    h1 = Math.imul(h1 ^ 0x0a, 0x01000193);
    this.#h1 = h1 >>> 0;
    this.#h2 = h2 >>> 0;
  }
}

/** What needs escaping in a JSON string (lone surrogates included): the rest is written as is. */
const JSON_ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it, without its cost for the common string that needs no escape. */
export function jsonString(s: string): string {
  return JSON_ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * The last string quoted (`jsonString`), for fields that repeat from one
 * line to the next: a framework's tasks share its id, and tasks are
 * listed agent by agent.
 */
export class LastQuoted {
  #text: string | undefined;
  #json = '';

  of(text: string): string {
    if (text !== this.#text) {
      this.#text = text;
      this.#json = jsonString(text);
    }
    return this.#json;
  }
}

/** The first index at which two recorded traces differ, or -1. */
export function firstDivergence(a: readonly TraceEntry[], b: readonly TraceEntry[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i]?.line !== b[i]?.line) return i;
  return -1;
}

/** An entry as one line of JSON (`{"seq","time_ms","kind","line"}`): the trace files and the control API's stream. */
export function traceJsonLine(entry: TraceEntry): string {
  return JSON.stringify({ seq: entry.seq, time_ms: entry.timeMs, kind: entry.kind, line: entry.line });
}
