/**
 * The limits of the listeners and of the master (docs/cli.md, "Limits"), on
 * real sockets. Timeouts are configured small and the tests wait for their
 * effect (a socket's close, a log line), never for a wall-clock duration to
 * pass, so a slow machine only makes them slower.
 */
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import Fastify from 'fastify';
import { httpError } from '../../src/http/errors.js';
import { DEFAULT_LISTENER_LIMITS, listenerServerOptions } from '../../src/http/limits.js';
import { StreamBudget, type BudgetedStream } from '../../src/http/stream-budget.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';

const running: RunningCluster[] = [];
const sockets: net.Socket[] = [];
const clients: SchedulerClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of clients.splice(0)) c.disconnect();
  await Promise.all(running.splice(0).map((r) => r.close()));
});

async function start(options: StartClusterOptions): Promise<RunningCluster> {
  const cluster = await startCluster({ port: 0, time: 'virtual', agents: 0, ...options });
  running.push(cluster);
  return cluster;
}

const portOf = (url: string): number => Number(new URL(url).port);

interface Probe {
  readonly socket: net.Socket;
  /** Everything the server sent. */
  readonly received: () => string;
  /** Resolves on the socket's close event. */
  readonly closed: Promise<void>;
}

/** A raw connection, optionally sending `text` once connected. */
function connect(port: number, text?: string): Promise<Probe> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    socket.once('connect', () => {
      if (text !== undefined) socket.write(text);
      resolve({ socket, received: () => received, closed });
    });
    socket.once('error', reject);
  });
}

const HEALTH = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';

/** A keep-alive connection that has had one answer from /health, so the server counts it. */
async function heldConnection(port: number): Promise<Probe> {
  const probe = await connect(port, HEALTH);
  await waitFor(() => probe.received().startsWith('HTTP/1.1 200'));
  return probe;
}

/** /health on a connection of its own. */
function health(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function subscribed(url: string, info: Record<string, unknown>): Promise<SchedulerClient> {
  const client = new SchedulerClient(url);
  clients.push(client);
  const answer = await client.subscribe({ user: 'u', ...info });
  expect(answer.status, answer.body).toBe(200);
  await client.next('SUBSCRIBED');
  return client;
}

/** Log lines of a pino logger, parsed. */
function capturedLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe('connection timeouts', () => {
  it('closes idle connections after the idle timeout while an event stream on the same server outlives it', async () => {
    const cluster = await start({
      // Headers before idle, as with the defaults: a silent connection is told 408.
      idleTimeoutSeconds: 0.4,
      headersTimeoutSeconds: 0.2,
      requestTimeoutSeconds: 0.3,
      // No transport heartbeat: the stream stays silent longer than every timeout.
      streamKeepaliveMs: 600_000,
    });
    const port = portOf(cluster.masterUrl);
    const stream = await subscribed(cluster.masterUrl, { name: 'stays' });
    await stream.next('HEARTBEAT');
    const opened = Date.now();

    const keepAlive = await heldConnection(port);
    const silent = await connect(port);
    const partial = await connect(port, 'GET /health HTTP/1.1\r\nHost: x\r\n');
    await Promise.all([keepAlive.closed, silent.closed, partial.closed]);
    // The silent and the half-sent connections are told why.
    expect(silent.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(partial.received()).toMatch(/^HTTP\/1\.1 408 /);

    // The keep-alive connection waited the idle timeout and node's 1 s grace;
    // the stream, silent all along, is still served after as long again.
    const idleFor = Date.now() - opened;
    await new Promise((r) => setTimeout(r, idleFor));
    expect(stream.closed).toBe(false);
    cluster.advance(15_000);
    await stream.next('HEARTBEAT');
    const [framework] = cluster.cluster.view.frameworks();
    expect(framework!.state).toBe('subscribed');
  });
});

describe('a response its client does not read', () => {
  it('is closed after the idle timeout: nothing moves, so the connection is idle', async () => {
    const app = Fastify(listenerServerOptions({ ...DEFAULT_LISTENER_LIMITS, idleTimeoutSeconds: 0.2 }));
    // Larger than the kernel's socket buffers on both ends, so the write never completes.
    const body = Buffer.alloc(64 * 1024 * 1024, 0x78);
    let serverSide: Promise<void> | undefined;
    app.get('/big', (req, reply) => {
      serverSide = new Promise((resolve) => req.raw.socket.once('close', () => resolve()));
      return reply.send(body);
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const probe = await connect(
        (app.server.address() as net.AddressInfo).port,
        'GET /big HTTP/1.1\r\nHost: x\r\n\r\n',
      );
      // A paused client never reads the close either: it is seen from the server.
      probe.socket.pause();
      await waitFor(() => serverSide !== undefined);
      await serverSide;
      expect(probe.received().length).toBeLessThan(body.length);
    } finally {
      await app.close();
    }
  });
});

describe('connection caps', () => {
  /** Fills the listener to `cap`, checks one more is refused, frees one and checks /health answers again. */
  async function checkCap(port: number, cap: number): Promise<void> {
    const held = [];
    for (let i = 0; i < cap; i++) held.push(await heldConnection(port));
    const extra = await connect(port, HEALTH);
    await extra.closed;
    expect(extra.received()).toBe('');
    for (const probe of held) expect(probe.socket.destroyed).toBe(false);

    held[0]!.socket.destroy();
    // The server notices the freed connection a moment after the client closes it.
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) status = await health(port).catch(() => 0);
    expect(status).toBe(200);
  }

  it('refuses a connection over the cap of the master and of an agent, and serves /health once one is freed', async () => {
    const cluster = await start({ agents: 1, maxConnections: 3, agentMaxConnections: 1 });
    await checkCap(portOf(cluster.masterUrl), 3);
    await checkCap(cluster.agents[0]!.port, 1);
  });
});

describe('the event streams buffer budget', () => {
  it('cuts the stalled consumer with one warn line while another subscriber keeps getting events', async () => {
    const { logger, lines } = capturedLogger();
    const cluster = await start({ logger, streamBufferBudgetMiB: 0.25 });
    const reader = await subscribed(cluster.masterUrl, { name: 'reads' });

    // A client that subscribes and never reads its stream.
    const req = http.request(`${cluster.masterUrl}/api/v1/scheduler`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      agent: false,
    });
    req.on('error', () => {});
    req.end(
      JSON.stringify({
        type: 'SUBSCRIBE',
        subscribe: { framework_info: { user: 'u', name: 'stalled', failover_timeout: 3600 } },
      }),
    );
    const res = await new Promise<http.IncomingMessage>((resolve) => req.on('response', resolve));
    res.pause();
    const view = cluster.cluster.view;
    await waitFor(() => [...view.frameworks()].length === 2);
    const stalled = [...view.frameworks()].find((f) => f.info.name === 'stalled')!;
    const healthy = [...view.frameworks()].find((f) => f.info.name === 'reads')!;

    // Reconciliation answers (one UPDATE per task) pile up on the stalled stream.
    const flood = Array.from({ length: 2000 }, (_, i) => ({ taskId: `lost-${i}` }));
    const few = Array.from({ length: 5 }, (_, i) => ({ taskId: `few-${i}` }));
    let sentToReader = 0;
    for (let i = 0; i < 200 && stalled.state === 'subscribed'; i++) {
      cluster.driver.input((c) => c.call(stalled.id, stalled.streamId, { type: 'RECONCILE', tasks: flood }));
      cluster.driver.input((c) => c.call(healthy.id, healthy.streamId, { type: 'RECONCILE', tasks: few }));
      sentToReader += few.length;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(stalled.state).toBe('disconnected');
    expect(healthy.state).toBe('subscribed');
    for (let i = 0; i < sentToReader; i++) await reader.next('UPDATE');
    cluster.advance(15_000);
    await reader.next('HEARTBEAT');

    const cuts = lines.filter((l) => String(l.msg).startsWith('event stream cut'));
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toMatchObject({ level: 40, frameworkId: stalled.id, budgetBytes: 256 * 1024 });
    expect(cuts[0]!.connectionId).toMatch(/^c\d+$/);
    // Cut by the budget, long before its own 16 MiB limit.
    expect(cuts[0]!.bufferedBytes as number).toBeLessThan(16 * 1024 * 1024);
    req.destroy();
  });
});

describe('StreamBudget', () => {
  class FakeStream implements BudgetedStream {
    closed = false;
    cutFor: string | undefined;
    constructor(
      readonly connectionId: string,
      public bufferedBytes: number,
    ) {}
    readonly frameworkId = 'f';
    cut(reason: string): void {
      this.cutFor = reason;
      this.closed = true;
    }
  }

  it('cuts the stream with the most bytes waiting, measured afresh, and only as many as it takes', () => {
    const { logger, lines } = capturedLogger();
    const budget = new StreamBudget({ perStreamBytes: 1000, totalBytes: 1000, log: logger });
    const [a, b, c] = [new FakeStream('a', 400), new FakeStream('b', 500), new FakeStream('c', 0)];
    budget.charge(a, 400);
    budget.charge(b, 500);
    // `b` has drained since it reported, without a word: its figure is stale.
    b.bufferedBytes = 0;
    c.bufferedBytes = 300;
    budget.charge(c, 300);
    expect([a.cutFor, b.cutFor, c.cutFor]).toEqual([undefined, undefined, undefined]);
    a.bufferedBytes = 900;
    budget.charge(a, 900);
    expect(a.cutFor).toMatch(/budget/);
    expect([b.cutFor, c.cutFor]).toEqual([undefined, undefined]);
    expect(budget.chargedBytes).toBe(300);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      connectionId: 'a',
      frameworkId: 'f',
      bufferedBytes: 900,
      budgetBytes: 1000,
    });
  });

  it('cuts a stream over its own limit whatever the total, and forgets closed streams', () => {
    const { logger, lines } = capturedLogger();
    const budget = new StreamBudget({ perStreamBytes: 100, totalBytes: 1000, log: logger });
    const [big, gone, small] = [new FakeStream('big', 101), new FakeStream('gone', 90), new FakeStream('small', 90)];
    budget.charge(big, 101);
    expect(big.cutFor).toMatch(/buffer limit/);
    expect(lines[0]).toMatchObject({ connectionId: 'big', limitBytes: 100 });
    const tight = new StreamBudget({ perStreamBytes: 100, totalBytes: 150, log: logger });
    tight.charge(gone, 90);
    // Its client left; the close event has not been handled yet.
    gone.closed = true;
    tight.charge(small, 90);
    expect(small.cutFor).toBeUndefined();
    expect(tight.chargedBytes).toBe(90);
  });
});

describe('subscription and framework caps', () => {
  it('answers a SUBSCRIBE over the subscriptions cap with 503 TOO_MANY_SUBSCRIPTIONS, and accepts once a stream closes', async () => {
    const cluster = await start({ maxSubscriptions: 2 });
    const first = await subscribed(cluster.masterUrl, { name: 'first' });
    const second = await subscribed(cluster.masterUrl, { name: 'second', failover_timeout: 3600 });

    const third = new SchedulerClient(cluster.masterUrl);
    clients.push(third);
    const refused = await third.subscribe({ user: 'u', name: 'third' });
    const expected = httpError('TOO_MANY_SUBSCRIPTIONS', 2);
    expect([refused.status, refused.body]).toEqual([expected.status, expected.body]);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers.connection).toBe('close');

    // A failover onto the framework's own open stream replaces it: not refused.
    const failover = await subscribed(cluster.masterUrl, {
      name: 'second',
      id: { value: second.frameworkId },
      failover_timeout: 3600,
    });
    expect(failover.frameworkId).toBe(second.frameworkId);

    first.disconnect();
    await waitFor(() => [...cluster.cluster.view.frameworks()].length === 1);
    await subscribed(cluster.masterUrl, { name: 'third' });
  });

  it('answers a new framework over the frameworks cap with 503 TOO_MANY_FRAMEWORKS, and lets known ones re-subscribe', async () => {
    const cluster = await start({ maxFrameworks: 2 });
    const view = cluster.cluster.view;
    const gone = await subscribed(cluster.masterUrl, { name: 'gone', failover_timeout: 3600 });
    gone.disconnect();
    await waitFor(() => view.framework(gone.frameworkId!)?.state === 'disconnected');
    const here = await subscribed(cluster.masterUrl, { name: 'here' });

    const extra = new SchedulerClient(cluster.masterUrl);
    clients.push(extra);
    const refused = await extra.subscribe({ user: 'u', name: 'extra' });
    const expected = httpError('TOO_MANY_FRAMEWORKS', 2);
    expect([refused.status, refused.body]).toEqual([expected.status, expected.body]);
    expect(refused.headers['retry-after']).toBe('5');

    // A framework within its failover timeout still counts, and may come back.
    const back = await subscribed(cluster.masterUrl, {
      name: 'gone',
      id: { value: gone.frameworkId },
      failover_timeout: 3600,
    });
    expect(back.frameworkId).toBe(gone.frameworkId);

    expect((await here.call({ type: 'TEARDOWN' })).status).toBe(202);
    await waitFor(() => view.framework(here.frameworkId!) === undefined);
    await subscribed(cluster.masterUrl, { name: 'extra' });
  });
});

describe('limit options', () => {
  it('refuses a limit that is not positive, naming its option', async () => {
    await expect(startCluster({ port: 0, agents: 0, time: 'virtual', maxFrameworks: 0 })).rejects.toThrow(
      'maxFrameworks: must be a whole number of at least 1, got 0',
    );
    await expect(startCluster({ port: 0, agents: 0, time: 'virtual', idleTimeoutSeconds: -1 })).rejects.toMatchObject({
      option: 'idleTimeoutSeconds',
    });
    await expect(
      startCluster({ port: 0, agents: 0, time: 'virtual', streamBufferBudgetMiB: Number.NaN }),
    ).rejects.toThrow('streamBufferBudgetMiB: must be a positive number, got NaN');
  });
});
