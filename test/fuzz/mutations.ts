/**
 * Arbitraries of the body mutations of `mutate.ts`: at most a few per body,
 * each aimed at a fraction of the body so that it lands anywhere.
 */
import fc from 'fast-check';
import type { ByteMutation, Json, JsonMutation, ProtoMutation } from './mutate.js';

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
// Uniform over the body: fast-check's doubles lean to 0, which would aim every mutation at the root.
const at = fc.nat({ max: 9_999 }).map((n) => n / 10_000);

/** A value of some JSON type, a wrong one for most fields. */
const anyJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, '', 'x', [], {}, [null], { value: 1 }, [[]], 2 ** 64),
  fc.string({ maxLength: 8 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

/** Strings a number parser must refuse or read with care. */
const numberLikeString = fc.constantFrom(
  'NaN',
  'nan',
  'Infinity',
  '-Infinity',
  'inf',
  '+Infinity',
  '1e999',
  '-1e999',
  '1e-999',
  '0x10',
  '0b1',
  '0o7',
  '1_000',
  ' 1',
  '1 ',
  '',
  '+1',
  '-0',
  '.5',
  '5.',
  '01',
  '1e',
  '--1',
  '9223372036854775808',
  '18446744073709551616',
  '-9223372036854775809',
  '4.0',
  '1,5',
  '١',
);
/** Literal text where a value goes: numbers out of every range, bare words JSON does not have. */
const literal = fc.constantFrom(
  'NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  '1e999',
  '-1e999',
  '1e-999',
  '-0',
  '0.0000000000000000000001',
  '18446744073709551616',
  '9223372036854775807',
  '-9223372036854775809',
  '123456789012345678901234567890',
  '1E+2',
  '0x10',
  '01',
  '.5',
  "'x'",
  'tru',
  '"\\ud800"',
  '"\\u0000"',
  '"\\x41"',
);
const enumName = fc.oneof(
  fc.constantFrom(
    'UNKNOWN',
    'subscribe',
    'Accept',
    'LAUNCH ',
    'TASK_RUNNING',
    'SCALAR',
    'NOT_A_VALUE',
    '',
    '0',
    '3',
    'ACCEPT\u0000',
  ),
  fc.stringMatching(/^[A-Z_]{1,16}$/),
);

/** Nesting a little, and as deep as a recursive parser would overflow. */
const depth = fc.oneof(fc.integer({ min: 1, max: 50 }), fc.constantFrom(1000, 10_000, 100_000));
/** Up to a million units: each as one byte, two, three, four, or six when escaped (`\u0000`). */
const hugeLength = fc.oneof(fc.integer({ min: 1000, max: 70_000 }), fc.constantFrom(300_000, 1_000_000));
const hugeUnit = fc.constantFrom('x', 'é', '\u20ac', '\ud83d\ude00', '\\', '"', '\u0000', '%');
const growth = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom(1_000, 5_000, 20_000));
const key = fc.oneof(
  fc.constantFrom('type', 'value', '__proto__', 'constructor', 'framework_id', ''),
  fc.string({ maxLength: 6 }),
);
const kind = <K extends JsonMutation['kind']>(k: K) => fc.constant(k);

export const jsonMutations: fc.Arbitrary<JsonMutation[]> = fc.array(
  fc.oneof(
    w(4, fc.record({ kind: kind('replace'), at, value: anyJson })),
    w(2, fc.record({ kind: kind('replace'), at, value: numberLikeString })),
    w(2, fc.record({ kind: kind('stringify'), at })),
    w(2, fc.record({ kind: kind('enum'), at, name: enumName })),
    w(1, fc.record({ kind: kind('nest'), at, depth, bracket: fc.constantFrom('[' as const, '{' as const) })),
    w(1, fc.record({ kind: kind('huge'), at, length: hugeLength, unit: hugeUnit })),
    w(2, fc.record({ kind: kind('literal'), at, text: literal })),
    w(2, fc.record({ kind: kind('repeat-key'), at, value: anyJson, before: fc.boolean() })),
    w(2, fc.record({ kind: kind('drop'), at })),
    w(1, fc.record({ kind: kind('grow'), at, times: growth })),
    w(1, fc.record({ kind: kind('add-key'), at, key, value: anyJson })),
  ),
  { maxLength: 3 },
);

/** Bytes UTF-8 and protobuf readers trip on: NUL, a lone lead byte, an encoded surrogate, a BOM, an eleven-byte varint. */
const oddBytes = fc.constantFrom<number[]>(
  [0],
  [0xff],
  [0xc3],
  [0xed, 0xa0, 0x80],
  [0xef, 0xbb, 0xbf],
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
);

export const byteMutations: fc.Arbitrary<ByteMutation[]> = fc.oneof(
  w(3, fc.constant<ByteMutation[]>([])),
  w(
    2,
    fc.array(
      fc.oneof(
        fc.record({ kind: fc.constant('truncate' as const), keep: at }),
        fc.record({ kind: fc.constant('flip' as const), at, bit: fc.nat({ max: 7 }) }),
        fc.record({
          kind: fc.constant('insert' as const),
          at,
          bytes: fc.oneof(oddBytes, fc.array(fc.nat({ max: 255 }), { maxLength: 8 })),
        }),
        fc.record({ kind: fc.constant('delete' as const), at, count: fc.integer({ min: 1, max: 16 }) }),
      ),
      { minLength: 1, maxLength: 2 },
    ),
  ),
);

/** Field numbers the Call and its payloads use, and a few no message has. */
const fieldNumber = fc.oneof(w(6, fc.integer({ min: 1, max: 20 })), w(1, fc.constantFrom(100, 536870911, 19000, 0)));
const payload = fc.oneof(
  fc.array(fc.nat({ max: 255 }), { maxLength: 12 }),
  // Varints of ten bytes and more: the longest legal one, and one too long.
  fc.constantFrom<number[]>(
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
    [0x08, 0x03],
  ),
);

export const protoMutations: fc.Arbitrary<ProtoMutation[]> = fc.array(
  fc.oneof(
    w(3, fc.record({ kind: fc.constant('wire-type' as const), at, wireType: fc.nat({ max: 7 }) })),
    w(
      2,
      fc.record({
        kind: fc.constant('add-field' as const),
        at,
        field: fieldNumber,
        wireType: fc.nat({ max: 7 }),
        payload,
      }),
    ),
    w(
      1,
      fc.record({
        kind: fc.constant('bad-length' as const),
        at,
        length: fc.oneof(fc.nat({ max: 64 }), fc.constantFrom(2 ** 31, 2 ** 32 + 1, 2 ** 53)),
      }),
    ),
  ),
  { maxLength: 3 },
);
