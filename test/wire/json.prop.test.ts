import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeJson, encodeJson } from '../../src/wire/json.js';
import { messageType } from '../../src/wire/schema.js';
import { messageArbitrary, withDefaults } from './message-arbitrary.js';

// Failures print fast-check's seed and path; rerun with them in fc.assert.
const settings = { numRuns: 150, verbose: 1 } as const;

const typeNames = [
  'mesos.v1.scheduler.Call',
  'mesos.v1.scheduler.Event',
  'mesos.v1.executor.Call',
  'mesos.v1.executor.Event',
  'mesos.v1.master.Call',
  'mesos.v1.agent.Call',
  'mesos.v1.quota.QuotaConfig',
];

describe.each(typeNames)('%s JSON round trip', (typeName) => {
  const type = messageType(typeName);
  const messages = messageArbitrary(type, 4);

  it('decodes what it encodes, with defaults filled in', () => {
    fc.assert(
      fc.property(messages, (msg) => {
        const result = decodeJson(typeName, encodeJson(typeName, msg));
        expect(result).toEqual({ ok: true, value: withDefaults(type, msg) });
      }),
      settings,
    );
  });

  it('writes one line of printable ASCII that any JSON parser reads', () => {
    fc.assert(
      fc.property(messages, (msg) => {
        const text = encodeJson(typeName, msg);
        expect(text).toMatch(/^[\x20-\x7e]*$/);
        expect(() => JSON.parse(text) as unknown).not.toThrow();
      }),
      settings,
    );
  });

  it('reaches a fixed point after one decode', () => {
    fc.assert(
      fc.property(messages, (msg) => {
        const once = decodeJson<object>(typeName, encodeJson(typeName, msg));
        if (!once.ok) throw new Error(once.error);
        const text = encodeJson(typeName, once.value);
        const twice = decodeJson<object>(typeName, text);
        if (!twice.ok) throw new Error(twice.error);
        expect(encodeJson(typeName, twice.value)).toBe(text);
      }),
      settings,
    );
  });
});
