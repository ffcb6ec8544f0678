/**
 * The trace as server-sent events (`text/event-stream`), for a browser's
 * `EventSource` (the dashboard's timeline):
 *
 *   GET /sim/v1/events
 *
 *   retry: 1000
 *
 *   id: 42
 *   event: trace
 *   data: {"seq":42,"time_ms":1000,"kind":"offer:create","line":"1000 offer:create {...}"}
 *
 * First the last `BACKLOG_ENTRIES` entries kept (those after `Last-Event-ID`
 * when the browser reconnects), then each new one as it comes. When a reset
 * or a restore swaps the cluster, an `event: replaced` ends the stream: the
 * new cluster's trace starts again at seq 1, so the reader starts afresh
 * rather than resume by id. A comment line every `KEEPALIVE_MS` of wall
 * time keeps proxies from closing a quiet stream; a reader that falls more
 * than 16 MiB behind is cut, as the trace stream's is.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { traceJsonLine, type TraceEntry } from '../../core/kernel/trace.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { serveMethods } from '../methods.js';
import { principalOf } from '../auth.js';
import { simReaderOf } from '../../wire/sim/view.js';

/** How many of the entries kept a new reader gets first (`/sim/v1/trace` gives them all). */
export const BACKLOG_ENTRIES = 500;
/** Wall-clock ms between keepalive comments on a quiet stream. */
export const KEEPALIVE_MS = 15_000;
const MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

export function registerSimEvents(app: FastifyInstance, driver: ClusterDriver): void {
  const readers = new Set<ServerResponse>();
  driver.onReplace(() => {
    for (const res of [...readers]) res.end('event: replaced\ndata: {}\n\n');
  });
  serveMethods(app, '/sim/v1/events', ['GET'], (req, reply) => streamEvents(req, reply, driver, readers));
}

function streamEvents(
  req: FastifyRequest,
  reply: FastifyReply,
  driver: ClusterDriver,
  readers: Set<ServerResponse>,
): undefined {
  const trace = driver.cluster.trace;
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.socket?.setTimeout(0);
  res.write('retry: 1000\n\n');
  const reader = simReaderOf(driver.cluster.view, principalOf(req));
  const write = (entry: TraceEntry): void => {
    if (res.writableLength > MAX_BACKLOG_BYTES) return void res.destroy(new Error('event reader too far behind'));
    if (reader !== undefined && !reader.entry(entry)) return;
    res.write(`id: ${entry.seq}\nevent: trace\ndata: ${traceJsonLine(entry)}\n\n`);
  };
  for (const entry of backlog(trace.entries(), lastEventId(req))) write(entry);
  const listener = (entry: TraceEntry): void => write(entry);
  trace.onEntry(listener);
  readers.add(res);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  res.once('close', () => {
    clearInterval(keepalive);
    readers.delete(res);
    trace.offEntry(listener);
  });
  return undefined;
}

/**
 * The entries a reader gets first: the last `BACKLOG_ENTRIES`, and of those
 * only the ones after the id it last saw. An id beyond the last entry is
 * another cluster's (one since swapped): everything is new then.
 */
export function backlog(entries: readonly TraceEntry[], after: number | undefined): readonly TraceEntry[] {
  const last = entries.at(-1)?.seq ?? 0;
  const from = after === undefined || after > last ? 0 : after;
  return entries.slice(-BACKLOG_ENTRIES).filter((entry) => entry.seq > from);
}

/** The `Last-Event-ID` a reconnecting EventSource sends, when it is a sequence number. */
function lastEventId(req: FastifyRequest): number | undefined {
  const header = req.headers['last-event-id'];
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}
