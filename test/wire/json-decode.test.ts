import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { mesos } from '../../src/wire/generated/types.js';
import { decodeJson, type DecodeResult } from '../../src/wire/json.js';

type Call = mesos.v1.scheduler.Call;

const CALL = 'mesos.v1.scheduler.Call';
const PREFIX = 'Failed to convert JSON into Call protobuf: ';

function ok<T>(result: DecodeResult<T>): T {
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

function errorOf(typeName: string, json: unknown, label?: string): string {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  const result = decodeJson(typeName, text, label);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error;
}

const framework = { user: 'u', name: 'n' };

describe('JSON syntax and top level', () => {
  it('reports malformed JSON', () => {
    expect(errorOf(CALL, '{"type":')).toMatch(/^Failed to parse body into JSON: /);
    expect(errorOf(CALL, '')).toMatch(/^Failed to parse body into JSON: /);
  });

  it('requires an object at the top level', () => {
    expect(errorOf(CALL, [])).toBe(`${PREFIX}Expecting a JSON object`);
    expect(errorOf(CALL, '"SUBSCRIBE"')).toBe(`${PREFIX}Expecting a JSON object`);
  });

  it('uses the caller label', () => {
    expect(errorOf('mesos.v1.master.Call', '1', 'master::Call')).toBe(
      'Failed to convert JSON into master::Call protobuf: Expecting a JSON object',
    );
  });
});

describe('field matching', () => {
  it('ignores unknown and camelCase keys, and treats null as unset', () => {
    const call = ok(
      decodeJson<Call>(
        CALL,
        JSON.stringify({
          type: 'REVIVE',
          frameworkId: { value: 'x' },
          framework_id: null,
          revive: { roles: null, extra: true },
        }),
      ),
    );
    expect(call).toEqual({ type: 'REVIVE', revive: {} });
    expect(Object.keys(call).sort()).toEqual(['revive', 'type']);
  });

  it('omits repeated fields that end up empty', () => {
    const call = ok(decodeJson<Call>(CALL, '{"type":"REVIVE","revive":{"roles":[]},"suppress":{"roles":null}}'));
    expect(call.revive).toEqual({});
    expect('roles' in (call.revive ?? {})).toBe(false);
    expect(call.suppress).toEqual({});
  });

  it('requires an array on a repeated field, naming the field', () => {
    expect(errorOf(CALL, { suppress: { roles: 'a' } })).toBe(
      `${PREFIX}Expecting a JSON array for field 'roles', not a JSON string`,
    );
    expect(errorOf(CALL, { decline: { offer_ids: { value: 'o' } } })).toBe(
      `${PREFIX}Expecting a JSON array for field 'offer_ids', not a JSON object`,
    );
  });

  it('rejects null and arrays inside an array instead of skipping or flattening them', () => {
    expect(errorOf(CALL, { suppress: { roles: [null] } })).toBe(
      `${PREFIX}Not expecting a JSON null in the array of field 'roles'`,
    );
    expect(errorOf(CALL, { revive: { roles: [['b'], 'c'] } })).toBe(
      `${PREFIX}Not expecting a JSON array in the array of field 'roles'`,
    );
    expect(errorOf(CALL, { suppress: { roles: ['a', 1] } })).toBe(
      `${PREFIX}Not expecting a JSON number for field 'roles'`,
    );
  });

  it('refuses arrays nested far deeper than any stack, without recursing into them', () => {
    for (const depth of [7_000, 1_000_000]) {
      const text = `{"suppress":{"roles":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      expect(errorOf(CALL, text)).toBe(`${PREFIX}Not expecting a JSON array in the array of field 'roles'`);
    }
    const objects = `{"framework_id":{"value":"f","x":${'{"x":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`;
    expect(ok(decodeJson<Call>(CALL, objects)).framework_id).toEqual({ value: 'f' });
  });

  it('rejects an array on a non-repeated field', () => {
    expect(errorOf(CALL, { type: ['SUBSCRIBE'] })).toBe(`${PREFIX}Not expecting a JSON array for field 'type'`);
  });

  it('rejects a wrong JSON kind for a message field', () => {
    expect(errorOf(CALL, { framework_id: 'f-1' })).toBe(
      `${PREFIX}Not expecting a JSON string for field 'framework_id'`,
    );
    expect(errorOf(CALL, { framework_id: 1 })).toBe(`${PREFIX}Not expecting a JSON number for field 'framework_id'`);
    expect(errorOf(CALL, { framework_id: { value: {} } })).toBe(
      `${PREFIX}Not expecting a JSON object for field 'value'`,
    );
  });

  it('keeps the last member of a oneof', () => {
    const constraint = ok(
      decodeJson<mesos.v1.scheduler.AttributeConstraint.Selector>(
        'mesos.v1.scheduler.AttributeConstraint.Selector',
        '{"pseudoattribute_type":"HOSTNAME","attribute_name":"rack"}',
      ),
    );
    // Keys are applied in sorted order: attribute_name, then pseudoattribute_type.
    expect(constraint).toEqual({ pseudoattribute_type: 'HOSTNAME' });
  });
});

describe('enums', () => {
  it('accepts value names only', () => {
    expect(errorOf(CALL, { type: 1 })).toBe(`${PREFIX}Not expecting a JSON number for field 'type'`);
  });

  it('drops an unknown name on optional and repeated fields', () => {
    const call = ok(
      decodeJson<Call>(
        CALL,
        JSON.stringify({
          type: 'NOT_A_CALL',
          subscribe: {
            framework_info: { ...framework, capabilities: [{ type: 'TELEPATHY' }, { type: 'MULTI_ROLE' }] },
          },
        }),
      ),
    );
    expect(call).toEqual({
      subscribe: {
        framework_info: { ...framework, capabilities: [{}, { type: 'MULTI_ROLE' }] },
      },
    });
  });

  it('rejects an unknown name on a required field', () => {
    expect(errorOf('mesos.v1.Resource', { name: 'cpus', type: 'FLOAT' }, 'Resource')).toBe(
      "Failed to convert JSON into Resource protobuf: Failed to find enum for 'FLOAT'",
    );
  });

  it('reads an alias as the first declared name', () => {
    const info = ok(decodeJson<mesos.v1.ContainerInfo>('mesos.v1.ContainerInfo', '{"type":"CLUSTER"}'));
    expect(info).toEqual({ type: 'MESOS' });
  });
});

describe('numbers, booleans and bytes', () => {
  const T = 'mesos.v1.HealthCheck';

  it('accepts numbers and numeric strings', () => {
    const hc = ok(
      decodeJson<mesos.v1.HealthCheck>(
        T,
        JSON.stringify({
          delay_seconds: '1.5',
          interval_seconds: 2,
          consecutive_failures: '4',
          http: { port: 8080, statuses: ['200', 204] },
        }),
      ),
    );
    expect(hc).toEqual({
      delay_seconds: 1.5,
      interval_seconds: 2,
      consecutive_failures: 4,
      http: { port: 8080, statuses: [200, 204] },
    });
  });

  it('accepts Infinity strings on doubles only', () => {
    const hc = ok(decodeJson<mesos.v1.HealthCheck>(T, '{"delay_seconds":"Infinity","timeout_seconds":"-Infinity"}'));
    expect(hc).toEqual({ delay_seconds: Infinity, timeout_seconds: -Infinity });
    expect(errorOf(T, { consecutive_failures: 'Infinity' }, 'HealthCheck')).toBe(
      "Failed to convert JSON into HealthCheck protobuf: Failed to convert 'Infinity' to uint32 for field 'consecutive_failures'",
    );
  });

  it('rejects non-integers, out-of-range and non-numeric values on integer fields', () => {
    const p = 'Failed to convert JSON into HealthCheck protobuf: ';
    expect(errorOf(T, { consecutive_failures: 1.5 }, 'HealthCheck')).toBe(
      `${p}Failed to convert '1.5' to uint32 for field 'consecutive_failures'`,
    );
    expect(errorOf(T, { consecutive_failures: -1 }, 'HealthCheck')).toBe(
      `${p}Failed to convert '-1' to uint32 for field 'consecutive_failures'`,
    );
    expect(errorOf(T, { delay_seconds: 'soon' }, 'HealthCheck')).toBe(
      `${p}Failed to convert 'soon' to double for field 'delay_seconds'`,
    );
    expect(errorOf('mesos.v1.Address', { port: 2 ** 31 }, 'Address')).toMatch(/to int32 for field 'port'$/);
  });

  it('accepts booleans and their string forms', () => {
    const T2 = 'mesos.v1.FrameworkInfo';
    expect(ok(decodeJson<mesos.v1.FrameworkInfo>(T2, '{"user":"u","name":"n","checkpoint":"true"}'))).toEqual({
      ...framework,
      checkpoint: true,
    });
    expect(ok(decodeJson<mesos.v1.FrameworkInfo>(T2, '{"user":"u","name":"n","checkpoint":false}'))).toEqual({
      ...framework,
      checkpoint: false,
    });
    expect(errorOf(T2, { ...framework, checkpoint: 1 })).toBe(
      `${PREFIX}Not expecting a JSON number for field 'checkpoint'`,
    );
    expect(errorOf(T2, { ...framework, name: true })).toBe(`${PREFIX}Not expecting a JSON boolean for field 'name'`);
  });

  it('decodes base64 bytes, skipping whitespace and stopping at the first =', () => {
    const T3 = 'mesos.v1.UUID';
    const value = ok(decodeJson<mesos.v1.UUID>(T3, '{"value":"AQ I\\nD=garbage"}')).value;
    expect(value).toBeInstanceOf(Uint8Array);
    expect([...value]).toEqual([1, 2, 3]);
    expect([...ok(decodeJson<mesos.v1.UUID>(T3, '{"value":""}')).value]).toEqual([]);
  });

  it('rejects invalid base64', () => {
    expect(errorOf('mesos.v1.UUID', { value: 'AQ*D' }, 'UUID')).toBe(
      "Failed to convert JSON into UUID protobuf: Failed to base64 decode bytes field 'value': Invalid character '*'",
    );
    expect(errorOf('mesos.v1.UUID', { value: 'AQIDB' }, 'UUID')).toBe(
      "Failed to convert JSON into UUID protobuf: Failed to base64 decode bytes field 'value': Invalid length",
    );
  });
});

describe('maps', () => {
  it('takes an object', () => {
    const config = ok(
      decodeJson<mesos.v1.quota.QuotaConfig>(
        'mesos.v1.quota.QuotaConfig',
        '{"role":"r","guarantees":{"mem":{"value":"64"},"cpus":{"value":1}},"limits":{}}',
      ),
    );
    expect(config).toEqual({ role: 'r', guarantees: { cpus: { value: 1 }, mem: { value: 64 } } });
  });

  it('keeps __proto__ as an ordinary key', () => {
    const config = ok(
      decodeJson<mesos.v1.quota.QuotaConfig>(
        'mesos.v1.quota.QuotaConfig',
        '{"role":"r","limits":{"__proto__":{"value":1}}}',
      ),
    );
    expect(Object.getPrototypeOf(config.limits)).toBe(Object.prototype);
    expect(Object.keys(config.limits ?? {})).toEqual(['__proto__']);
  });

  it('rejects a non-object', () => {
    expect(errorOf('mesos.v1.quota.QuotaConfig', { role: 'r', limits: 'none' }, 'QuotaConfig')).toBe(
      "Failed to convert JSON into QuotaConfig protobuf: Not expecting a JSON string for field 'limits'",
    );
    expect(errorOf('mesos.v1.quota.QuotaConfig', { role: 'r', limits: [{ cpus: { value: 1 } }] }, 'QuotaConfig')).toBe(
      "Failed to convert JSON into QuotaConfig protobuf: Not expecting a JSON array for field 'limits'",
    );
  });
});

describe('required fields', () => {
  it('reports missing fields with dotted paths', () => {
    expect(errorOf(CALL, { type: 'SUBSCRIBE', subscribe: { framework_info: { name: 'n' } } })).toBe(
      `${PREFIX}Missing required fields: subscribe.framework_info.user`,
    );
  });

  it('lists own fields in declaration order, then sub-messages by number', () => {
    const json = {
      type: 'ACKNOWLEDGE',
      acknowledge: { task_id: {} },
      kill: { agent_id: {} },
      reconcile: { tasks: [{ task_id: { value: 't' } }, { agent_id: { value: 'a' } }] },
    };
    expect(errorOf(CALL, json)).toBe(
      `${PREFIX}Missing required fields: kill.task_id, kill.agent_id.value, ` +
        'acknowledge.agent_id, acknowledge.uuid, acknowledge.task_id.value, ' +
        'reconcile.tasks[1].task_id',
    );
  });

  it('checks map values', () => {
    const json = { role: 'r', limits: { cpus: {}, mem: { value: 1 } } };
    expect(errorOf('mesos.v1.quota.QuotaConfig', json, 'QuotaConfig')).toBe(
      'Failed to convert JSON into QuotaConfig protobuf: Missing required fields: limits[0].value.value',
    );
  });

  it('requires executor_id and framework_id on an executor Call', () => {
    expect(errorOf('mesos.v1.executor.Call', { type: 'HEARTBEAT' })).toBe(
      `${PREFIX}Missing required fields: executor_id, framework_id`,
    );
  });
});

/** An array index as a key is listed first by every object, whatever the order it was set in. */
const notAnIndex = (key: string): boolean => !/^(0|[1-9][0-9]*)$/.test(key);

describe('key order', () => {
  // Keys are visited sorted, as upstream's JSON object (a sorted map) is: a map field's entries come out in that order,
  // whether the object has a handful of keys (sorted in place) or many (sorted by sort()).
  it('visits an object of any size in sorted key order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }).filter(notAnIndex), { maxLength: 40 }),
        (names) => {
          const guarantees = Object.fromEntries(names.map((name, i) => [name, { value: i }]));
          const decoded = ok(
            decodeJson<{ guarantees?: Record<string, unknown> }>(
              'mesos.v1.quota.QuotaConfig',
              JSON.stringify({ role: 'r', guarantees }),
            ),
          );
          expect(Object.keys(decoded.guarantees ?? {})).toEqual(Object.keys(guarantees).sort());
        },
      ),
      { numRuns: 200 },
    );
  });
});
