/**
 * The orchestration framework's HTTP API over real sockets, against a
 * cluster with engine containers: every endpoint under /api/framework/v0/
 * and the plugin's /api/m3s/v0/ (double slash included), its 400 for a bad
 * count, its 401 without the configured credentials, 404 and 405.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RunningCluster } from '../../src/start/cluster.js';
import type { OrchestratorService } from '../../src/frameworks/orchestrator/service.js';
import { runningAtMaster, startOrchCluster, startService, testConfig, until } from './orch-harness.js';

let cluster: RunningCluster;
let service: OrchestratorService;
const AUTH = `Basic ${Buffer.from('admin:pa55:word').toString('base64')}`;

async function get(
  path: string,
  init: { method?: string; auth?: string | null } = {},
): Promise<{ status: number; text: string; type: string | null; headers: Headers }> {
  const auth = init.auth === undefined ? AUTH : init.auth;
  const res = await fetch(`${service.url}${path}`, {
    method: init.method ?? 'GET',
    headers: auth === null ? {} : { authorization: auth },
    redirect: 'manual',
  });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type'), headers: res.headers };
}
const json = async (path: string, method?: string): Promise<any> => {
  const r = await get(path, { method });
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return JSON.parse(r.text);
};
const running = (): Record<string, number> => runningAtMaster(cluster, service.orchestrator.frameworkId!);

beforeAll(async () => {
  cluster = await startOrchCluster(3);
  service = await startService(
    testConfig(cluster, { AUTH_USERNAME: 'admin', AUTH_PASSWORD: 'pa55:word', ORCH_AGENT_MEM: '256' }),
  );
  await until('every part running', () => JSON.stringify(running()) === '{"server":1,"agent":1,"datastore":1}');
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

describe('the framework API', () => {
  it('answers 401 without the credentials, or with wrong ones, on every path', async () => {
    for (const path of [
      '/api/framework/v0/status/framework',
      '/api/framework/v0/agent/scale/3',
      '/api/m3s/v0/status/m3s',
    ]) {
      const none = await get(path, { auth: null });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Basic realm="m3s"');
      expect((await get(path, { auth: `Basic ${Buffer.from('admin:nope').toString('base64')}` })).status).toBe(401);
      expect((await get(path, { auth: 'Bearer admin' })).status).toBe(401);
    }
    expect(service.orchestrator.wanted.agent).toBe(1);
  });

  it('reports the status record of the parts', async () => {
    expect(await json('/api/framework/v0/status/framework')).toEqual({
      Server: 'TASK_RUNNING',
      Agent: 'TASK_RUNNING',
      Datastore: 'TASK_RUNNING',
      API: 'ok',
    });
  });

  it('serves the client configuration: a cluster entry with the CA data and the server task host and port', async () => {
    const r = await get('/api/framework/v0/server/config');
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/yaml');
    const config = parse(r.text);
    const server = service.orchestrator.live('server')[0]!;
    expect(config.clusters[0].cluster.server).toBe(`https://${server.hostname}:${server.ports[0]}`);
    const ca = new X509Certificate(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64'));
    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(config['current-context']).toBe('m3s');
  });

  it('serves the server version', async () => {
    expect(await json('/api/framework/v0/server/version')).toMatchObject({
      gitVersion: 'latest',
      image: 'avhost/ubuntu-m3s:latest',
    });
  });

  it('sets and reads the count of each part', async () => {
    expect(await json('/api/framework/v0/agent/scale')).toEqual({ Scale: 1, Running: 1 });
    expect(await json('/api/framework/v0/agent/scale/2')).toEqual({ Scale: 2, Previous: 1 });
    await until('two agents', () => running().agent === 2);
    // The master counts a task running before the framework has its update: wait for the framework's own count.
    await until(
      'the framework to see two agents running',
      async () => (await json('/api/framework/v0/agent/scale')).Running === 2,
    );
    expect(await json('/api/framework/v0/agent/scale')).toEqual({ Scale: 2, Running: 2 });
    expect(await json('/api/framework/v0/server/scale')).toEqual({ Scale: 1, Running: 1 });
    expect(await json('/api/framework/v0/datastore/scale/1')).toEqual({ Scale: 1, Previous: 1 });
    expect(await json('/api/framework/v0/agent/scale/1')).toEqual({ Scale: 1, Previous: 2 });
    await until('one agent', () => running().agent === 1);
    await until(
      'the framework to see one agent running',
      async () => (await json('/api/framework/v0/agent/scale')).Running === 1,
    );
  });

  it('refuses a count that is not a non-negative integer with 400', async () => {
    // Escapes that decode to nothing (a lone %, a cut UTF-8 sequence) are shown as sent.
    for (const bad of ['-1', 'two', '1.5', '1e3', '%20', '%', '%zz', '%E2%82']) {
      const r = await get(`/api/framework/v0/agent/scale/${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.text).toMatch(/^Invalid count .*: expected a non-negative integer\n$/);
    }
    expect(service.orchestrator.wanted.agent).toBe(1);
  });

  it('answers 404 for an unknown path and 405 for a wrong method', async () => {
    expect((await get('/api/framework/v0/nothing/here')).status).toBe(404);
    expect((await get('/api/framework/v0/agent/scale/1/more')).status).toBe(404);
    expect((await get('/other')).status).toBe(404);
    const r = await get('/api/framework/v0/status/framework', { method: 'POST' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET');
  });
});

describe("the plugin's API under /api/m3s/v0/", () => {
  it('serves status/m3s, status/k8s, server/config and server/version, with a double slash too', async () => {
    expect(await json('//api/m3s/v0/status/m3s')).toEqual({
      Server: 'TASK_RUNNING',
      Agent: 'TASK_RUNNING',
      Datastore: 'TASK_RUNNING',
      API: 'ok',
    });
    const k8s = await json('/api/m3s/v0/status/k8s');
    expect(k8s.Ready).toBe(true);
    expect(k8s.Nodes.map((n: any) => n.role).sort()).toEqual(['agent', 'server']);
    expect((await get('//api/m3s/v0/server/config')).text).toContain('certificate-authority-data');
    expect(await json('/api/m3s/v0/server/version')).toMatchObject({ gitVersion: 'latest' });
  });

  it('scales agents and the datastore (etcd) by their plugin names', async () => {
    expect(await json('//api/m3s/v0/agent/scale')).toEqual({ Scale: 1, Running: 1 });
    expect(await json('/api/m3s/v0/etcd/scale')).toEqual({ Scale: 1, Running: 1 });
    expect(await json('//api/m3s/v0/etcd/scale/0')).toEqual({ Scale: 0, Previous: 1 });
    await until('no datastore', () => running().datastore === 0);
    expect(await json('/api/m3s/v0/etcd/scale/1')).toEqual({ Scale: 1, Previous: 0 });
    await until('a datastore again', () => running().datastore === 1);
    expect((await get('/api/m3s/v0/etcd/scale/x')).status).toBe(400);
  });

  it('shuts the cluster down, starts it, and restarts it (PUT only)', async () => {
    expect((await get('/api/m3s/v0/cluster/shutdown')).status).toBe(405);
    expect(await json('/api/m3s/v0/cluster/shutdown', 'PUT')).toEqual({ Cluster: 'shutdown' });
    await until('nothing running', () => JSON.stringify(running()) === '{"server":0,"agent":0,"datastore":0}');
    expect(await json('/api/m3s/v0/cluster/start', 'PUT')).toEqual({ Cluster: 'start' });
    await until('every part back', () => JSON.stringify(running()) === '{"server":1,"agent":1,"datastore":1}');
    const before = new Set(service.orchestrator.tasks.keys());
    expect(await json('//api/m3s/v0/cluster/restart', 'PUT')).toEqual({ Cluster: 'restart' });
    await until(
      'every part replaced',
      () =>
        JSON.stringify(running()) === '{"server":1,"agent":1,"datastore":1}' &&
        [...service.orchestrator.tasks.keys()].every((k) => !before.has(k)),
    );
  });
});
