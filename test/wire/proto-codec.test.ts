import fc from 'fast-check';
import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { decodeJson } from '../../src/wire/json.js';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { root } from '../../src/wire/schema.js';

const CALL = 'mesos.v1.scheduler.Call';
const FAILED = { ok: false, error: 'Failed to parse body into Call protobuf' };
const SUBSCRIBE = { type: 'SUBSCRIBE', subscribe: { framework_info: { user: 'root', name: 'codec' } } };

/** A tag byte for fields 1..15. Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
const tag = (field: number, wireType: number) => (field << 3) | wireType;
const bytes = (...parts: (number | string)[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from([p]))));

interface WireField {
  readonly number: number;
  readonly wireType: number;
  /** The varint value (wire type 0) or the payload (wire type 2). */
  readonly value: number | Uint8Array;
}

/** The top-level fields of an encoded message, in the order they were written. */
function fieldsOf(encoded: Uint8Array): WireField[] {
  const reader = protobuf.Reader.create(encoded);
  const out: WireField[] = [];
  while (reader.pos < reader.len) {
    const key = reader.uint32();
    const number = key >>> 3;
    const wireType = key & 7;
    if (wireType === 0) out.push({ number, wireType, value: reader.uint32() });
    else if (wireType === 2) out.push({ number, wireType, value: Uint8Array.from(reader.bytes()) });
    else reader.skipType(wireType);
  }
  return out;
}

function field(encoded: Uint8Array, ...path: number[]): WireField | undefined {
  const [head, ...rest] = path;
  const found = fieldsOf(encoded).find((f) => f.number === head);
  if (found === undefined || rest.length === 0) return found;
  return found.value instanceof Uint8Array ? field(found.value, ...rest) : undefined;
}

describe('decodeProto: bad bodies are a value, never a throw', () => {
  it('random bytes either decode or give the parse error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (input) => {
        const result = decodeProto(CALL, Buffer.from(input));
        if (!result.ok) expect(result).toEqual(FAILED);
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['a lone tag', bytes(tag(2, 0))],
    ['a varint that never ends', bytes(tag(2, 0), 0xff, 0xff, 0xff)],
    ['a varint longer than ten bytes', bytes(tag(2, 0), ...Array<number>(11).fill(0xff), 0x01)],
    ['a length running past the end', bytes(tag(3, 2), 0x05, 0x0a)],
    ['an end-group without a group', bytes(0x0c)],
    ['a group that never ends', bytes(0x7b, 0x08, 0x01)],
    ['wire type 6', bytes(0x0e)],
    ['wire type 7', bytes(0x0f)],
    ['the JSON text of a call', Buffer.from(JSON.stringify(SUBSCRIBE))],
    ['all ones', Buffer.alloc(16, 0xff)],
  ])('garbage: %s', (_name, input) => {
    expect(decodeProto(CALL, input)).toEqual(FAILED);
  });

  it('fails at every truncation inside a nested message', () => {
    const whole = Buffer.from(encodeProto(CALL, SUBSCRIBE));
    // type (field 2) comes first, then subscribe (field 3, length-delimited) from byte 2 to the end.
    expect([...whole.subarray(0, 3)]).toEqual([tag(2, 0), 1, tag(3, 2)]);
    expect(decodeProto(CALL, whole.subarray(0, 2))).toEqual({ ok: true, value: { type: 'SUBSCRIBE' } });
    for (let cut = 3; cut < whole.length; cut++) {
      expect(decodeProto(CALL, whole.subarray(0, cut)), `cut at ${cut} of ${whole.length}`).toEqual(FAILED);
    }
  });

  it.each([
    ['Kill without task_id', bytes(tag(2, 0), 6, tag(6, 2), 0)],
    ['FrameworkInfo without name', bytes(tag(2, 0), 1, tag(3, 2), 5, tag(1, 2), 3, tag(1, 2), 1, 'u')],
    ['Acknowledge without uuid', bytes(tag(8, 2), 6, tag(1, 2), 4, tag(1, 2), 2, 'ag')],
    ['a FrameworkID without value', bytes(tag(1, 2), 0)],
  ])('fails on a message missing a required field: %s', (_name, input) => {
    expect(decodeProto(CALL, input)).toEqual(FAILED);
  });

  it.each([
    ['framework_id (a message) as a varint', bytes(tag(1, 0), 5)],
    ['subscribe (a message) as a varint', bytes(tag(3, 0), 0)],
    ['type (an enum) as fixed64', bytes(tag(2, 1), 1, 0, 0, 0, 0, 0, 0, 0)],
    ['type (an enum) as fixed32', bytes(tag(2, 5), 1, 0, 0, 0)],
    ['type (an enum) as a length-delimited field', bytes(tag(2, 2), 1, 1)],
    [
      'message.data (bytes) as a varint',
      bytes(tag(2, 0), 10, tag(10, 2), 8, tag(1, 2), 1, 'a', tag(2, 2), 1, 'e', tag(3, 0), 7),
    ],
  ])('fails on a wrong wire type: %s', (_name, input) => {
    expect(decodeProto(CALL, input)).toEqual(FAILED);
  });

  // protobufjs alone does not check the wire type of a known field (nor
  // reject field number 0): these would be misread instead of rejected.
  it.each([
    ['type (an enum) as an empty length-delimited field, read as UNKNOWN', bytes(tag(2, 2), 0)],
    ['revive (a message) as a varint, read as an empty Revive', bytes(0x78, 0)],
    ["framework_id.value (a string) as a varint 0, read as ''", bytes(tag(1, 2), 2, tag(1, 0), 0)],
    ['field number 0', bytes(0x00, 0x01)],
  ])('fails on a wrong wire type that protobufjs alone would misread: %s', (_name, input) => {
    expect(decodeProto(CALL, input)).toEqual(FAILED);
  });
});

describe('decodeProto: unknown enum numbers, as the JSON decoder treats unknown names', () => {
  // protobufjs alone hands the number through (`type: 99`), which the route
  // would handle as an UNKNOWN call (501) where JSON gets 400. Upstream drops
  // an unknown value of an optional enum, and fails when the enum is required.
  it('drops an unknown value of an optional enum field', () => {
    expect(decodeJson(CALL, '{"type":"NO_SUCH_TYPE"}')).toEqual({ ok: true, value: {} });
    expect(decodeProto(CALL, bytes(tag(2, 0), 99))).toEqual({ ok: true, value: {} });
  });

  it('fails on an unknown value of a required enum field', () => {
    expect(decodeJson('mesos.v1.Resource', '{"name":"c","type":"NO_SUCH_TYPE"}').ok).toBe(false);
    expect(decodeProto('mesos.v1.Resource', bytes(tag(1, 2), 1, 'c', tag(2, 0), 99)).ok).toBe(false);
  });
});

describe('encodeProto: proto2 required fields', () => {
  it('writes a required enum at its zero value: TaskStatus.state TASK_STARTING', () => {
    expect(root.lookupEnum('mesos.v1.TaskState').values['TASK_STARTING']).toBe(0);
    const encoded = encodeProto('mesos.v1.TaskStatus', { task_id: { value: 't' }, state: 'TASK_STARTING' });
    expect(field(encoded, 2)).toEqual({ number: 2, wireType: 0, value: 0 });
  });

  it('writes a required enum at its zero value: Resource.type SCALAR', () => {
    expect(root.lookupEnum('mesos.v1.Value.Type').values['SCALAR']).toBe(0);
    const encoded = encodeProto('mesos.v1.Resource', { name: 'cpus', type: 'SCALAR', scalar: { value: 1 } });
    expect(field(encoded, 2)).toEqual({ number: 2, wireType: 0, value: 0 });
  });

  it('writes them inside events too: Event.update.status.state', () => {
    const event = {
      type: 'UPDATE',
      update: { status: { task_id: { value: 't' }, state: 'TASK_STARTING', source: 'SOURCE_EXECUTOR' } },
    };
    const encoded = encodeProto('mesos.v1.scheduler.Event', event);
    expect(field(encoded, 5, 1, 2)).toEqual({ number: 2, wireType: 0, value: 0 });
  });

  it('leaves an unset optional field out', () => {
    const encoded = encodeProto('mesos.v1.TaskStatus', { task_id: { value: 't' }, state: 'TASK_RUNNING' });
    expect(fieldsOf(encoded).map((f) => f.number)).toEqual([1, 2]);
  });
});

describe('encodeProto / decodeProto: 64-bit integers and bytes', () => {
  const killWithGrace = (nanoseconds: number) => ({
    type: 'KILL',
    framework_id: { value: 'f' },
    kill: { task_id: { value: 't' }, kill_policy: { grace_period: { nanoseconds } } },
  });
  const graceOf = (result: ReturnType<typeof decodeProto>) =>
    result.ok
      ? (result.value as ReturnType<typeof killWithGrace>).kill.kill_policy.grace_period.nanoseconds
      : undefined;

  it.each([
    0,
    1,
    -1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32 + 1,
    2 ** 53 - 1,
    -(2 ** 53 - 1),
  ])('int64 %d round trips', (n) => {
    expect(graceOf(decodeProto(CALL, encodeProto(CALL, killWithGrace(n))))).toBe(n);
  });

  it('int64 round trips over the whole safe range', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => graceOf(decodeProto(CALL, encodeProto(CALL, killWithGrace(n)))) === n),
    );
  });

  it('writes a negative int64 as a ten-byte varint', () => {
    expect([...encodeProto('mesos.v1.DurationInfo', { nanoseconds: -1 })]).toEqual([
      0x08,
      ...Array<number>(9).fill(0xff),
      0x01,
    ]);
  });

  it('keeps a nanosecond timestamp beyond 2^53 as the same double', () => {
    const nanoseconds = 1_700_000_000_123_456_800;
    const result = decodeProto<{ nanoseconds: number }>(
      'mesos.v1.TimeInfo',
      encodeProto('mesos.v1.TimeInfo', { nanoseconds }),
    );
    expect(result).toEqual({ ok: true, value: { nanoseconds } });
  });

  it('uint64 round trips: Value.Range begin and end', () => {
    const range = { begin: 0, end: 2 ** 53 - 1 };
    expect(decodeProto('mesos.v1.Value.Range', encodeProto('mesos.v1.Value.Range', range))).toEqual({
      ok: true,
      value: range,
    });
  });

  const message = (data: Uint8Array) => ({
    type: 'MESSAGE',
    framework_id: { value: 'f' },
    message: { agent_id: { value: 'a' }, executor_id: { value: 'e' }, data },
  });
  const dataOf = (result: ReturnType<typeof decodeProto>) =>
    result.ok ? [...(result.value as ReturnType<typeof message>).message.data] : undefined;

  it('bytes round trip: every byte value, and an empty (but present) required field', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(dataOf(decodeProto(CALL, encodeProto(CALL, message(all))))).toEqual([...all]);
    const empty = encodeProto(CALL, message(new Uint8Array(0)));
    expect(field(empty, 10, 3)).toEqual({ number: 3, wireType: 2, value: new Uint8Array(0) });
    expect(dataOf(decodeProto(CALL, empty))).toEqual([]);
  });

  it('bytes round trip: any content', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        expect(dataOf(decodeProto(CALL, encodeProto(CALL, message(data))))).toEqual([...data]);
      }),
    );
  });

  // protobufjs alone hands out Node Buffers (slices of the request body),
  // decodeJson plain Uint8Arrays; both must give the same value.
  it('bytes decode to the same plain Uint8Array as from JSON', () => {
    const text = JSON.stringify({
      ...message(new Uint8Array(0)),
      message: { agent_id: { value: 'a' }, executor_id: { value: 'e' }, data: 'AQID' },
    });
    const viaJson = decodeJson<object>(CALL, text);
    if (!viaJson.ok) throw new Error(viaJson.error);
    expect(decodeProto(CALL, Buffer.from(encodeProto(CALL, viaJson.value)))).toStrictEqual(viaJson);
  });
});
