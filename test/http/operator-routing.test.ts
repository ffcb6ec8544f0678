/**
 * Path routing as upstream's HTTP layer does it, on master and agents: a
 * trailing (or doubled) slash is ignored, and a path with no handler of its
 * own goes to its longest prefix that has one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentApp } from '../../src/http/agent/app.js';
import { buildMasterApp } from '../../src/http/master/app.js';
import { Cluster } from '../../src/core/cluster.js';
import { VirtualDriver } from '../../src/runtime/driver.js';
import type { FastifyInstance } from 'fastify';

let master: FastifyInstance;
let agent: FastifyInstance;

beforeAll(() => {
  const cluster = new Cluster({ master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0' } });
  master = buildMasterApp({ driver: new VirtualDriver(cluster) });
  agent = buildAgentApp();
});
afterAll(async () => {
  await master.close();
  await agent.close();
});

const health = JSON.stringify({ type: 'GET_HEALTH' });
const post = (url: string) =>
  master.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: health });

describe('master routing', () => {
  it('serves the operator API at /api/v1, /master/api/v1 and the /api/v1/operator path Python clients use, query ignored', async () => {
    for (const url of [
      '/api/v1',
      '/master/api/v1',
      '/api/v1/operator',
      '/master/api/v1/operator',
      '/api/v1/?x=1',
      '/api/v1/operator/',
    ]) {
      const res = await post(url);
      expect([url, res.statusCode, res.json()]).toEqual([
        url,
        200,
        { type: 'GET_HEALTH', get_health: { healthy: true } },
      ]);
    }
  });

  it('ignores a trailing slash: GET /master/frameworks/ is /master/frameworks', async () => {
    const plain = await master.inject({ method: 'GET', url: '/master/frameworks' });
    const slashed = await master.inject({ method: 'GET', url: '/master/frameworks/' });
    expect([slashed.statusCode, slashed.body]).toEqual([200, plain.body]);
    expect((await master.inject({ method: 'GET', url: '//frameworks//' })).statusCode).toBe(200);
    expect((await master.inject({ method: 'GET', url: '/master/state/?jsonp=cb' })).body).toMatch(/^cb\(/);
  });

  it('sends a path with no handler to its longest prefix that has one', async () => {
    const state = await master.inject({ method: 'GET', url: '/master/state/anything/below' });
    expect(state.statusCode).toBe(200);
    expect(state.json()).toHaveProperty('frameworks');
    expect((await master.inject({ method: 'GET', url: '/metrics/snapshot/x' })).json()).toHaveProperty([
      'master/elected',
    ]);
    // The scheduler API below its path is still the scheduler API: a GET is refused as a method, not as a path.
    expect((await master.inject({ method: 'GET', url: '/api/v1/scheduler/' })).statusCode).toBe(405);
  });

  it('answers 404 where no prefix has a handler, and below /redirect, as upstream breaks redirect loops', async () => {
    for (const url of ['/nope', '/master', '/master/', '/master/nope/state', '/master/redirect/x', '/redirect/x/y']) {
      const res = await master.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.body]).toEqual([url, 404, '404 Not Found.']);
    }
    const redirect = await master.inject({ method: 'GET', url: '/master/redirect/' });
    expect([redirect.statusCode, redirect.headers.location]).toEqual([307, '//localhost:5050']);
  });
});

describe('agent routing', () => {
  it('ignores trailing slashes and serves paths below an endpoint by it', async () => {
    for (const url of ['/health/', '/slave(1)/health/', '/slave(1)/health/x']) {
      expect([url, (await agent.inject({ method: 'GET', url })).statusCode]).toEqual([url, 200]);
    }
    expect((await agent.inject({ method: 'GET', url: '/version/' })).json()).toHaveProperty('version');
    expect((await agent.inject({ method: 'GET', url: '/slave(1)/nope' })).statusCode).toBe(404);
  });
});

describe('the routes an app builds', () => {
  // fastify compiles a matcher for every route and method on every start; the endpoints are a table one route looks up.
  it('is the same few however many endpoints the app serves', () => {
    expect(master.printRoutes().trim().split('\n')).toEqual([
      '└── /',
      '    ├── metrics (GET, HEAD)',
      '    └── * (GET, HEAD, POST)',
    ]);
    expect(agent.printRoutes().trim().split('\n')).toEqual(['└── /', '    └── * (GET, HEAD, POST)']);
  });
});
