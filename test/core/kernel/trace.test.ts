/**
 * The trace's hash is the two FNV-1a lanes over each line and its newline,
 * whatever keeps the lines; without recording, the tail holds the last
 * entries, between `tailSize` and twice that, as an array cut back to
 * `tailSize` whenever it passed twice that held them.
 */
import { describe, expect, it } from 'vitest';
import { Trace } from '../../../src/core/kernel/trace.js';

/** The hash of lines, folded as the trace has always folded them. */
function hashOf(lines: readonly string[]): string {
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (const line of lines) {
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
    }
    h1 = Math.imul(h1 ^ 0x0a, 0x01000193) >>> 0;
    h2 = h2 >>> 0;
  }
  return h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0');
}

describe('the trace', () => {
  it('hashes the lines `time kind text`, recorded or not', () => {
    let now = 0;
    const recorded = new Trace({ now: () => now }, { record: true });
    const tail = new Trace({ now: () => now }, { tailSize: 2 });
    const lines: string[] = [];
    for (let i = 0; i < 20; i++) {
      now = Math.floor(i / 3) * 1_000;
      for (const trace of [recorded, tail]) trace.append('task:status', { i, text: 'é"' });
      lines.push(`${now} task:status ${JSON.stringify({ i, text: 'é"' })}`);
    }
    expect(recorded.hash()).toBe(hashOf(lines));
    expect(tail.hash()).toBe(recorded.hash());
    expect(recorded.entries().map((e) => e.line)).toEqual(lines);
  });

  it('keeps a tail of the last entries, between tailSize and twice that', () => {
    let now = 0;
    const trace = new Trace({ now: () => now }, { tailSize: 3 });
    // What the tail held when it was an array cut back to 3 whenever it passed 6.
    const kept: number[] = [];
    for (let seq = 1; seq <= 25; seq++) {
      now = seq * 10;
      trace.append('tick', { seq });
      kept.push(seq);
      if (kept.length > 6) kept.splice(0, kept.length - 3);
      const tail = trace.entries();
      expect(tail.map((e) => e.seq)).toEqual(kept);
      expect(tail.at(-1)).toEqual({ seq, timeMs: seq * 10, kind: 'tick', line: `${seq * 10} tick {"seq":${seq}}` });
    }
  });

  it('tells its listeners each entry, with its line', () => {
    const trace = new Trace({ now: () => 7 });
    const heard: string[] = [];
    trace.onEntry((entry) => heard.push(entry.line));
    trace.onKind('b', (entry) => heard.push(`kind ${entry.line}`));
    trace.append('a', { x: 1 });
    trace.appendText('b', '{}');
    expect(heard).toEqual(['7 a {"x":1}', '7 b {}', 'kind 7 b {}']);
  });
});
