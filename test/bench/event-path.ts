/**
 * Where the time of a streamed event goes: the same RECONCILE workload as
 * the HTTP stream measurement, run in-process against the core, draining
 * the outbox after every call and either dropping each event (the core
 * alone: reconciliation, trace, outbox) or also turning it into a framed
 * record (eventToWire, encode, RecordIO), as the HTTP stream does just
 * before writing to the socket.
 */
import type { SchedulerCall, SchedulerEvent } from '../../src/core/model/types.js';
import type { Encoding } from '../../src/client/scheduler-client.js';
import { encodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { frameRecord } from '../../src/wire/recordio.js';
import { eventToWire } from '../../src/wire/scheduler-out.js';
import { CoreBench } from './core-harness.js';
import { progress } from './stats.js';

export type PathStage = 'core' | 'framed';

export interface PathResult {
  readonly stage: PathStage;
  readonly encoding: Encoding | undefined;
  readonly eventsPerSecond: number;
}

const EVENT = 'mesos.v1.scheduler.Event';

class Counter {
  events = 0;
  bytes = 0;
  constructor(private readonly frame: ((event: SchedulerEvent) => Buffer) | undefined) {}
  readonly consume = (event: SchedulerEvent): void => {
    this.events++;
    if (this.frame !== undefined) this.bytes += this.frame(event).length;
  };
}

function framer(encoding: Encoding): (event: SchedulerEvent) => Buffer {
  return encoding === 'json'
    ? (event) => frameRecord(encodeJson(EVENT, eventToWire(event)))
    : (event) => frameRecord(encodeProto(EVENT, eventToWire(event)));
}

/** Events per second of RECONCILE calls naming `batch` unknown tasks each, for about `seconds`, after a warm-up. */
export function benchEventPath(
  stage: PathStage,
  encoding: Encoding | undefined,
  batch: number,
  seconds: number,
): PathResult {
  progress(`event path in-process: ${stage}${encoding === undefined ? '' : `, ${encoding}`}, ${seconds} s`);
  const bench = new CoreBench({ agents: 1 });
  const sink = new Counter(stage === 'framed' ? framer(encoding ?? 'json') : undefined);
  bench.subscribe(sink.consume);
  const tasks = Array.from({ length: batch }, (_, i) => ({ taskId: `unknown-task-${String(i).padStart(6, '0')}` }));
  const call: SchedulerCall = { type: 'RECONCILE', tasks };
  const runFor = (ms: number) => {
    const start = performance.now();
    const before = sink.events;
    while (performance.now() - start < ms) bench.call(call);
    return ((sink.events - before) * 1000) / (performance.now() - start);
  };
  runFor(Math.min(1000, seconds * 500));
  return { stage, encoding, eventsPerSecond: runFor(seconds * 1000) };
}
