/**
 * The workflow service end to end: a cluster of this process with engine
 * containers, the service's framework subscribed to it over HTTP, and its
 * local API over a real socket. Requests are queued, launched on an agent
 * that satisfies their constraints, and polled to their final state.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;
let service: WorkflowService;

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    time: 'realtime',
    containerizers: 'docker,mesos',
    agentGroups: [
      { count: 1, attributes: 'zone:b' },
      { count: 1, attributes: 'zone:a;workflow:true' },
    ],
  });
  const config = { ...DEFAULT_CONFIG, clusterAttributes: ['workflow:true'], apiUsername: 'api', apiPassword: 'secret' };
  service = await startWorkflowService({ config, masterUrl: cluster.masterUrl, port: 0 });
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

async function api(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: () => any }> {
  const res = await fetch(service.url + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

const ACTIVE = ['TASK_STAGING', 'TASK_STARTING', 'TASK_RUNNING'];

/** Polls the task until its state passes the test (or a generous deadline). */
async function reached(
  id: string,
  states: readonly string[] | ((s: string) => boolean),
  deadlineMs = 15_000,
): Promise<any> {
  const end = Date.now() + deadlineMs;
  const wanted = typeof states === 'function' ? states : (s: string) => states.includes(s);
  for (;;) {
    const res = await api('GET', `/v0/task/${encodeURIComponent(id)}`);
    expect(res.status).toBe(200);
    const state = res.json()?.status?.state;
    if (state !== undefined && wanted(state)) return res.json();
    if (Date.now() > end) throw new Error(`task ${id} still ${state ?? 'queued'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const finalStatus = (id: string): Promise<any> => reached(id, (s) => !ACTIVE.includes(s));

function engineContainer(containerId: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: cluster.engineSocket!,
        path: `/containers/cluster-${containerId}/json`,
        headers: { host: 'localhost' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('workflow service against a cluster', () => {
  it('runs a queued request as an engine container on an agent that satisfies its constraints, to TASK_FINISHED', async () => {
    const queued = await api('POST', '/v0/queue_command', {
      workflow_task_id: 'wf.hello',
      container_type: 'DOCKER',
      command: ['/bin/sh', '-c', 'sleep 2 && exit 0'],
      image: 'alpine:3.20',
      cpus: 0.5,
      mem_limit: '128m',
      attributes: ['zone:a'],
      environment: { MODE: 'test' },
    });
    expect(queued).toMatchObject({ status: 200, text: 'Ok' });
    // While it runs: the older operator's reads, the container and the agent's address.
    const running = await reached('wf.hello', ['TASK_RUNNING']);
    expect(running.status).toMatchObject({
      task_id: { value: 'wf.hello' },
      agent_id: { value: cluster.agents[1]!.id },
    });
    const engine = await engineContainer(running.status.container_status.container_id.value);
    expect(engine.status).toBe(200);
    expect(engine.json.Config).toMatchObject({ Image: 'alpine:3.20' });
    const agent = await api('GET', `/v0/agent/${running.status.agent_id.value}`);
    expect(agent.status).toBe(200);
    expect(agent.json()).toEqual({ hostname: expect.any(String), port: String(cluster.agents[1]!.port) });
    expect((await api('GET', '/v0/agent/no-such-agent')).status).toBe(404);
    const done = await finalStatus('wf.hello');
    expect(done.status).toMatchObject({
      task_id: { value: 'wf.hello' },
      state: 'TASK_FINISHED',
      agent_id: { value: cluster.agents[1]!.id },
    });
  });

  it("reports TASK_FAILED for a command that exits 3, and takes the older operator's field names", async () => {
    const queued = await api('POST', '/v0/queue_command', {
      airflow_task_id: 'airflow.dag.fails',
      container_type: 'MESOS',
      command: 'exit 3',
      image: 'alpine',
      memlimit: 64,
    });
    expect(queued).toMatchObject({ status: 200, text: 'Ok' });
    const done = await finalStatus('airflow.dag.fails');
    expect(done.status.state).toBe('TASK_FAILED');
  });

  it('keeps a request no agent satisfies queued, lists it under /v0/dags, and refuses it twice', async () => {
    const body = { workflow_task_id: 'wf nowhere 1', command: ['true'], image: 'alpine', attributes: ['zone:c'] };
    expect((await api('POST', '/v0/queue_command', body)).status).toBe(200);
    const again = await api('POST', '/v0/queue_command', body);
    expect(again).toMatchObject({ status: 409, text: "Task 'wf nowhere 1' is already queued" });
    // A later request that fits runs meanwhile: first in, first out among those that fit.
    expect(
      (await api('POST', '/v0/queue_command', { workflow_task_id: 'wf.after', command: ['true'], image: 'alpine' }))
        .status,
    ).toBe(200);
    expect((await finalStatus('wf.after')).status.state).toBe('TASK_FINISHED');
    const status = await api('GET', `/v0/task/${encodeURIComponent('wf nowhere 1')}`);
    expect(status).toMatchObject({ status: 200, text: 'null' });
    const auth = { authorization: `Basic ${Buffer.from('api:secret').toString('base64')}` };
    const dags = await api('GET', '/v0/dags', undefined, auth);
    expect(dags.status).toBe(200);
    expect(dags.json()).toEqual([
      expect.objectContaining({ workflow_task_id: 'wf nowhere 1', attributes: ['zone:c'] }),
    ]);
  });

  it('queues an ended task id again, as a new task on the cluster', async () => {
    expect(
      (
        await api('POST', '/v0/queue_command', {
          workflow_task_id: 'wf.again',
          command: ['exit', '3'],
          image: 'alpine',
        })
      ).status,
    ).toBe(200);
    expect((await finalStatus('wf.again')).status.state).toBe('TASK_FAILED');
    expect(
      (await api('POST', '/v0/queue_command', { workflow_task_id: 'wf.again', command: 'exit 0', image: 'alpine' }))
        .status,
    ).toBe(200);
    // Its second run is a task of its own on the cluster, whose id says which run it is.
    expect((await finalStatus('wf.again')).status).toMatchObject({
      state: 'TASK_FINISHED',
      task_id: { value: 'wf.again.2' },
    });
  });
});
