/**
 * The cost of one scheduler event in each encoding: encoding the wire
 * message (what the master does per event and subscriber) and decoding it
 * (what a client does), for representative events, JSON and protobuf
 * measured side by side in the same run. `eventToWire` is left out: both
 * encodings share it.
 */
import { parseResources } from '../../src/core/model/resources.js';
import type { OfferView, SchedulerEvent } from '../../src/core/model/types.js';
import { decodeJson, encodeJson } from '../../src/wire/json.js';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { eventToWire } from '../../src/wire/scheduler-out.js';
import { progress } from './stats.js';

const EVENT = 'mesos.v1.scheduler.Event';
const MASTER_ID = '5d2f4e6a-1b3c-4d5e-8f90-a1b2c3d4e5f6';

export interface CodecRow {
  readonly event: string;
  readonly jsonBytes: number;
  readonly protoBytes: number;
  readonly jsonEncodeUs: number;
  readonly protoEncodeUs: number;
  readonly jsonDecodeUs: number;
  readonly protoDecodeUs: number;
}

function offer(n: number): OfferView {
  const resources = parseResources('cpus:4;mem:8192;disk:16384;ports:[31000-32000]');
  if (typeof resources === 'string') throw new Error(resources);
  return {
    id: `${MASTER_ID}-O${n}`,
    frameworkId: `${MASTER_ID}-0000`,
    agentId: `${MASTER_ID}-S${n}`,
    hostname: `agent-${n}.cluster.internal`,
    resources,
    attributes: [
      { name: 'rack', type: 'TEXT', text: `r${n % 4}` },
      { name: 'generation', type: 'SCALAR', milli: 3000 },
    ],
    executorIds: [],
    url: { scheme: 'http', hostname: `agent-${n}.cluster.internal`, ip: '10.0.0.12', port: 5051, path: '/slave(1)' },
  };
}

/** A task update from an executor, acknowledgeable: the most frequent event after HEARTBEAT. */
const UPDATE: SchedulerEvent = {
  type: 'UPDATE',
  status: {
    taskId: 'web-7f3a9c2e-0042',
    state: 'TASK_RUNNING',
    source: 'SOURCE_EXECUTOR',
    message: 'Task is running',
    agentId: `${MASTER_ID}-S3`,
    executorId: 'web-7f3a9c2e-0042',
    timestampMs: 1_700_000_123_456,
    uuid: '0f8e2b7c4a9d41e6b3c5d7e9f1a2b4c6',
    containerId: '7c1d9e0f-2a3b-4c5d-8e6f-9a0b1c2d3e4f',
  },
};

export const REPRESENTATIVE_EVENTS: ReadonlyArray<readonly [string, SchedulerEvent]> = [
  ['HEARTBEAT', { type: 'HEARTBEAT' }],
  ['UPDATE', UPDATE],
  ['OFFERS, 1 offer', { type: 'OFFERS', offers: [offer(1)] }],
  ['OFFERS, 10 offers', { type: 'OFFERS', offers: Array.from({ length: 10 }, (_, i) => offer(i + 1)) }],
];

/** Microseconds per call of `fn`: the median of several timed batches, after a warm-up. */
export function microsPerCall(fn: () => unknown, batchMs = 60, batches = 7): number {
  let sink = 0;
  const runFor = (ms: number) => {
    let calls = 0;
    const start = performance.now();
    let now = start;
    while (now - start < ms) {
      for (let i = 0; i < 100; i++) sink += fn() === undefined ? 0 : 1;
      calls += 100;
      now = performance.now();
    }
    return ((now - start) * 1000) / calls;
  };
  runFor(batchMs * 2);
  const samples = Array.from({ length: batches }, () => runFor(batchMs)).sort((a, b) => a - b);
  if (sink < 0) throw new Error('unreachable');
  return samples[Math.floor(samples.length / 2)]!;
}

export function benchEventCodec(): CodecRow[] {
  progress('event codec: encode and decode per event, JSON and protobuf');
  return REPRESENTATIVE_EVENTS.map(([name, event]) => {
    const wire = eventToWire(event);
    const text = encodeJson(EVENT, wire);
    const bytes = Buffer.from(encodeProto(EVENT, wire));
    // Both decoders must accept what the encoders wrote, or the figures mean nothing.
    if (!decodeJson(EVENT, text).ok || !decodeProto(EVENT, bytes, 'Event').ok)
      throw new Error(`${name}: does not round trip`);
    return {
      event: name,
      jsonBytes: Buffer.byteLength(text),
      protoBytes: bytes.length,
      jsonEncodeUs: microsPerCall(() => encodeJson(EVENT, wire)),
      protoEncodeUs: microsPerCall(() => encodeProto(EVENT, wire)),
      jsonDecodeUs: microsPerCall(() => decodeJson(EVENT, text)),
      protoDecodeUs: microsPerCall(() => decodeProto(EVENT, bytes, 'Event')),
    };
  });
}
