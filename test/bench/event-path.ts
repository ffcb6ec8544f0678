/**
 * Where the time of a streamed event goes: the same RECONCILE workload as
 * the HTTP stream measurement, run in-process against the core with a sink
 * that either drops each event (the core alone: reconciliation, trace) or
 * also turns it into a framed record (eventToWire, encode, RecordIO), as
 * the HTTP stream does just before writing to the socket.
 */
import { Cluster } from '../../src/core/cluster.js';
import { parseResources } from '../../src/core/resources.js';
import type { EventSink, SchedulerCall, SchedulerEvent } from '../../src/core/types.js';
import type { Encoding } from '../../src/client/scheduler-client.js';
import { encodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { frameRecord } from '../../src/wire/recordio.js';
import { eventToWire } from '../../src/wire/scheduler-out.js';
import { progress } from './stats.js';

export type PathStage = 'core' | 'framed';

export interface PathResult {
  readonly stage: PathStage;
  readonly encoding: Encoding | undefined;
  readonly eventsPerSecond: number;
}

const EVENT = 'mesos.v1.scheduler.Event';

class CountingSink implements EventSink {
  events = 0;
  bytes = 0;
  constructor(private readonly frame: ((event: SchedulerEvent) => Buffer) | undefined) {}
  send(event: SchedulerEvent): void {
    this.events++;
    if (this.frame !== undefined) this.bytes += this.frame(event).length;
  }
  close(): void {}
}

function framer(encoding: Encoding): (event: SchedulerEvent) => Buffer {
  return encoding === 'json'
    ? (event) => frameRecord(encodeJson(EVENT, eventToWire(event)))
    : (event) => frameRecord(encodeProto(EVENT, eventToWire(event)));
}

/** Events per second of RECONCILE calls naming `batch` unknown tasks each, for about `seconds`, after a warm-up. */
export function benchEventPath(stage: PathStage, encoding: Encoding | undefined, batch: number, seconds: number): PathResult {
  progress(`event path in-process: ${stage}${encoding === undefined ? '' : `, ${encoding}`}, ${seconds} s`);
  const cluster = new Cluster({ seed: 1, master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0' } });
  const resources = parseResources('cpus:4;mem:8192;disk:16384;ports:[31000-32000]');
  if (typeof resources === 'string') throw new Error(resources);
  cluster.input(() => cluster.addAgent({ hostname: 'agent1', ip: '127.0.0.1', port: 5051, resources, attributes: [] }));
  const sink = new CountingSink(stage === 'framed' ? framer(encoding ?? 'json') : undefined);
  const info = { user: 'bench', name: 'bench', failoverTimeoutMs: 0, checkpoint: false, roles: [], capabilities: [], labels: [] };
  const { frameworkId, streamId } = cluster.input(() => cluster.master.subscribe({ info, suppressedRoles: [] }, sink));
  const tasks = Array.from({ length: batch }, (_, i) => ({ taskId: `unknown-task-${String(i).padStart(6, '0')}` }));
  const call: SchedulerCall = { type: 'RECONCILE', tasks };
  const runFor = (ms: number) => {
    const start = performance.now();
    const before = sink.events;
    while (performance.now() - start < ms) {
      const outcome = cluster.input(() => cluster.master.call(frameworkId, streamId, call));
      if (!outcome.ok) throw new Error(outcome.error.message);
    }
    return ((sink.events - before) * 1000) / (performance.now() - start);
  };
  runFor(Math.min(1000, seconds * 500));
  return { stage, encoding, eventsPerSecond: runFor(seconds * 1000) };
}
