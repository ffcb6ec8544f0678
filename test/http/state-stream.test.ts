/**
 * `/state` of a cluster whose text is longer than one slice goes out in
 * slices (chunked), gzipped as a stream when asked; the text is the
 * builder's, as of the moment of the request.
 */
import { gunzipSync } from 'node:zlib';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildMasterApp } from '../../src/http/master/app.js';
import { SLICE_BYTES } from '../../src/http/stream-body.js';
import { VirtualDriver } from '../../src/runtime/driver.js';
import { renderState, toV0Json } from '../../src/wire/v0/index.js';
import { encodeResponseJson, encodeResponseProto, readResponse } from '../../src/wire/operator-out.js';
import { commandTask, connect, makeCluster, type TestCluster } from '../core/helpers.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Agents with many small tasks each: several slices of `/state`. */
function busyCluster(agents = 25, perAgent = 40): { cluster: TestCluster; driver: VirtualDriver } {
  const cluster = makeCluster({ agents });
  const s = connect(cluster, { user: 'alice', name: 'busy' });
  cluster.advance(1000);
  for (const offer of s.offers()) {
    const tasks = Array.from({ length: perAgent }, (_, i) =>
      commandTask(`${offer.agentId}-${i}`, offer.agentId, 'sleep 100000', 'cpus:0.01;mem:1'),
    );
    expect(s.accept(offer.id, tasks).ok).toBe(true);
  }
  cluster.advance(2000);
  s.acknowledgeAll();
  const driver = new VirtualDriver(cluster);
  app = buildMasterApp({ driver });
  return { cluster, driver };
}

const built = (cluster: TestCluster) => toV0Json(renderState(cluster.view));

describe('/state in slices', () => {
  it('writes the builder text, chunked, when it is longer than a slice', async () => {
    const { cluster } = busyCluster();
    const expected = built(cluster);
    expect(expected.length).toBeGreaterThan(2 * SLICE_BYTES);
    for (const url of ['/state', '/master/state', '/state.json']) {
      const res = await app!.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.body).toBe(expected);
    }
  });

  it('writes text of characters longer than a byte, all ASCII or none, whole', async () => {
    for (const name of ['plain', '\u00e9t\u00e9 \u65e5\u672c \ud83d\ude00']) {
      const cluster = makeCluster({ agents: 4 });
      const s = connect(cluster, { user: 'alice', name });
      cluster.advance(1000);
      for (const offer of s.offers()) {
        const tasks = Array.from({ length: 300 }, (_, i) => ({
          ...commandTask(`${offer.agentId}-${i}`, offer.agentId, 'sleep 100000', 'cpus:0.01;mem:1'),
          name: name.repeat(20),
        }));
        expect(s.accept(offer.id, tasks).ok).toBe(true);
      }
      cluster.advance(2000);
      await app?.close();
      app = buildMasterApp({ driver: new VirtualDriver(cluster) });
      const expected = built(cluster);
      expect(expected.length).toBeGreaterThan(2 * SLICE_BYTES);
      const res = await app.inject({ method: 'GET', url: '/state' });
      expect(res.rawPayload.equals(Buffer.from(expected))).toBe(true);
    }
  });

  it('gzips the stream when the client accepts gzip, and wraps it in the JSONP call when asked', async () => {
    const { cluster } = busyCluster();
    const expected = built(cluster);
    const zipped = await app!.inject({ method: 'GET', url: '/state', headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.rawPayload).toString()).toBe(expected);
    const jsonp = await app!.inject({ method: 'GET', url: '/state?jsonp=show.it' });
    expect(jsonp.headers['content-type']).toBe('text/javascript');
    expect(jsonp.body).toBe(`show.it(${expected});`);
  });

  it('keeps a Content-Length for a body of one slice', async () => {
    const { cluster } = busyCluster(1, 1);
    const res = await app!.inject({ method: 'GET', url: '/state' });
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(built(cluster))));
    expect(res.body).toBe(built(cluster));
  });

  it('writes the state of the moment of the request while the cluster moves on, and answers others meanwhile', async () => {
    const { cluster, driver } = busyCluster();
    const expected = built(cluster);
    await app!.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app!.server.address() as AddressInfo;
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/state', agent: false }, (res) => {
        res.pause();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
        // The first bytes are out; the cluster moves on before the rest is read, and a small read is answered.
        driver.input((c) => c.advance(200_000));
        driver.input((c) => c.inject({ type: 'crash_agent', agentId: cluster.agents[0]!.id }));
        driver.advance(60_000);
        http.get({ host: '127.0.0.1', port, path: '/version', agent: false }, (small) => {
          small.resume();
          small.on('end', () => res.resume());
        });
      });
      req.on('error', reject);
    });
    expect(built(cluster)).not.toBe(expected);
    expect(body).toBe(expected);
  });
});

describe('GET_STATE in slices', () => {
  it('writes the builder bytes, JSON and protobuf, chunked', async () => {
    const { cluster } = busyCluster();
    for (const accept of ['application/json', 'application/x-protobuf']) {
      const response = readResponse(cluster.view, 'GET_STATE');
      const expected =
        accept === 'application/json'
          ? Buffer.from(encodeResponseJson(response as never))
          : Buffer.from(encodeResponseProto(response as never));
      expect(expected.length).toBeGreaterThan(SLICE_BYTES);
      const res = await app!.inject({
        method: 'POST',
        url: '/api/v1',
        headers: { 'content-type': 'application/json', accept },
        payload: '{"type":"GET_STATE"}',
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(accept);
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.rawPayload.equals(expected)).toBe(true);
    }
  });
});
