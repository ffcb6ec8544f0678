import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frameRecord, RecordReader } from '../../src/wire/recordio.js';

const text = (records: readonly Buffer[]) => records.map((r) => r.toString('latin1'));

const RECORDS = ['a', 'hello world', '{"type":"HEARTBEAT"}', 'x'.repeat(1000), '\n\n12\n'];
const STREAM = Buffer.concat(RECORDS.map((r) => frameRecord(Buffer.from(r, 'latin1'))));

describe('frameRecord', () => {
  it('writes the byte length in ASCII decimal, a newline, then the record', () => {
    expect(frameRecord('hello').toString()).toBe('5\nhello');
    expect(frameRecord('é').toString('latin1')).toBe('2\n\xc3\xa9');
    expect(frameRecord(new Uint8Array(12)).subarray(0, 3).toString()).toBe('12\n');
  });

  it('frames only the view of a Uint8Array, not its whole buffer', () => {
    const whole = Uint8Array.from([1, 2, 3, 4, 5, 6]);
    expect([...frameRecord(whole.subarray(2, 4))]).toEqual([0x32, 0x0a, 3, 4]);
  });

  it('rejects empty records', () => {
    expect(() => frameRecord('')).toThrow(/never empty/);
    expect(() => frameRecord(new Uint8Array(0))).toThrow(/never empty/);
  });
});

describe('RecordReader', () => {
  it('reads several records from one chunk', () => {
    const reader = new RecordReader();
    expect(text(reader.push(STREAM))).toEqual(RECORDS);
    expect(reader.pending).toBe(0);
  });

  it('reads the same records whatever byte the stream is split at', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const reader = new RecordReader();
      const records = [...reader.push(STREAM.subarray(0, cut)), ...reader.push(STREAM.subarray(cut))];
      expect(text(records), `split at ${cut}`).toEqual(RECORDS);
      expect(reader.pending).toBe(0);
    }
  });

  it('reads the same records fed one byte at a time', () => {
    const reader = new RecordReader();
    const records: Buffer[] = [];
    for (let i = 0; i < STREAM.length; i++) records.push(...reader.push(STREAM.subarray(i, i + 1)));
    expect(text(records)).toEqual(RECORDS);
  });

  it('reads any records under any chunking', () => {
    const records = fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(records, fc.array(fc.nat(), { maxLength: 10 }), (list, cuts) => {
        const stream = Buffer.concat(list.map((r) => frameRecord(r)));
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const reader = new RecordReader();
        const out: Buffer[] = [];
        let from = 0;
        for (const to of [...points, stream.length]) {
          out.push(...reader.push(stream.subarray(from, to)));
          from = to;
        }
        expect(out.map((b) => [...b])).toEqual(list.map((r) => [...r]));
        expect(reader.pending).toBe(0);
      }),
    );
  });

  it('keeps a truncated final record pending: no record, no error', () => {
    const reader = new RecordReader();
    const partial = Buffer.concat([frameRecord('first'), Buffer.from('10\nabc')]);
    expect(text(reader.push(partial))).toEqual(['first']);
    expect(reader.pending).toBe(6);
    expect(reader.push(Buffer.alloc(0))).toEqual([]);
    expect(text(reader.push(Buffer.from('defghij')))).toEqual(['abcdefghij']);
  });

  it('keeps a length prefix without its newline pending', () => {
    const reader = new RecordReader();
    expect(reader.push(Buffer.from('12345'))).toEqual([]);
    expect(reader.pending).toBe(5);
  });

  it.each([
    ['letters', 'abc\nxyz', "recordio: bad length prefix 'abc'"],
    ['a sign', '-5\nhello', "recordio: bad length prefix '-5'"],
    ['a space', ' 5\nhello', "recordio: bad length prefix ' 5'"],
    ['a leading zero', '05\nhello', "recordio: bad length prefix '05'"],
    ['a carriage return', '5\r\nhello', "recordio: bad length prefix '5\r'"],
    ['an empty prefix', '\nhello', "recordio: bad length prefix ''"],
  ])('throws a clear error on a malformed length prefix: %s', (_name, input, message) => {
    expect(() => new RecordReader().push(Buffer.from(input))).toThrow(message);
  });

  it('throws once a prefix grows past 20 digits without a newline', () => {
    expect(() => new RecordReader().push(Buffer.from('1'.repeat(21)))).toThrow('recordio: length prefix too long');
  });

  it('rejects an empty record', () => {
    expect(() => new RecordReader().push(Buffer.from('0\n'))).toThrow("recordio: bad length prefix '0'");
  });

  it('hands out records that later changes to the input chunk do not touch', () => {
    const reader = new RecordReader();
    const chunk = frameRecord('stable');
    const [record] = reader.push(chunk);
    chunk.fill(0);
    expect(record?.toString()).toBe('stable');
  });
});
