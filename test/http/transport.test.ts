import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let running: RunningCluster | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('event stream transport', () => {
  it('writes a HEARTBEAT after the keepalive idle time even while virtual time stands still', async () => {
    running = await startCluster({ port: 0, agents: 1, time: 'virtual', streamKeepaliveMs: 50 });
    const client = new SchedulerClient(running.masterUrl);
    await client.subscribe({ user: 'u', name: 'keepalive' });
    await client.next('SUBSCRIBED');
    await client.next('HEARTBEAT');
    await client.next('OFFERS');
    let last = Date.now();
    for (let i = 0; i < 3; i++) {
      await client.next('HEARTBEAT', 2000);
      // Sent after a whole period of silence, never twice within one (each is
      // timed from its arrival, which a busy machine delays: half a period of slack).
      expect(Date.now() - last).toBeGreaterThanOrEqual(25);
      expect(Date.now() - last).toBeLessThan(1000);
      last = Date.now();
    }
    expect(running.cluster.now()).toBe(0);
    client.disconnect();
  });

  it('drops a subscriber that stops reading once its buffer limit is reached', async () => {
    const { buildMasterApp } = await import('../../src/http/master/app.js');
    const { Cluster } = await import('../../src/core/cluster.js');
    const { VirtualDriver } = await import('../../src/runtime/driver.js');
    const cluster = new Cluster({ master: { hostname: '127.0.0.1', ip: '127.0.0.1', port: 0, version: 'test' } });
    const driver = new VirtualDriver(cluster);
    const app = buildMasterApp({ driver, maxBufferedBytes: 64 * 1024 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    // A client that subscribes and never reads the stream.
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: '/api/v1/scheduler',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.end(
      JSON.stringify({
        type: 'SUBSCRIBE',
        subscribe: { framework_info: { user: 'u', name: 'slow', failover_timeout: 3600 } },
      }),
    );
    const res = await new Promise<http.IncomingMessage>((resolve) => req.on('response', resolve));
    res.pause();
    await waitFor(() => [...cluster.view.frameworks()].length === 1);
    const fw = [...cluster.view.frameworks()][0]!;
    // Reconciliation answers (one UPDATE per task) pile up while the client does not read.
    const tasks = Array.from({ length: 2000 }, (_, i) => ({ taskId: `unknown-${i}` }));
    for (let i = 0; i < 50 && fw.state === 'subscribed'; i++) {
      driver.input(() => cluster.call(fw.id, fw.streamId, { type: 'RECONCILE', tasks }));
      await new Promise((r) => setTimeout(r, 10));
    }
    await waitFor(() => fw.state === 'disconnected');
    expect(fw.state).toBe('disconnected');
    req.destroy();
    await app.close();
  });
});

describe('chunkOf', () => {
  it('frames one event as exactly one HTTP chunk holding one RecordIO record', async () => {
    const { chunkOf } = await import('../../src/http/event-stream.js');
    for (const payload of ['{"type":"HEARTBEAT"}', new Uint8Array([8, 8]), 'x'.repeat(300)]) {
      const chunk = chunkOf(payload).toString('latin1');
      const m = /^([0-9a-f]+)\r\n([\s\S]*)\r\n$/.exec(chunk);
      expect(m).not.toBeNull();
      const record = m![2]!;
      expect(record.length).toBe(Number.parseInt(m![1]!, 16));
      const size = typeof payload === 'string' ? payload.length : payload.length;
      expect(record).toBe(
        `${size}\n${typeof payload === 'string' ? payload : Buffer.from(payload).toString('latin1')}`,
      );
    }
    expect(() => chunkOf('')).toThrow(/never empty/);
  });
});

describe('leader redirect', () => {
  it('/master/redirect answers 307 with a protocol-relative Location of the leader', async () => {
    running = await startCluster({ port: 0, agents: 0, time: 'virtual' });
    const port = new URL(running.masterUrl).port;
    for (const path of ['/master/redirect', '/redirect']) {
      const res = await fetch(new URL(path, running.masterUrl), { redirect: 'manual' });
      expect(res.status).toBe(307);
      expect(res.headers.get('location')).toBe(`//127.0.0.1:${port}`);
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('read endpoints', () => {
  it('gzip bodies of 1 KiB or more when the client accepts gzip, and only then', async () => {
    const { gunzipSync } = await import('node:zlib');
    running = await startCluster({ port: 0, agents: 2, time: 'virtual' });
    const url = new URL('/state', running.masterUrl);
    const get = (headers: Record<string, string>) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
    const plain = await get({});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    const zipped = await get({ 'accept-encoding': 'deflate, gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['content-type']).toBe('application/json');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const refused = await get({ 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    const small = await get({ 'accept-encoding': 'gzip' }).then(() => fetch(new URL('/version', running!.masterUrl)));
    expect(small.headers.get('content-encoding')).toBeNull();
  });
});

/** A raw keep-alive connection: one request at a time, each answer read to its Content-Length. */
class RawConnection {
  readonly #socket: net.Socket;
  #buffer = Buffer.alloc(0);
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(port: number) {
    this.#socket = net.connect(port, '127.0.0.1');
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake?.();
    });
    this.#socket.on('end', () => {
      this.#ended = true;
      this.#wake?.();
    });
  }

  /** Whether the server has ended the connection. */
  get ended(): boolean {
    return this.#ended;
  }

  async post(path: string, headers: Record<string, string>, body: string): Promise<{ head: string; body: string }> {
    const lines = Object.entries({
      host: '127.0.0.1',
      connection: 'keep-alive',
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    });
    this.#socket.write(`POST ${path} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
    await this.#until(() => this.#buffer.includes('\r\n\r\n'));
    const headEnd = this.#buffer.indexOf('\r\n\r\n');
    const head = this.#buffer.subarray(0, headEnd).toString('latin1');
    const length = Number(/^content-length: (\d+)$/im.exec(head)?.[1]);
    await this.#until(() => this.#buffer.length >= headEnd + 4 + length);
    const answer = this.#buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    this.#buffer = this.#buffer.subarray(headEnd + 4 + length);
    return { head, body: answer };
  }

  /** Resolves once the server ends the connection; rejects if it is still open after `timeoutMs`. */
  closed(timeoutMs = 2000): Promise<void> {
    return this.#until(() => this.#ended, timeoutMs);
  }

  destroy(): void {
    this.#socket.destroy();
  }

  async #until(condition: () => boolean, timeoutMs = 2000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (this.#ended && !condition()) throw new Error('connection ended by the server');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => (clearTimeout(timer), resolve());
      });
    }
  }
}

describe('a refused SUBSCRIBE closes its connection, whatever the reason', () => {
  const json = { 'content-type': 'application/json' };
  const subscribe = JSON.stringify({ type: 'SUBSCRIBE', subscribe: { framework_info: { user: 'u', name: 'n' } } });

  it.each([
    ['a JSON body cut short', json, '{"type":"SUBSCRIBE",', '400 Bad Request', 'Failed to parse body into JSON: '],
    [
      'a protobuf body that is no Call',
      { 'content-type': 'application/x-protobuf' },
      '\u00ff\u00ff\u00ff',
      '400 Bad Request',
      'Failed to parse body into Call protobuf',
    ],
    ['no Content-Type', {}, subscribe, '400 Bad Request', "Expecting 'Content-Type' to be present"],
    [
      'a Content-Type with parameters',
      { 'content-type': 'application/json; charset=utf-8' },
      subscribe,
      '415 Unsupported Media Type',
      "Expecting 'Content-Type' of",
    ],
    [
      'a Content-Type that is no media type',
      { 'content-type': 'json' },
      subscribe,
      '415 Unsupported Media Type',
      'Unsupported Media Type',
    ],
    [
      'a stream id header',
      { ...json, 'mesos-stream-id': 'x' },
      subscribe,
      '400 Bad Request',
      'Subscribe calls should not include',
    ],
  ])('%s', async (_name, headers, body, statusLine, text) => {
    running = await startCluster({ port: 0, agents: 0, time: 'virtual', host: '127.0.0.1' });
    const connection = new RawConnection(Number(new URL(running.masterUrl).port));
    try {
      const res = await connection.post('/api/v1/scheduler', headers as Record<string, string>, body);
      expect(res.head.split('\r\n')[0]).toBe(`HTTP/1.1 ${statusLine}`);
      expect(res.body.startsWith(text)).toBe(true);
      expect(res.head).toMatch(/^connection: close$/im);
      await connection.closed();
      expect(connection.ended).toBe(true);
    } finally {
      connection.destroy();
    }
  });

  it('while a refused call of another type keeps its connection for the next request', async () => {
    running = await startCluster({ port: 0, agents: 0, time: 'virtual', host: '127.0.0.1' });
    const connection = new RawConnection(Number(new URL(running.masterUrl).port));
    try {
      const revive = JSON.stringify({ type: 'REVIVE', framework_id: { value: 'nope' } });
      const first = await connection.post('/api/v1/scheduler', { ...json, 'mesos-stream-id': 'x' }, revive);
      expect([first.head.split('\r\n')[0], first.body]).toEqual([
        'HTTP/1.1 403 Forbidden',
        'Framework cannot be found',
      ]);
      const second = await connection.post('/api/v1/scheduler', json, '{}');
      expect(second.head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(connection.ended).toBe(false);
    } finally {
      connection.destroy();
    }
  });
});
