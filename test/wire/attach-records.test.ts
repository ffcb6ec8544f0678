/**
 * The records of an attached output stream in both encodings (DATA and
 * the CONTROL HEARTBEAT upstream's I/O switchboard writes), and upstream's
 * agent negotiation of the answer's types.
 */
import { describe, expect, it } from 'vitest';
import { negotiateAgentAnswer } from '../../src/http/negotiate.js';
import { processIoToJson, processIoToProto } from '../../src/wire/agent-containers.js';
import type { mesos } from '../../src/wire/generated/types.js';
import { decodeProto } from '../../src/wire/proto-codec.js';

describe('attached output records', () => {
  it('writes a heartbeat as a CONTROL HEARTBEAT with the 30 s interval, in JSON and protobuf', () => {
    expect(JSON.parse(processIoToJson({ type: 'HEARTBEAT' }))).toEqual({
      type: 'CONTROL',
      control: { type: 'HEARTBEAT', heartbeat: { interval: { nanoseconds: 30_000_000_000 } } },
    });
    const decoded = decodeProto<mesos.v1.agent.ProcessIO>(
      'mesos.v1.agent.ProcessIO',
      processIoToProto({ type: 'HEARTBEAT' }),
      'ProcessIO',
    );
    expect(decoded.ok && decoded.value.control?.heartbeat?.interval?.nanoseconds).toBe(30_000_000_000);
  });

  it('writes output as DATA with its stream and bytes', () => {
    expect(JSON.parse(processIoToJson({ stream: 'STDERR', data: 'oops\n' }))).toEqual({
      type: 'DATA',
      data: { type: 'STDERR', data: Buffer.from('oops\n').toString('base64') },
    });
  });
});

describe("upstream's agent negotiation", () => {
  it('takes JSON first, then protobuf, then RecordIO with the records of Message-Accept', () => {
    expect(negotiateAgentAnswer(undefined, undefined)).toEqual({ accept: 'application/json', records: undefined });
    expect(negotiateAgentAnswer('application/x-protobuf', undefined)).toEqual({
      accept: 'application/x-protobuf',
      records: undefined,
    });
    expect(negotiateAgentAnswer('application/recordio', 'application/json')).toEqual({
      accept: 'application/recordio',
      records: 'application/json',
    });
    expect(negotiateAgentAnswer('application/recordio', undefined)).toEqual({
      accept: 'application/recordio',
      records: 'application/json',
    });
    expect(negotiateAgentAnswer('application/recordio', 'application/x-protobuf')).toEqual({
      accept: 'application/recordio',
      records: 'application/x-protobuf',
    });
    expect(negotiateAgentAnswer('application/json', 'application/json')).toBe(
      "Expecting 'Message-Accept' to be not set for non-streaming responses",
    );
  });
});
