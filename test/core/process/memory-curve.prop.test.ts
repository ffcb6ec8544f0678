/**
 * Property test of memory curves: for any label of constant, growing and
 * spike terms, any start, limit and instant, `firstExceeding` names the
 * first whole millisecond whose usage passes the limit, and none when no
 * millisecond does. Usage is linear between piece boundaries, so checking
 * each span's ends checks every millisecond before the answer.
 *
 * fast-check prints the seed and the shrunk values on failure; pass them
 * back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesAt, firstExceeding, MIB, parseMemoryCurve, shifted } from '../../../src/core/process/memory-curve.js';

const amount = fc.integer({ min: 0, max: 2_000_000 }).map((milli) => String(milli / 1000));
const time = fc.tuple(fc.integer({ min: 0, max: 600 }), fc.constantFrom('ms', 's', 'm'));
const term = fc.oneof(
  amount.map((mib) => `constant:${mib}`),
  fc
    .tuple(fc.option(amount, { nil: undefined }), amount, fc.constantFrom('ms', 's', 'm', 'h'))
    .map(([base, rate, unit]) => `growing:${base === undefined ? '' : `${base}+`}${rate}/${unit}`),
  fc
    .tuple(amount, time, fc.option(time, { nil: undefined }))
    .map(
      ([mib, [at, u], length]) => `spike:${mib}@${at}${u}${length === undefined ? '' : `/${length[0]}${length[1]}`}`,
    ),
);

describe('memory curves', () => {
  it('firstExceeding is the first millisecond over the limit, or there is none', () => {
    fc.assert(
      fc.property(
        fc.array(term, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 4 * 1024 * MIB }),
        fc.integer({ min: 0, max: 200_000 }),
        (terms, startMs, limitBytes, fromMs) => {
          const parsed = parseMemoryCurve(terms.join(','));
          if ('error' in parsed) throw new Error(parsed.error);
          const pieces = shifted(parsed.curve, startMs);
          const at = firstExceeding(pieces, limitBytes, fromMs);
          const horizon = at ?? fromMs + 48 * 3_600_000;
          // Every span's ends before the answer: usage is linear in between.
          const edges = pieces.flatMap((p) => [p.from, p.until]).filter((t) => Number.isFinite(t));
          const checks = [fromMs, horizon - 1, ...edges.flatMap((t) => [Math.ceil(t) - 1, Math.ceil(t)])].filter(
            (t) => t >= fromMs && t < horizon,
          );
          for (const t of checks) expect(bytesAt(pieces, t), `at ${t}`).toBeLessThanOrEqual(limitBytes);
          if (at !== undefined) {
            expect(at).toBeGreaterThanOrEqual(fromMs);
            expect(bytesAt(pieces, at)).toBeGreaterThan(limitBytes);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
