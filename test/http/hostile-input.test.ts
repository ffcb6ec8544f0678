/**
 * Hostile and careless requests at the HTTP edge: repeated and malformed
 * query parameters, methods, HEAD, deeply nested and mistyped JSON, huge
 * fields. Each gets what upstream answers (a read, or a short 4xx from the
 * error catalogue), never a 500, a stack overflow or a silently different call.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Cluster } from '../../src/core/cluster.js';
import { buildAgentApp } from '../../src/http/agent/app.js';
import { httpError } from '../../src/http/errors.js';
import { buildMasterApp } from '../../src/http/master/app.js';
import { VirtualDriver } from '../../src/runtime/driver.js';

let app: FastifyInstance;
beforeEach(() => {
  const cluster = new Cluster({ master: { hostname: '127.0.0.1', ip: '127.0.0.1', port: 5050, version: 'test' } });
  app = buildMasterApp({ driver: new VirtualDriver(cluster) });
});
afterEach(async () => {
  await app.close();
});

type Method = NonNullable<InjectOptions['method']>;

const JSON_ENDPOINTS = [
  '/state',
  '/state.json',
  '/state-summary',
  '/slaves',
  '/frameworks',
  '/tasks',
  '/roles',
  '/version',
];
const READ_ENDPOINTS = [
  ...[...JSON_ENDPOINTS, '/health', '/redirect'].flatMap((path) => [path, `/master${path}`]),
  '/metrics/snapshot',
];
const WRONG_READ_METHODS: Method[] = ['PUT', 'DELETE', 'PATCH', 'TRACE', 'POST', 'OPTIONS', 'QUERY', 'PROPFIND'];

const expectError = (res: { statusCode: number; body: string }, status: number, body: string | RegExp) => {
  expect(res.statusCode).toBe(status);
  if (typeof body === 'string') expect(res.body).toBe(body);
  else expect(res.body).toMatch(body);
  expect(res.body).not.toMatch(/[\r\n]/);
};

describe('query parameters of the read endpoints', () => {
  it('take the last of a repeated parameter, as upstream query maps do, on every endpoint', async () => {
    for (const path of READ_ENDPOINTS) {
      const res = await app.inject({ url: `${path}?limit=1&limit=2&order=asc&order=des&x=1&x=2` });
      expect(res.statusCode, path).toBeLessThan(400);
    }
    const tasks = await app.inject({ url: '/tasks?limit=1&limit=2' });
    expect([tasks.statusCode, tasks.json()]).toEqual([200, { tasks: [] }]);
    const wrapped = await app.inject({ url: '/master/version?jsonp=first&jsonp=last' });
    expect(wrapped.statusCode).toBe(200);
    expect(wrapped.body).toMatch(/^last\(\{.*\}\);$/);
    // ';' separates parameters too, as in upstream's decoder.
    expect((await app.inject({ url: '/version?jsonp=a;jsonp=b' })).body).toMatch(/^b\(/);
  });

  it('answer a malformed percent-escape with 400 QUERY_INVALID and a one-line reason, as upstream fails such a query', async () => {
    for (const [url, reason] of [
      ['/slaves?slave_id=%zz', /%zz/],
      ['/health?%', /%/],
    ] as const) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(httpError('QUERY_INVALID', '').status);
      expect(res.body, url).toMatch(reason);
      expect(res.body, url).not.toMatch(/[\r\n]|\.$/);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
  });

  it('use the default for a value the endpoint cannot use, as upstream does', async () => {
    for (const url of [
      '/tasks?limit=abc',
      '/tasks?limit=-1',
      '/master/tasks?offset=1.5',
      '/tasks?limit=99999999999999999999',
      '/tasks?order=up',
    ]) {
      const res = await app.inject({ url });
      expect([url, res.statusCode, res.json()]).toEqual([url, 200, { tasks: [] }]);
    }
    // A jsonp that is no function name is not written into JavaScript: plain JSON.
    const plain = await app.inject({ url: '/state?jsonp=alert(1)' });
    expect([plain.statusCode, plain.headers['content-type']]).toEqual([200, 'application/json']);
  });

  it('still take well-formed values, percent-escapes and "+" included, and ignore unknown parameters', async () => {
    expect((await app.inject({ url: '/tasks?limit=%32&offset=+0&order=asc&unknown=%41' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/frameworks?framework_id=a+b%20c' })).json()).toMatchObject({ frameworks: [] });
    expect((await app.inject({ url: '/version?jsonp=cb.x_1' })).body).toMatch(/^cb\.x_1\(/);
  });
});

describe('methods of the read endpoints', () => {
  it('answer every method as GET, since upstream read handlers do not check it', async () => {
    for (const url of READ_ENDPOINTS) {
      const get = await app.inject({ method: 'GET', url });
      for (const method of WRONG_READ_METHODS) {
        const res = await app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: '{}' });
        expect([url, method, res.statusCode], res.body).toEqual([url, method, get.statusCode]);
        if (method !== 'HEAD' && url.includes('/state')) expect(res.json()).toHaveProperty('frameworks');
      }
    }
  });

  it('answer an extension method on a path no endpoint has with 404, as any other method', async () => {
    for (const method of ['PROPFIND', 'LOCK', 'GET'] as Method[]) {
      const res = await app.inject({ method, url: '/no/such/endpoint' });
      expect([method, res.statusCode]).toEqual([method, 404]);
    }
  });

  it('answer HEAD with the status and headers of GET and no body', async () => {
    for (const url of [...READ_ENDPOINTS, '/tasks?jsonp=cb']) {
      for (const headers of [{}, { 'accept-encoding': 'gzip' }]) {
        const get = await app.inject({ method: 'GET', url, headers });
        const head = await app.inject({ method: 'HEAD', url, headers });
        const { date: _g, ...getHeaders } = get.headers;
        const { date: _h, ...headHeaders } = head.headers;
        expect([url, head.statusCode, headHeaders]).toEqual([url, get.statusCode, getHeaders]);
        expect(head.rawPayload.length).toBe(0);
      }
    }
  });

  it('on an agent, /health and /version answer every method too', async () => {
    const agent = buildAgentApp();
    try {
      for (const url of ['/health', '/version', '/slave(1)/health', '/slave(1)/version']) {
        for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'TRACE', 'MKCOL'] as Method[]) {
          expect([url, method, (await agent.inject({ method, url })).statusCode]).toEqual([url, method, 200]);
        }
      }
    } finally {
      await agent.close();
    }
  });
});

describe('methods of the scheduler API', () => {
  it('answers every method but POST with 405 and Allow: POST, TRACE and extension methods included', async () => {
    const methods: Method[] = ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'QUERY', 'PROPFIND'];
    for (const url of ['/api/v1/scheduler', '/master/api/v1/scheduler']) {
      for (const method of methods) {
        const res = await app.inject({ method, url, headers: { 'content-type': 'json' }, payload: '{}' });
        expect([url, method, res.statusCode]).toEqual([url, method, 405]);
        expect(res.headers.allow).toBe('POST');
        if (method !== 'HEAD')
          expect(res.body).toBe(`405 Method Not Allowed. Expecting one of { 'POST' }, but received '${method}'.`);
      }
    }
  });
});

describe('JSON bodies of the scheduler API', () => {
  const post = (payload: string) =>
    app.inject({ method: 'POST', url: '/api/v1/scheduler', headers: { 'content-type': 'application/json' }, payload });
  const PREFIX = 'Failed to convert JSON into Call protobuf: ';

  it('refuses arrays nested 7,000 deep (a 14 KB body) with a 400, not a stack overflow', async () => {
    const deep = '['.repeat(7000) + ']'.repeat(7000);
    for (const body of [
      `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","roles":${deep}}}}`,
      `{"type":"SUPPRESS","framework_id":{"value":"f"},"suppress":{"roles":${deep}}}`,
    ]) {
      expectError(await post(body), 400, `${PREFIX}Not expecting a JSON array in the array of field 'roles'`);
    }
  });

  it('refuses a nested array instead of flattening it', async () => {
    const body = '{"type":"DECLINE","framework_id":{"value":"f"},"decline":{"offer_ids":[[{"value":"o-1"}]]}}';
    expectError(await post(body), 400, `${PREFIX}Not expecting a JSON array in the array of field 'offer_ids'`);
  });

  it('refuses a type mismatch with a 400 naming the field', async () => {
    const suppress = (roles: string) =>
      `{"type":"SUPPRESS","framework_id":{"value":"f"},"suppress":{"roles":${roles}}}`;
    expectError(
      await post(suppress('"x"')),
      400,
      `${PREFIX}Expecting a JSON array for field 'roles', not a JSON string`,
    );
    expectError(
      await post(suppress('[null]')),
      400,
      `${PREFIX}Not expecting a JSON null in the array of field 'roles'`,
    );
    expectError(await post(suppress('[1]')), 400, `${PREFIX}Not expecting a JSON number for field 'roles'`);
    // null stays "absent" where it is a field's whole value.
    expect((await post(suppress('null'))).statusCode).toBe(403);
  });

  it('answers a 1 MB field with a reason of a few hundred characters', async () => {
    const huge = 'x'.repeat(1_000_000);
    const res = await post(
      `{"type":"DECLINE","framework_id":{"value":"f"},"decline":{"offer_ids":[],"filters":{"refuse_seconds":"${huge}"}}}`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.body.length).toBeLessThanOrEqual(300);
    expect(res.body).toMatch(/^Failed to convert JSON into Call protobuf: Failed to convert 'xxx+…$/);
  });
});
