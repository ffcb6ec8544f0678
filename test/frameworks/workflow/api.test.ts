/**
 * The workflow service's local API over a real socket: its answers to good,
 * malformed, duplicate and unknown requests, URL-encoded ids, and HTTP
 * Basic on `/v0/dags`. The cluster runs in virtual time and never moves:
 * launched tasks never get a status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { parseMemLimit } from '../../../src/frameworks/workflow/request.js';
import { startWorkflowService, type WorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;
let service: WorkflowService;

beforeAll(async () => {
  cluster = await startCluster({ port: 0, time: 'virtual', agents: 1 });
  service = await startWorkflowService({
    config: { ...DEFAULT_CONFIG, apiUsername: 'ops', apiPassword: 'p:w' },
    masterUrl: cluster.masterUrl,
    port: 0,
  });
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

async function call(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(service.url + path, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const queue = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  call('POST', '/v0/queue_command', typeof body === 'string' ? body : JSON.stringify(body), headers);

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

describe('POST /v0/queue_command', () => {
  it('answers 200 Ok for a request it queued, whatever the Content-Type', async () => {
    expect(
      await queue({ workflow_task_id: 'api.one', command: ['echo', 'hi'], image: 'alpine', mem_limit: '1g' }),
    ).toMatchObject({ status: 200, text: 'Ok' });
    expect(
      await queue(JSON.stringify({ workflow_task_id: 'api.two', command: 'true', image: 'alpine' }), {
        'content-type': 'text/plain',
      }),
    ).toMatchObject({ status: 200, text: 'Ok' });
    expect(service.scheduler.task('api.one')?.request).toMatchObject({
      command: ['echo', 'hi'],
      memMib: 1024,
      cpus: 0.1,
      diskMib: 1000,
    });
    expect(service.scheduler.task('api.two')?.request.command).toEqual(['/bin/sh', '-c', 'true']);
  });

  it('names a request without an id and says where its status is', async () => {
    const res = await queue({ command: ['true'], image: 'alpine' });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toMatch(/^\/v0\/task\/workflow\.\d+$/);
    expect((await call('GET', res.headers.get('location')!)).status).toBe(200);
  });

  it.each([
    ['not json', /^The body is not JSON: /],
    ['[1]', /^The body must be a JSON object$/],
    [{ image: 'alpine' }, /^Expecting command in queue_command call$/],
    [{ command: [], image: 'alpine' }, /^'command' must be a non-empty list of strings or a string$/],
    [{ command: ['true'] }, /^'image' is required/],
    [{ command: ['true'], image: 'a', cpus: 'many' }, /^'cpus' must be a non-negative number$/],
    [{ command: ['true'], image: 'a', mem_limit: '12x' }, /^'mem_limit' must be a positive number of MiB/],
    [
      { command: ['true'], image: 'a', attributes: ['nocolon'] },
      /^'attributes' must be a list of <name>:<value> strings$/,
    ],
    [{ command: ['true'], image: 'a', environment: ['A=1'] }, /^'environment' must be an object of strings$/],
    [{ command: ['true'], image: 'a', container_type: 'VM' }, /^'container_type' must be DOCKER or MESOS$/],
    [
      { command: ['true'], image: 'a', network_mode: 'mesh' },
      /^'network_mode' must be one of HOST, BRIDGE, NONE, USER$/,
    ],
    [{ command: ['true'], image: 'a', volumes: ['relative'] }, /^'volumes' must be a list of/],
    [{ command: ['true'], image: 'a', force_pull: 'yes' }, /^'force_pull' must be a boolean$/],
  ])('refuses %j with 400 and a one-line reason', async (body, reason) => {
    const res = await queue(body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(reason);
    expect(res.text).not.toContain('\n');
  });

  it.each([
    ['x'.repeat(100_000), "'workflow_task_id' must be at most 240 characters, got 100000"],
    ['x'.repeat(241), "'workflow_task_id' must be at most 240 characters, got 241"],
    ['a/b', "'workflow_task_id' is not a task id the cluster takes: 'a/b' contains invalid characters"],
    ['a\\b', "'workflow_task_id' is not a task id the cluster takes: 'a\\b' contains invalid characters"],
    ['a\nb', "'workflow_task_id' is not a task id the cluster takes: 'a\\x0ab' contains invalid characters"],
    ['..', "'workflow_task_id' is not a task id the cluster takes: '..' is disallowed"],
    ['\ud800', "'workflow_task_id' must be Unicode text (it holds a lone surrogate)"],
  ])('refuses an id the cluster would refuse (%#) at once, with a 400 and a one-line reason', async (id, reason) => {
    // A bounded wait: an answer that never comes, or one a client cannot read, fails here.
    const res = await fetch(`${service.url}/v0/queue_command`, {
      method: 'POST',
      body: JSON.stringify({ workflow_task_id: id, command: ['true'], image: 'alpine' }),
      signal: AbortSignal.timeout(5_000),
    });
    expect({ status: res.status, text: await res.text(), location: res.headers.get('location') }).toEqual({
      status: 400,
      text: reason,
      location: null,
    });
    expect(service.scheduler.task(id)).toBeUndefined();
  });

  it('takes an id of 240 characters, and its status is found at its Location', async () => {
    const id = `${'y'.repeat(239)}é`;
    const res = await queue({ airflow_task_id: id, command: ['true'], image: 'alpine' });
    expect(res.status).toBe(200);
    expect((await call('GET', res.headers.get('location')!)).status).toBe(200);
  });

  it('refuses an id that is still queued with 409', async () => {
    expect((await queue({ airflow_task_id: 'api.dup', command: ['true'], image: 'alpine' })).status).toBe(200);
    expect(await queue({ workflow_task_id: 'api.dup', command: ['true'], image: 'alpine' })).toMatchObject({
      status: 409,
      text: "Task 'api.dup' is already queued",
    });
  });
});

describe('GET /v0/task/<task_id>', () => {
  it('answers null for a queued task, 404 for an unknown one, with URL-encoded ids', async () => {
    // Characters a path must escape, none of which the cluster refuses in a task id.
    const id = 'api odd id?#%';
    expect((await queue({ workflow_task_id: id, command: ['true'], image: 'alpine' })).status).toBe(200);
    expect(await call('GET', `/v0/task/${encodeURIComponent(id)}`)).toMatchObject({ status: 200, text: 'null' });
    expect(await call('GET', '/v0/task/never.queued')).toMatchObject({
      status: 404,
      text: "Task 'never.queued' is not known",
    });
  });
});

describe('GET /v0/dags', () => {
  it('wants the configured credentials as HTTP Basic, and lists what waits for an offer', async () => {
    expect(
      (await queue({ workflow_task_id: 'api.waits', command: ['true'], image: 'alpine', attributes: ['zone:none'] }))
        .status,
    ).toBe(200);
    const none = await call('GET', '/v0/dags');
    expect(none).toMatchObject({ status: 401, text: 'Unauthorized Access' });
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await call('GET', '/v0/dags', undefined, basic('ops', 'wrong'))).status).toBe(401);
    expect((await call('GET', '/v0/dags', undefined, basic('user', 'password'))).status).toBe(401);
    const ok = await call('GET', '/v0/dags', undefined, basic('ops', 'p:w'));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).map((r: { workflow_task_id: string }) => r.workflow_task_id)).toContain('api.waits');
  });
});

describe('mem_limit', () => {
  it.each([
    [128, 128],
    ['128', 128],
    ['128m', 128],
    ['2g', 2048],
    ['1G', 1024],
    ['512k', 0.5],
    ['64mb', 64],
  ])('reads %j as %d MiB', (value, mib) => expect(parseMemLimit(value)).toBe(mib));
  it.each([['0'], ['-5m'], ['m'], ['1t'], [null]])('refuses %j', (value) =>
    expect(parseMemLimit(value)).toBeUndefined());
});
