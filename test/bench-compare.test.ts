/**
 * The pure parts of `npm run bench -- compare <ref>`: its arguments, the
 * ratio it prints, the order of the sides, how a ref is built and when the
 * current node_modules can serve it, and the RecordIO reader of its start
 * measurement. The comparison itself is a benchmark and runs only by hand.
 */
import { describe, expect, it } from 'vitest';
import { parseCompareArgs, ratioText, roundOrder } from './bench/compare.js';
import { recordIoReader } from './bench/compare-start.js';
import { buildCommand, CompareError, canLinkModules } from './bench/compare-tree.js';

describe('bench compare', () => {
  it('takes a ref and the parts, start by default', () => {
    expect(parseCompareArgs(['62b20d7'])).toEqual({ ref: '62b20d7', parts: ['start'] });
    expect(parseCompareArgs(['v0.1.0', 'start'])).toEqual({ ref: 'v0.1.0', parts: ['start'] });
    expect(parseCompareArgs(['main~3', 'calls', 'start'])).toEqual({ ref: 'main~3', parts: ['start', 'calls'] });
    expect(parseCompareArgs(['HEAD', 'calls'])).toEqual({ ref: 'HEAD', parts: ['calls'] });
    expect(() => parseCompareArgs([])).toThrow(CompareError);
    expect(() => parseCompareArgs(['HEAD', 'bogus'])).toThrow(/unknown compare part\(s\) bogus/);
  });

  it('prints now / ref, and a dash when it cannot be computed', () => {
    expect(ratioText(42, 20)).toBe('2.10x');
    expect(ratioText(10, 0)).toBe('-');
    expect(ratioText(Number.NaN, 20)).toBe('-');
  });

  it('alternates which side runs first', () => {
    expect([0, 1, 2].map(roundOrder)).toEqual([
      ['ref', 'now'],
      ['now', 'ref'],
      ['ref', 'now'],
    ]);
  });

  it("builds with the ref's own build script, or the compiler when it has none", () => {
    expect(buildCommand(JSON.stringify({ scripts: { build: 'tsc' } }))).toEqual(['npm', ['run', 'build']]);
    expect(buildCommand(JSON.stringify({}))).toEqual(['npx', ['tsc', '-p', 'tsconfig.build.json']]);
  });

  it('links node_modules only for a byte-identical lockfile', () => {
    const lock = Buffer.from('{"lockfileVersion":3}\n');
    expect(canLinkModules(lock, Buffer.from(lock))).toBe(true);
    expect(canLinkModules(lock, Buffer.from('{"lockfileVersion":3}'))).toBe(false);
    expect(canLinkModules(undefined, lock)).toBe(false);
    expect(canLinkModules(lock, undefined)).toBe(false);
  });

  it('reads RecordIO frames split anywhere, lengths in bytes', () => {
    const types: string[] = [];
    const read = recordIoReader((type) => types.push(type));
    const record = (o: object) => {
      const body = Buffer.from(JSON.stringify(o));
      return Buffer.concat([Buffer.from(`${body.length}\n`), body]);
    };
    const stream = Buffer.concat([record({ type: 'SUBSCRIBED', n: 'é' }), record({ type: 'OFFERS' })]);
    for (let i = 0; i < stream.length; i += 5) read(stream.subarray(i, i + 5));
    expect(types).toEqual(['SUBSCRIBED', 'OFFERS']);
  });
});
