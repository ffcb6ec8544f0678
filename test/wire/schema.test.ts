import protobuf from 'protobufjs/light.js';
import { describe, expect, it } from 'vitest';
import { messageType, root } from '../../src/wire/schema.js';

describe('schema', () => {
  it('looks up message types by full name, once', () => {
    const call = messageType('mesos.v1.scheduler.Call');
    expect(call.fullName).toBe('.mesos.v1.scheduler.Call');
    expect(messageType('mesos.v1.scheduler.Call')).toBe(call);
    expect(messageType('mesos.v1.scheduler.Call.Reconcile.Task').fields['task_id']?.required).toBe(true);
  });

  it('throws on unknown names, enums and partial paths', () => {
    expect(() => messageType('mesos.v1.Nope')).toThrow("Unknown message type 'mesos.v1.Nope'");
    expect(() => messageType('mesos.v1.TaskState')).toThrow('Unknown message type');
    expect(() => messageType('Call')).toThrow('Unknown message type');
  });

  it('keeps proto2 semantics: TaskState is declared with TASK_STAGING first', () => {
    const state = root.lookupEnum('mesos.v1.TaskState');
    expect(Object.keys(state.values)[0]).toBe('TASK_STAGING');
    expect(state.values['TASK_STAGING']).toBe(6);
    const status = messageType('mesos.v1.TaskStatus');
    expect(status.fields['state']?.required).toBe(true);
  });

  it('uses the upstream field numbers', () => {
    const call = messageType('mesos.v1.scheduler.Call');
    expect(call.fields['update_framework']?.id).toBe(19);
    expect(messageType('mesos.v1.executor.Call.Message').fields['data']?.id).toBe(2);
    expect(messageType('mesos.v1.executor.Event.Message').fields['data']?.id).toBe(1);
    const limits = messageType('mesos.v1.TaskInfo').fields['limits'];
    expect(limits).toBeInstanceOf(protobuf.MapField);
    expect(limits?.id).toBe(15);
  });

  it('maps an aliased number back to the first declared name', () => {
    const type = root.lookupEnum('mesos.v1.ContainerInfo.Type');
    expect(type.values['CLUSTER']).toBe(2);
    expect(type.valuesById[2]).toBe('MESOS');
  });

  it('round trips binary protobuf through the same schema', () => {
    const type = messageType('mesos.v1.Filters');
    const bytes = type.encode(type.fromObject({ refuse_seconds: 2.5 })).finish();
    expect(type.toObject(type.decode(bytes))).toEqual({ refuse_seconds: 2.5 });
  });
});
