/**
 * The UPDATE event's direct writer against the generic encoder: the same
 * text for every status (a status it leaves to the generic writer is
 * written that way too).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scalar } from '../../src/core/model/resources.js';
import { TASK_STATES, type StatusReason, type TaskStatus } from '../../src/core/model/types.js';
import { encodeJson } from '../../src/wire/json-encode.js';
import { eventToJson, eventToWire } from '../../src/wire/scheduler-out.js';
import { updateJson } from '../../src/wire/update-json.js';

// Failures print fast-check's seed and path; rerun with them in fc.assert.
const settings = { numRuns: 400, verbose: 1 } as const;

const REASONS: StatusReason[] = [
  'REASON_COMMAND_EXECUTOR_FAILED',
  'REASON_TASK_INVALID',
  'REASON_AGENT_REMOVED',
  'REASON_RECONCILIATION',
  'REASON_CONTAINER_LIMITATION_MEMORY',
];
const text = fc.string({ unit: 'binary', maxLength: 12 });
const hex32 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));

const statuses: fc.Arbitrary<TaskStatus> = fc.record(
  {
    taskId: text,
    state: fc.constantFrom(...TASK_STATES),
    source: fc.constantFrom('SOURCE_MASTER' as const, 'SOURCE_AGENT' as const, 'SOURCE_EXECUTOR' as const),
    reason: fc.constantFrom(...REASONS),
    message: text,
    agentId: text,
    executorId: text,
    timestampMs: fc.oneof(fc.integer({ min: 0, max: 2 ** 45 }), fc.double({ noNaN: false })),
    uuid: fc.oneof(hex32, text),
    data: fc.uint8Array({ maxLength: 9 }),
    containerId: text,
    unreachableTimeMs: fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.double({ min: 0, max: 1e12, noNaN: true })),
    limitation: fc.constant([scalar('mem', 64)]),
  },
  { requiredKeys: ['taskId', 'state', 'source', 'timestampMs'] },
);

describe('the UPDATE event as JSON', () => {
  it('is the generic encoder text, byte for byte', () => {
    fc.assert(
      fc.property(statuses, (status) => {
        const event = { type: 'UPDATE' as const, status };
        expect(eventToJson(event)).toBe(encodeJson('mesos.v1.scheduler.Event', eventToWire(event)));
      }),
      settings,
    );
  });

  it('is written directly for the statuses a launch sends, and leaves a limitation to the generic writer', () => {
    const running: TaskStatus = {
      taskId: 't',
      state: 'TASK_RUNNING',
      source: 'SOURCE_EXECUTOR',
      agentId: 'a',
      executorId: 't',
      timestampMs: 1_000,
      uuid: '00'.repeat(16),
      containerId: 'c',
    };
    expect(updateJson(running)).toBe(
      encodeJson('mesos.v1.scheduler.Event', eventToWire({ type: 'UPDATE', status: running })),
    );
    expect(updateJson({ ...running, limitation: [scalar('mem', 64)] })).toBeUndefined();
  });
});
