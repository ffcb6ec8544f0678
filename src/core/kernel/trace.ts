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
  /** Every entry when recording. */
  readonly #entries: TraceEntry[] = [];
  /**
   * The tail when not recording, as its parts in a ring (no entry object
   * and no line per append: a failover appends millions): `#tailLength`
   * entries end at `#seq`, between `tailSize` and twice that once there
   * are as many, as when the tail was an array cut back to `tailSize`
   * whenever it passed twice that.
   */
  readonly #ring: { timeMs: number[]; kind: string[]; text: string[] };
  #tailLength = 0;
  /** The tail's entries as last asked for, until the next append. */
  #tail: TraceEntry[] | undefined;
  readonly #listeners: TraceListener[] = [];
  /** Listeners of one kind each, told the entry alone: hot entries build no data for them. */
  readonly #kindListeners = new Map<string, ((entry: TraceEntry) => void)[]>();
  /** The text of the time of the last entry: entries come in runs of one instant. */
  #timeMs = Number.NaN;
  #timeText = '';

  constructor(
    private readonly clock: { now(): number },
    options: TraceOptions = {},
  ) {
    this.#record = options.record ?? false;
    this.#tailSize = options.tailSize ?? 256;
    const size = this.#record ? 0 : this.#tailSize * 2 + 1;
    this.#ring = {
      timeMs: new Array<number>(size).fill(0),
      kind: new Array<string>(size).fill(''),
      text: new Array<string>(size).fill(''),
    };
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
    if (timeMs !== this.#timeMs) {
      this.#timeMs = timeMs;
      this.#timeText = `${timeMs}`;
    }
    // The line is `${timeMs} ${kind} ${text}`, folded part by part: no line is made unless someone keeps or hears it.
    this.#fold(this.#timeText, kind, text);
    const told = this.#listeners.length > 0 || (this.#kindListeners.size > 0 && this.#kindListeners.has(kind));
    let entry: TraceEntry | undefined;
    if (this.#record || told) entry = { seq, timeMs, kind, line: `${this.#timeText} ${kind} ${text}` };
    if (this.#record) this.#entries.push(entry!);
    else this.#keep(seq, timeMs, kind, text);
    if (!told) return;
    for (const listener of this.#listeners) listener(entry!, data ?? { text });
    if (this.#kindListeners.size > 0) for (const listener of this.#kindListeners.get(kind) ?? []) listener(entry!);
  }

  /** Puts an entry's parts in the ring of the tail. */
  #keep(seq: number, timeMs: number, kind: string, text: string): void {
    const ring = this.#ring;
    const i = seq % ring.text.length;
    ring.timeMs[i] = timeMs;
    ring.kind[i] = kind;
    ring.text[i] = text;
    this.#tailLength = this.#tailLength === this.#tailSize * 2 ? this.#tailSize : this.#tailLength + 1;
    this.#tail = undefined;
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
    if (this.#record) return this.#entries;
    if (this.#tail === undefined) {
      const { timeMs, kind, text } = this.#ring;
      const tail: TraceEntry[] = [];
      for (let seq = this.#seq - this.#tailLength + 1; seq <= this.#seq; seq++) {
        const i = seq % text.length;
        tail.push({ seq, timeMs: timeMs[i]!, kind: kind[i]!, line: `${timeMs[i]} ${kind[i]} ${text[i]}` });
      }
      this.#tail = tail;
    }
    return this.#tail;
  }

  /** Folds the line `${time} ${kind} ${text}` and its newline into the hash. */
  #fold(time: string, kind: string, text: string): void {
    this.#mix(time);
    this.#mix(' ');
    this.#mix(kind);
    this.#mix(' ');
    this.#mix(text);
    this.#h1 = Math.imul(this.#h1 ^ 0x0a, 0x01000193) >>> 0;
  }

  /** Folds the characters of `s` into both lanes. */
  #mix(s: string): void {
    let h1 = this.#h1;
    let h2 = this.#h2;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
    }
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

/** `jsonString(s)` as parts pushed on `parts`, for a text joined at once (a flat string: no chain of pieces to flatten). */
export function pushJsonString(parts: string[], s: string): void {
  if (JSON_ESCAPED.test(s)) parts.push(JSON.stringify(s));
  else parts.push('"', s, '"');
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
