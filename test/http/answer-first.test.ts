/**
 * A subscriber hears SUBSCRIBED before the allocation its subscription
 * starts has run: upstream's master answers first, and on a cluster of
 * many agents that allocation is the slow part. The core's order, and so
 * the trace, is the same either way.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { OutboxRecord } from '../../src/core/network/outbox.js';
import { VirtualDriver } from '../../src/runtime/driver.js';
import { HttpEventStream } from '../../src/http/event-stream.js';
import { StreamBudget } from '../../src/http/stream-budget.js';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster } from '../../src/start/cluster.js';
import { Cluster } from '../../src/core/cluster.js';
import { AGENT_RESOURCES, frameworkInfo, resources } from '../core/helpers.js';

/** A cluster as the runtime holds one: its outbox goes only where the driver hands it. */
function plainCluster(agents: number): Cluster {
  const cluster = new Cluster({
    seed: 1,
    recordTrace: true,
    master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0' },
  });
  for (let i = 0; i < agents; i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
  }
  return cluster;
}

/** The events delivered, keepalives left out. */
function eventTypes(records: readonly OutboxRecord[]): string[] {
  return records.flatMap((r) => (r.kind === 'event' && r.event.type !== 'HEARTBEAT' ? [r.event.type] : []));
}

describe('answering a SUBSCRIBE first', () => {
  it('delivers SUBSCRIBED and tells the caller before the allocation runs; the trace is unchanged', () => {
    const traces: string[][] = [];
    for (const first of [true, false]) {
      const cluster = plainCluster(3);
      const driver = new VirtualDriver(cluster);
      const delivered: OutboxRecord[] = [];
      driver.setOutput((records) => delivered.push(...records));
      let heard: { types: string[]; offersTraced: boolean; streamId: string } | undefined;
      const answered = first
        ? (result: { streamId: string }) => {
            heard = {
              types: eventTypes(delivered),
              offersTraced: cluster.trace.entries().some((e) => e.kind === 'event:offers'),
              streamId: result.streamId,
            };
          }
        : undefined;
      const result = driver.input((c) => c.subscribe('c1', { info: frameworkInfo(), suppressedRoles: [] }), answered);
      if (first) {
        expect(heard).toEqual({ types: ['SUBSCRIBED'], offersTraced: false, streamId: result.streamId });
      }
      expect(eventTypes(delivered)).toEqual(['SUBSCRIBED', 'OFFERS']);
      traces.push(cluster.trace.entries().map((e) => e.line));
    }
    expect(traces[0]).toEqual(traces[1]);
  });

  it('tells the caller once, after the input, when the input never reached the core', () => {
    const cluster = plainCluster(1);
    const driver = new VirtualDriver(cluster);
    const told: number[] = [];
    expect(
      driver.input(
        () => 7,
        (n) => told.push(n),
      ),
    ).toBe(7);
    expect(told).toEqual([7]);
    // The hook is taken back: the next input tells nobody.
    driver.input((c) => c.advance(1));
    expect(told).toEqual([7]);
  });

  it('hands a client that reads an OFFERS event larger than the stream buffer limit whole', async () => {
    const running = await startCluster({ port: 0, time: 'virtual', agents: 3, streamBufferLimitMiB: 0.001 });
    const client = new SchedulerClient(running.masterUrl);
    try {
      await client.subscribe({ user: 'u', name: 'n' });
      const offers = await client.next('OFFERS');
      // Three offers of a few hundred bytes each, past the limit of 1,049 bytes, and the stream still flows.
      expect(offers.offers.offers).toHaveLength(3);
      expect(JSON.stringify(offers).length).toBeGreaterThan(1_049);
      running.advance(1_000);
      expect(client.closed).toBe(false);
    } finally {
      client.disconnect();
      await running.close();
    }
  });

  it('writes what was sent before the start with the headers, before the next tick', async () => {
    const server = http.createServer();
    const responses: http.ServerResponse[] = [];
    server.on('request', (_req, res) => responses.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const budget = new StreamBudget({ perStreamBytes: 1 << 20, totalBytes: 1 << 24, log: pino({ level: 'silent' }) });
    /** The bytes on the socket right after `start`, with `early` events sent before it. */
    const written = async (early: number): Promise<number> => {
      const request = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/' });
      request.on('error', () => {});
      request.end();
      while (responses.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const res = responses.shift()!;
      const stream = new HttpEventStream(res, (event: { type: string }) => JSON.stringify(event), {
        budget,
        keepaliveMs: 0,
      });
      for (let i = 0; i < early; i++) stream.send({ type: 'SUBSCRIBED' });
      const before = res.socket!.bytesWritten;
      stream.start({ 'content-type': 'application/json' });
      const after = res.socket!.bytesWritten;
      stream.close();
      request.destroy();
      return after - before;
    };
    const headers = await written(0);
    // The early event is on the socket with the headers (its record framed in a chunk), not waiting for a tick.
    expect((await written(1)) - headers).toBeGreaterThan('{"type":"SUBSCRIBED"}'.length);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
