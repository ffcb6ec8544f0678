/**
 * The curl session of docs/scheduler-api.md (once the README's, hence the
 * file's name and the markers') as data: its marked code blocks, and how an
 * answer is compared with the one the page prints.
 *
 * A block is part of the session when an HTML comment
 * `<!-- readme-session: KIND -->` stands on the line before its fence:
 *
 *   start       `npm start [-- flags]`: the cluster (`clustersim up` with
 *               those flags); the session's URLs name it as
 *               `http://127.0.0.1:5050`
 *   background  a command left running (the subscription); its output is
 *               the event stream
 *   run         a command run to its end
 *   output      what the command before prints: for a `run`, its lines (each
 *               line shown appears, in order, the first one first); for the
 *               `background`, the response's header lines (likewise) and
 *               then RecordIO records
 *   stream      records that appear next on the stream
 *   virtual     a command of the same session in virtual time (`--time
 *               virtual` added to the start), run just before the last
 *               `stream` block; the session in real time leaves it out
 *
 * A record shown matches a record received when their texts are equal, `…`
 * standing for any run of characters, and so are their lengths. Before the
 * comparison, what may differ between two runs of the same session is made
 * the same on both sides: the master's port (the page's `5050`, the
 * test's a free one) and the wall clock in `"timestamp"` fields, each with
 * the bytes it adds to a record's length.
 */

export type StepKind = 'start' | 'background' | 'run' | 'output' | 'stream' | 'virtual';

export interface Step {
  readonly kind: StepKind;
  readonly text: string;
  /** 1-based line of the page where the block's marker stands. */
  readonly line: number;
}

export interface StreamRecord {
  readonly length: number;
  readonly text: string;
}

export const SESSION_ORIGIN = 'http://127.0.0.1:5050';
const KINDS: readonly StepKind[] = ['start', 'background', 'run', 'output', 'stream', 'virtual'];
const MARKER = /<!-- readme-session: ([a-z]+) -->\n```[a-z]*\n([\s\S]*?)\n```/g;

/** The session's steps in page order; a marker without a block after it, or of an unknown kind, is an error. */
export function sessionSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const m of markdown.matchAll(MARKER)) {
    const kind = m[1] as StepKind;
    const line = markdown.slice(0, m.index).split('\n').length;
    if (!KINDS.includes(kind)) throw new Error(`line ${line}: unknown session block '${kind}'`);
    steps.push({ kind, text: m[2]!, line });
  }
  const markers = markdown.match(/<!-- readme-session/g)?.length ?? 0;
  if (markers !== steps.length)
    throw new Error(`${markers} readme-session markers but ${steps.length} marked code blocks`);
  return steps;
}

/** The flags `npm start [-- flags]` gives `clustersim up`. */
export function startFlags(command: string): string[] {
  const m = /^npm start(?: -- (.*))?$/.exec(command.trim());
  if (m === null) throw new Error(`a session starts with 'npm start [-- flags]', not '${command}'`);
  return m[1] === undefined ? [] : m[1].trim().split(/\s+/);
}

/** A command of the page aimed at the test's master; any other address in it is an error (nothing else is reachable). */
export function localCommand(command: string, origin: string): string {
  const out = command.split(SESSION_ORIGIN).join(origin);
  const others = out.match(/https?:\/\/[^\s'"/]+/g)?.filter((o) => o !== origin) ?? [];
  if (others.length > 0) throw new Error(`the command names ${others.join(', ')}, not ${SESSION_ORIGIN}: ${command}`);
  return out;
}

function wildcard(expected: string): RegExp {
  const parts = expected.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*')}$`);
}

/** Whether a line (or record) shown matches one received, `…` standing for anything. */
export function matches(expected: string, actual: string): boolean {
  return expected.includes('…') ? wildcard(expected).test(actual) : expected === actual;
}

/** Whether the lines shown appear in order in the lines received, the first one first. */
export function linesMatch(expected: readonly string[], actual: readonly string[]): boolean {
  if (expected.length === 0) return true;
  if (actual.length === 0 || !matches(expected[0]!, actual[0]!)) return false;
  let at = 1;
  for (const line of expected.slice(1)) {
    while (at < actual.length && !matches(line, actual[at]!)) at++;
    if (at === actual.length) return false;
    at++;
  }
  return true;
}

/** A block of records as the page prints it (what curl shows: each length right after the record before). */
export function shownRecords(body: string): StreamRecord[] {
  const parts = body.split(/(\d+)\n/);
  if (parts[0] !== '') throw new Error(`a stream block starts with a record length, not '${parts[0]!.slice(0, 40)}'`);
  const out: StreamRecord[] = [];
  for (let i = 1; i < parts.length; i += 2) out.push({ length: Number(parts[i]), text: parts[i + 1]! });
  return out;
}

/** The complete RecordIO records of a stream body received so far; bad framing is an error. */
export function receivedRecords(body: Buffer): StreamRecord[] {
  const out: StreamRecord[] = [];
  let at = 0;
  for (;;) {
    const nl = body.indexOf(0x0a, at);
    if (nl < 0) break;
    const digits = body.subarray(at, nl).toString('latin1');
    if (!/^\d+$/.test(digits)) throw new Error(`RecordIO: '${digits.slice(0, 40)}' is not a record length`);
    const length = Number(digits);
    if (body.length < nl + 1 + length) break;
    out.push({ length, text: body.subarray(nl + 1, nl + 1 + length).toString('utf8') });
    at = nl + 1 + length;
  }
  return out;
}

/** A record with the master's port and the timestamps made the page's, and its length changed by as many bytes. */
export function normalised(record: StreamRecord, port: number): StreamRecord {
  let delta = 0;
  const shown = SESSION_ORIGIN.slice(SESSION_ORIGIN.lastIndexOf(':') + 1);
  const text = record.text
    .replace(new RegExp(`("port":|127\\.0\\.0\\.1:)${port}(?=[,}"])`, 'g'), (_, before: string) => {
      delta += shown.length - String(port).length;
      return `${before}${shown}`;
    })
    .replace(/"timestamp":[0-9.e+-]+/g, (ts) => {
      delta += '"timestamp":0'.length - ts.length;
      return '"timestamp":0';
    });
  return { length: record.length + delta, text };
}

/**
 * Where the records shown appear, in order, among those received from
 * `from` on (the index after the last one), or why they do not: a record
 * not (yet) received, or received with another length.
 */
export function findRecords(
  shown: readonly StreamRecord[],
  received: readonly StreamRecord[],
  from: number,
  port: number,
): { next: number } | { missing: string } {
  let at = from;
  for (const expected of shown.map((r) => normalised(r, 5050))) {
    let found = false;
    for (; at < received.length && !found; at++) {
      const actual = normalised(received[at]!, port);
      if (!matches(expected.text, actual.text)) continue;
      if (actual.length !== expected.length) {
        return {
          missing: `the record ${expected.text.slice(0, 80)}… arrived with length ${actual.length} (counted with the page's port and timestamps), the page says ${expected.length}`,
        };
      }
      found = true;
    }
    if (!found)
      return { missing: `no record ${expected.text.slice(0, 200)} among the ${received.length - from} received` };
  }
  return { next: at };
}
