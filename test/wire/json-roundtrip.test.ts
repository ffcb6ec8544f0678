import { describe, expect, it } from 'vitest';
import type { mesos } from '../../src/wire/generated/types.js';
import { decodeJson, encodeJson } from '../../src/wire/json.js';

type Call = mesos.v1.scheduler.Call;
type Event = mesos.v1.scheduler.Event;

const CALL = 'mesos.v1.scheduler.Call';
const EVENT = 'mesos.v1.scheduler.Event';

function roundTrip<T extends object>(typeName: string, value: T): T {
  const result = decodeJson<T>(typeName, encodeJson(typeName, value));
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

const uuid = Uint8Array.from({ length: 16 }, (_, i) => i * 17);

const subscribe: Call = {
  type: 'SUBSCRIBE',
  subscribe: {
    framework_info: {
      user: 'root',
      name: 'demo',
      failover_timeout: 604800,
      checkpoint: true,
      roles: ['web', 'batch/nightly'],
      capabilities: [{ type: 'MULTI_ROLE' }, { type: 'PARTITION_AWARE' }],
      labels: { labels: [{ key: 'team', value: 'infra' }, { key: 'bare' }] },
      offer_filters: {
        web: {
          min_allocatable_resources: {
            quantities: [{ quantities: { cpus: { value: 0.5 }, mem: { value: 64 } } }],
          },
        },
      },
    },
    suppressed_roles: ['batch/nightly'],
  },
};

const accept: Call = {
  framework_id: { value: 'm-0000' },
  type: 'ACCEPT',
  accept: {
    offer_ids: [{ value: 'm-O1' }],
    operations: [
      {
        type: 'LAUNCH',
        launch: {
          task_infos: [
            {
              name: 'web-1',
              task_id: { value: 't-1' },
              agent_id: { value: 'm-S0' },
              resources: [
                { name: 'cpus', type: 'SCALAR', scalar: { value: 0.25 } },
                {
                  name: 'ports',
                  type: 'RANGES',
                  ranges: { range: [{ begin: 31000, end: 31001 }] },
                },
                { name: 'zones', type: 'SET', set: { item: ['a', 'b'] } },
              ],
              command: { value: 'sleep 30', shell: true },
              limits: { cpus: { value: 1 }, mem: { value: 256.5 } },
              data: new Uint8Array([0, 255, 10]),
            },
          ],
        },
      },
    ],
    filters: { refuse_seconds: 1.5 },
  },
};

const acknowledge: Call = {
  framework_id: { value: 'm-0000' },
  type: 'ACKNOWLEDGE',
  acknowledge: { agent_id: { value: 'm-S0' }, task_id: { value: 't-1' }, uuid },
};

describe('scheduler Call round trips', () => {
  it('SUBSCRIBE with capabilities, roles, labels and offer_filters', () => {
    const back = roundTrip(CALL, subscribe);
    expect(back).toEqual(subscribe);
  });

  it('ACCEPT with a LAUNCH of SCALAR, RANGES and SET resources and limits', () => {
    const back = roundTrip(CALL, accept);
    // Every field with a default is either set (shell) or deprecated
    // (Resource.role), so decoding adds nothing.
    expect(back).toEqual(accept);
  });

  it('ACKNOWLEDGE keeps the 16 raw uuid bytes', () => {
    const text = encodeJson(CALL, acknowledge);
    expect(text).toContain(`"uuid":"${Buffer.from(uuid).toString('base64')}"`);
    const back = roundTrip(CALL, acknowledge);
    expect(back.acknowledge?.uuid).toBeInstanceOf(Uint8Array);
    expect(back.acknowledge?.uuid).toHaveLength(16);
    expect(back).toEqual(acknowledge);
  });
});

describe('scheduler Event encoding', () => {
  it('SUBSCRIBED writes the heartbeat interval as 15.0 and MasterInfo defaults', () => {
    const event: Event = {
      type: 'SUBSCRIBED',
      subscribed: {
        framework_id: { value: 'm-0000' },
        heartbeat_interval_seconds: 15,
        master_info: { id: 'm', ip: 16777343, port: 5050, hostname: 'localhost' },
      },
    };
    expect(encodeJson(EVENT, event)).toBe(
      '{"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"m-0000"},' +
        '"heartbeat_interval_seconds":15.0,"master_info":{"id":"m","ip":16777343,' +
        '"port":5050,"hostname":"localhost"}}}',
    );
    expect(roundTrip(EVENT, event)).toEqual(event);
  });

  it('ERROR nests the message under error', () => {
    const event: Event = { type: 'ERROR', error: { message: 'Framework failed over' } };
    expect(encodeJson(EVENT, event)).toBe('{"type":"ERROR","error":{"message":"Framework failed over"}}');
  });

  it('UPDATE writes TaskStatus fields in declaration order', () => {
    const event: Event = {
      type: 'UPDATE',
      update: {
        status: {
          task_id: { value: 't-1' },
          state: 'TASK_RUNNING',
          data: new Uint8Array([1]),
          message: 'ok',
          source: 'SOURCE_EXECUTOR',
          timestamp: 1700000000.25,
          uuid,
        },
      },
    };
    const text = encodeJson(EVENT, event);
    // Declared order: task_id, state, message, source, reason, data, ...,
    // timestamp, uuid; numbers would put data (3) before message (4).
    expect(text).toBe(
      '{"type":"UPDATE","update":{"status":{"task_id":{"value":"t-1"},' +
        '"state":"TASK_RUNNING","message":"ok","source":"SOURCE_EXECUTOR","data":"AQ==",' +
        `"timestamp":1700000000.25,"uuid":"${Buffer.from(uuid).toString('base64')}"}}}`,
    );
    expect(roundTrip(EVENT, event)).toEqual(event);
  });

  it('HEARTBEAT is just its type', () => {
    expect(encodeJson(EVENT, { type: 'HEARTBEAT' } satisfies Event)).toBe('{"type":"HEARTBEAT"}');
  });
});

describe('executor messages', () => {
  it('round trips a Call whose Message.data is field 2', () => {
    const call: mesos.v1.executor.Call = {
      executor_id: { value: 'e' },
      framework_id: { value: 'f' },
      type: 'MESSAGE',
      message: { data: new Uint8Array([104, 105]) },
    };
    expect(encodeJson('mesos.v1.executor.Call', call)).toBe(
      '{"executor_id":{"value":"e"},"framework_id":{"value":"f"},"type":"MESSAGE",' + '"message":{"data":"aGk="}}',
    );
    expect(roundTrip('mesos.v1.executor.Call', call)).toEqual(call);
  });
});
