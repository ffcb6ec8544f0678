/**
 * Events per second delivered to one subscriber over a real HTTP stream,
 * through the whole server path: core -> eventToWire -> encode -> RecordIO
 * -> socket. The core is made to emit quickly by RECONCILE calls naming many
 * unknown tasks: each task named yields one UPDATE (TASK_LOST).
 *
 * The subscriber is a lean reader on a worker thread: it follows the RecordIO
 * framing and counts records without decoding them, so the main thread's time
 * is the server's (plus one call per batch). Calls are paced so that at most
 * a few batches are unread, far below the stream's buffer limit.
 */
import { Worker } from 'node:worker_threads';
import http from 'node:http';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { decodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import type { Encoding } from '../../src/client/scheduler-client.js';
import { progress } from './stats.js';

const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

export interface StreamOptions {
  /** Tasks named per RECONCILE call, i.e. events per call. */
  readonly batch: number;
  readonly warmupEvents: number;
  readonly measuredEvents: number;
}

export interface StreamResult {
  readonly encoding: Encoding;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly bytesPerEvent: number;
  /** Share of the window the main (server) thread was busy, 0..1. */
  readonly serverBusy: number;
}

/** Plain JavaScript for the worker: subscribe, then count RecordIO records as bytes arrive. */
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, accept, body } = workerData;
let records = 0, bytes = 0, prefix = 0, remaining = 0;
const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', accept } }, (res) => {
  parentPort.postMessage({ kind: 'headers', status: res.statusCode, contentType: res.headers['content-type'] });
  res.on('data', (chunk) => {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; ) {
      if (remaining > 0) {
        const take = Math.min(remaining, chunk.length - i);
        remaining -= take;
        i += take;
        if (remaining === 0) records++;
        continue;
      }
      const c = chunk[i++];
      if (c === 10) { remaining = prefix; prefix = 0; }
      else prefix = prefix * 10 + (c - 48);
    }
    parentPort.postMessage({ kind: 'count', records, bytes });
  });
  res.on('close', () => parentPort.postMessage({ kind: 'closed', records, bytes }));
});
req.on('error', (e) => parentPort.postMessage({ kind: 'error', message: e.message }));
req.end(body);
`;

interface Progress {
  records: number;
  bytes: number;
  closed: boolean;
  wake: (() => void) | undefined;
}

export async function benchEventStream(encoding: Encoding, options: StreamOptions): Promise<StreamResult> {
  progress(
    `event stream: ${encoding}, ${options.measuredEvents} events after ${options.warmupEvents}, ${options.batch} per call`,
  );
  const running = await startCluster({ port: 0, agents: 1, time: 'virtual', logLevel: 'silent' });
  const seen: Progress = { records: 0, bytes: 0, closed: false, wake: undefined };
  const worker = new Worker(READER, {
    eval: true,
    workerData: {
      url: `${running.masterUrl}/api/v1/scheduler`,
      accept: MEDIA[encoding],
      body: JSON.stringify({
        type: 'SUBSCRIBE',
        subscribe: { framework_info: { user: 'bench', name: 'event-stream' } },
      }),
    },
  });
  try {
    const headers = await new Promise<{ status: number; contentType: string }>((resolve, reject) => {
      worker.on(
        'message',
        (m: { kind: string; status: number; contentType: string; records: number; bytes: number; message: string }) => {
          if (m.kind === 'headers') resolve(m);
          else if (m.kind === 'error') reject(new Error(`subscriber: ${m.message}`));
          else {
            seen.records = m.records;
            seen.bytes = m.bytes;
            seen.closed ||= m.kind === 'closed';
            seen.wake?.();
          }
        },
      );
      worker.on('error', reject);
    });
    if (headers.status !== 200 || headers.contentType !== MEDIA[encoding]) {
      throw new Error(`SUBSCRIBE answered ${headers.status} with ${headers.contentType}`);
    }
    const caller = reconcileCaller(running, encoding, options.batch);
    await pump(caller, seen, options.batch, options.warmupEvents);
    const start = {
      at: performance.now(),
      records: seen.records,
      bytes: seen.bytes,
      elu: performance.eventLoopUtilization(),
    };
    await pump(caller, seen, options.batch, options.measuredEvents);
    const seconds = (performance.now() - start.at) / 1000;
    const events = seen.records - start.records;
    return {
      encoding,
      events,
      seconds,
      eventsPerSecond: events / seconds,
      bytesPerEvent: (seen.bytes - start.bytes) / events,
      serverBusy: performance.eventLoopUtilization(start.elu).utilization,
    };
  } finally {
    await worker.terminate();
    await running.close();
  }
}

/** Sends calls until `events` more events have been read, keeping at most four batches unread. */
async function pump(call: () => Promise<void>, seen: Progress, batch: number, events: number): Promise<void> {
  const target = seen.records + events;
  let sent = seen.records;
  while (seen.records < target) {
    if (seen.closed) throw new Error(`the event stream closed after ${seen.records} events`);
    if (sent < target && sent - seen.records < 4 * batch) {
      await call();
      sent += batch;
    } else {
      await new Promise<void>((resolve) => (seen.wake = resolve));
      seen.wake = undefined;
    }
  }
}

/** A RECONCILE of `batch` unknown tasks, encoded once, posted on a keep-alive connection. */
function reconcileCaller(running: RunningCluster, encoding: Encoding, batch: number): () => Promise<void> {
  const [framework] = running.cluster.view.frameworks();
  if (framework?.streamId === undefined) throw new Error('the subscriber is not subscribed');
  const tasks = Array.from({ length: batch }, (_, i) => ({
    task_id: { value: `unknown-task-${String(i).padStart(6, '0')}` },
  }));
  const text = JSON.stringify({ framework_id: { value: framework.id }, type: 'RECONCILE', reconcile: { tasks } });
  const decoded = decodeJson<object>('mesos.v1.scheduler.Call', text);
  if (!decoded.ok) throw new Error(decoded.error);
  const body =
    encoding === 'json' ? Buffer.from(text) : Buffer.from(encodeProto('mesos.v1.scheduler.Call', decoded.value));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL('/api/v1/scheduler', running.masterUrl);
  const headers = { 'content-type': MEDIA[encoding], 'mesos-stream-id': framework.streamId };
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 202 ? resolve() : reject(new Error(`RECONCILE answered ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
}
