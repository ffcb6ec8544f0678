import { describe, expect, it } from 'vitest';
import type { mesos } from '../../src/wire/generated/types.js';
import { encodeJson } from '../../src/wire/json.js';
import { formatDouble } from '../../src/wire/json-encode.js';

describe('defaults', () => {
  it('writes an unset Filters with its refuse_seconds default', () => {
    expect(encodeJson('mesos.v1.Filters', {})).toBe('{"refuse_seconds":5.0}');
  });

  it('writes FrameworkInfo defaults but not the deprecated role', () => {
    const info: mesos.v1.FrameworkInfo = { user: 'u', name: 'n' };
    expect(encodeJson('mesos.v1.FrameworkInfo', info)).toBe(
      '{"user":"u","name":"n","failover_timeout":0.0,"checkpoint":false}',
    );
  });

  it('writes a deprecated field with a default only when it is set', () => {
    const info: mesos.v1.FrameworkInfo = { user: 'u', name: 'n', role: '*' };
    expect(encodeJson('mesos.v1.FrameworkInfo', info)).toContain(',"role":"*"');
  });

  it('writes enum and integer defaults', () => {
    expect(encodeJson('mesos.v1.Environment.Variable', { name: 'A' })).toBe('{"name":"A","type":"VALUE"}');
    expect(encodeJson('mesos.v1.AgentInfo', { hostname: 'h' })).toBe('{"hostname":"h","port":5051}');
  });

  it('writes an empty message as {}', () => {
    expect(encodeJson('mesos.v1.Resource.RevocableInfo', {})).toBe('{}');
    expect(encodeJson('mesos.v1.Labels', {})).toBe('{}');
  });
});

describe('field selection and order', () => {
  it('follows declaration order, not field numbers', () => {
    const resource: mesos.v1.Resource = {
      name: 'disk',
      type: 'SCALAR',
      scalar: { value: 10 },
      provider_id: { value: 'rp' },
      allocation_info: { role: 'r' },
    };
    expect(encodeJson('mesos.v1.Resource', resource)).toBe(
      '{"provider_id":{"value":"rp"},"name":"disk","type":"SCALAR","scalar":{"value":10.0},' +
        '"allocation_info":{"role":"r"}}',
    );
  });

  it('leaves out empty repeated and map fields and unknown keys', () => {
    const value = { user: 'u', name: 'n', roles: [], offer_filters: {}, extra: 1 };
    expect(encodeJson('mesos.v1.FrameworkInfo', value)).toBe(
      '{"user":"u","name":"n","failover_timeout":0.0,"checkpoint":false}',
    );
  });

  it('writes maps as objects in insertion order', () => {
    const config: mesos.v1.quota.QuotaConfig = {
      role: 'r',
      limits: { mem: { value: 1024 }, cpus: { value: 2.5 } },
    };
    expect(encodeJson('mesos.v1.quota.QuotaConfig', config)).toBe(
      '{"role":"r","limits":{"mem":{"value":1024.0},"cpus":{"value":2.5}}}',
    );
  });
});

describe('scalars', () => {
  it('keeps .0 on whole doubles and writes shortest round-trip digits', () => {
    expect(formatDouble(15)).toBe('15.0');
    expect(formatDouble(1)).toBe('1.0');
    expect(formatDouble(-3)).toBe('-3.0');
    expect(formatDouble(0)).toBe('0.0');
    expect(formatDouble(-0)).toBe('-0.0');
    expect(formatDouble(0.1)).toBe('0.1');
    expect(formatDouble(1 / 3)).toBe('0.3333333333333333');
    expect(formatDouble(1e20)).toBe('100000000000000000000.0');
    expect(formatDouble(1e21)).toBe('1e21');
    expect(formatDouble(1.5e300)).toBe('1.5e300');
    expect(formatDouble(1e-7)).toBe('1e-7');
    expect(formatDouble(0.000001)).toBe('0.000001');
  });

  it('writes non-finite doubles as strings', () => {
    expect(formatDouble(NaN)).toBe('"NaN"');
    expect(formatDouble(Infinity)).toBe('"Infinity"');
    expect(formatDouble(-Infinity)).toBe('"-Infinity"');
  });

  it('writes integers bare, 64-bit ones unquoted', () => {
    expect(encodeJson('mesos.v1.TimeInfo', { nanoseconds: 1700000000123456 })).toBe('{"nanoseconds":1700000000123456}');
    expect(encodeJson('mesos.v1.Value.Range', { begin: 31000, end: 32000 })).toBe('{"begin":31000,"end":32000}');
  });

  it('writes bytes as padded standard base64', () => {
    const value = new Uint8Array([251, 255, 191]);
    expect(encodeJson('mesos.v1.UUID', { value })).toBe('{"value":"+/+/"}');
    expect(encodeJson('mesos.v1.UUID', { value: new Uint8Array([1, 2]) })).toBe('{"value":"AQI="}');
    const slice = new Uint8Array([9, 1, 2, 9]).subarray(1, 3);
    expect(encodeJson('mesos.v1.UUID', { value: slice })).toBe('{"value":"AQI="}');
  });

  it('writes the first declared name of an aliased enum value', () => {
    expect(encodeJson('mesos.v1.ContainerInfo', { type: 'CLUSTER' })).toBe('{"type":"MESOS"}');
  });
});

describe('ASCII output', () => {
  it('escapes every non-ASCII character', () => {
    const text = encodeJson('mesos.v1.Label', { key: 'caf\u00e9 \u4e2d \u{1F600}', value: 'a"b\\c\n' });
    expect(text).toBe('{"key":"caf\\u00e9 \\u4e2d \\ud83d\\ude00","value":"a\\"b\\\\c\\n"}');
    expect(/^[\x20-\x7e]*$/.test(text)).toBe(true);
    expect(JSON.parse(text)).toEqual({ key: 'caf\u00e9 \u4e2d \u{1F600}', value: 'a"b\\c\n' });
  });

  it('escapes DEL (0x7f), which JSON.stringify leaves as it is', () => {
    const text = encodeJson('mesos.v1.Label', { key: 'a\u007fb' });
    expect(text).toBe('{"key":"a\\u007fb"}');
    expect(JSON.parse(text)).toEqual({ key: 'a\u007fb' });
  });

  it('escapes non-ASCII map keys', () => {
    expect(
      encodeJson('mesos.v1.TaskInfo', {
        name: 'n',
        task_id: { value: 't' },
        agent_id: { value: 'a' },
        limits: { '\u00b5': { value: 1 } },
      }),
    ).toContain('"limits":{"\\u00b5":{"value":1.0}}');
  });
});

describe('programming errors', () => {
  it('throws on a value of the wrong shape', () => {
    expect(() => encodeJson('mesos.v1.Label', { key: 5 })).toThrow(
      "Cannot encode number as field 'key' of 'mesos.v1.Label'",
    );
    expect(() => encodeJson('mesos.v1.TaskStatus', { task_id: { value: 't' }, state: 'NOPE' })).toThrow(
      "Cannot encode 'NOPE' as field 'state'",
    );
    expect(() => encodeJson('mesos.v1.Value.Range', { begin: 1.5, end: 2 })).toThrow("field 'begin'");
    expect(() => encodeJson('mesos.v1.NoSuchType', {})).toThrow("Unknown message type 'mesos.v1.NoSuchType'");
  });
});
