/**
 * UPDATE_CONTAINER_MEMORY_LIMIT on an agent's `POST /api/v1` over real
 * sockets, JSON and protobuf, cgroups v1 and v2: the effect read back in
 * GET_CONTAINERS, `/containers` and the cgroup files (`/containers/cgroup`),
 * the OOM kill below usage as the framework sees it, every error of the
 * spec, and the override lost when the agent restarts.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';
import { cpusMem } from './executor-harness.js';
import { agentOperatorCall, type Encoding, type Json } from '../operator-harness.js';

const MIB = 1024 * 1024;

interface Launched {
  readonly r: RunningCluster;
  readonly client: SchedulerClient;
  readonly agentUrl: string;
  /** Container ids by task id. */
  readonly containers: Map<string, string>;
}

const opened: RunningCluster[] = [];

afterAll(async () => {
  await Promise.all(opened.map((r) => r.close()));
});

/** A cluster whose first agent runs command tasks `sleep 3600` of 64 MiB each, using 50 MiB (`memory=constant:50`). */
async function launch(
  options: Partial<StartClusterOptions>,
  taskIds: readonly string[],
  extra: Json = {},
): Promise<Launched> {
  const r = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, ...options });
  opened.push(r);
  const client = new SchedulerClient(r.masterUrl, 'json');
  expect((await client.subscribe({ user: 'u', name: 'memory', checkpoint: true, failover_timeout: 3600 })).status).toBe(
    200,
  );
  await client.next('SUBSCRIBED');
  for (let i = 0; i < 30 && !client.pending.some((e) => e.type === 'OFFERS'); i++) {
    r.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const offer = (await client.next('OFFERS', 100)).offers.offers[0];
  const task = (id: string) => ({
    name: id,
    task_id: { value: id },
    agent_id: offer.agent_id,
    resources: cpusMem(0.1, 64),
    command: { value: 'sleep 3600' },
    labels: { labels: [{ key: 'memory', value: 'constant:50' }] },
    ...extra,
  });
  const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: taskIds.map(task) } }] };
  expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
  const containers = new Map<string, string>();
  while (containers.size < taskIds.length) {
    const { status } = (await client.next('UPDATE')).update;
    await acknowledge(client, status);
    if (status.state === 'TASK_RUNNING')
      containers.set(status.task_id.value, status.container_status.container_id.value);
  }
  return { r, client, agentUrl: r.agents[0]!.url, containers };
}

async function acknowledge(client: SchedulerClient, status: Json): Promise<void> {
  if (status.uuid === undefined) return;
  await client.call({
    type: 'ACKNOWLEDGE',
    acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
  });
}

const update = (containerId: Json, value: number | string) => ({
  type: 'UPDATE_CONTAINER_MEMORY_LIMIT',
  update_container_memory_limit: { container_id: containerId, memory_limit: { value } },
});

async function getJson(agentUrl: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, agentUrl));
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type') === 'application/json' ? JSON.parse(text) : text };
}

describe.each([
  ['v1', 'json'],
  ['v2', 'protobuf'],
  ['v1', 'protobuf'],
  ['v2', 'json'],
] as const)('UPDATE_CONTAINER_MEMORY_LIMIT, cgroups %s, %s', (cgroups, encoding: Encoding) => {
  let env: Launched;
  const [hardFile, softFile] =
    cgroups === 'v2' ? ['memory.max', 'memory.low'] : ['memory.limit_in_bytes', 'memory.soft_limit_in_bytes'];
  const call = (body: Json, headers: Record<string, string> = {}) =>
    agentOperatorCall(env.agentUrl, body, encoding, headers);
  const cgroup = async (containerId: string) =>
    (await getJson(env.agentUrl, `/containers/cgroup?container_id=${containerId}`)).body;
  const statistics = async (containerId: string) => {
    const containers = (await call({ type: 'GET_CONTAINERS' })).response!.get_containers.containers as Json[];
    return containers.find((c) => c.container_id.value === containerId)!.resource_statistics;
  };

  beforeAll(async () => {
    env = await launch({ cgroups }, ['raise', 'oom', 'restart']);
  });

  it('raises and lowers a running task container: both files, /containers and GET_CONTAINERS', async () => {
    const id = env.containers.get('raise')!;
    expect((await cgroup(id)).files).toMatchObject({ [hardFile]: String(96 * MIB), [softFile]: String(96 * MIB) });
    expect(await statistics(id)).toMatchObject({
      mem_limit_bytes: 96 * MIB,
      mem_soft_limit_bytes: 96 * MIB,
      mem_total_bytes: 50 * MIB,
    });
    const raised = await call(update({ value: id }, 512));
    expect([raised.status, raised.body, raised.headers['content-type']]).toEqual([200, '', undefined]);
    expect(await cgroup(id)).toEqual({
      container_id: id,
      cgroups_version: cgroups,
      memory_isolation: true,
      files: expect.objectContaining({ [hardFile]: String(512 * MIB), [softFile]: String(512 * MIB) }),
    });
    expect(await statistics(id)).toMatchObject({ mem_limit_bytes: 512 * MIB, mem_soft_limit_bytes: 512 * MIB });
    expect((await call(update({ value: id }, 80))).status).toBe(200);
    const legacy = (await getJson(env.agentUrl, '/containers')).body as Json[];
    expect(legacy.find((c) => c.container_id === id)!.statistics).toMatchObject({
      mem_limit_bytes: 80 * MIB,
      mem_soft_limit_bytes: 80 * MIB,
      mem_total_bytes: 50 * MIB,
    });
    // Nothing the master books changes: the task still holds its 64 MiB.
    const tasks = (await (await fetch(new URL('/tasks?task_id=raise', env.r.masterUrl))).json()) as Json;
    expect(tasks.tasks[0].resources.mem).toBe(64);
    expect(tasks.tasks[0].state).toBe('TASK_RUNNING');
  });

  it('a limit below usage kills the container as the OOM killer does', async () => {
    const id = env.containers.get('oom')!;
    expect((await call(update({ value: id }, 40))).status).toBe(200);
    const { status } = (await env.client.nextUpdate('oom')).update;
    await acknowledge(env.client, status);
    expect(status).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_CONTAINER_LIMITATION_MEMORY',
      limitation: { resources: [expect.objectContaining({ name: 'mem', scalar: { value: 50 } })] },
    });
    expect(status.message).toMatch(/^Memory limit exceeded: Requested: 40MB Maximum Used: 50MB\n/);
    expect((await getJson(env.agentUrl, `/containers/cgroup?container_id=${id}`)).status).toBe(404);
  });

  it('refuses what the spec refuses, with upstream-style reasons', async () => {
    const id = env.containers.get('raise')!;
    const refused = async (body: Json) => {
      const answer = await call(body);
      return [answer.status, answer.body];
    };
    const invalid =
      "Failed to validate agent::Call: 'update_container_memory_limit.container_id' is a nested ContainerID";
    expect((await refused(update({ value: 'n', parent: { value: id } }, 100)))[1]).toMatch(
      new RegExp(`^${invalid.replace(/[.()]/g, '\\$&')}`),
    );
    for (const value of [0, -5, ...(encoding === 'json' ? ['Infinity', '-Infinity'] : [])]) {
      expect(await refused(update({ value: id }, value))).toEqual([
        400,
        `Failed to validate agent::Call: Expecting 'update_container_memory_limit.memory_limit.value' to be a positive finite number of MiB, got ${Number(value)}`,
      ]);
    }
    expect(await refused({ type: 'UPDATE_CONTAINER_MEMORY_LIMIT' })).toEqual([
      400,
      "Failed to validate agent::Call: Expecting 'update_container_memory_limit' to be present",
    ]);
    expect(await refused(update({ value: 'raise' }, 100))).toEqual([
      400,
      "'raise' is an executor id, not the ContainerID of a running task container",
    ]);
    expect((await refused(update({ value: `cluster-${id}` }, 100)))[0]).toBe(400);
    expect(await refused(update({ value: 'no-such-container' }, 100))).toEqual([
      404,
      'Container no-such-container cannot be found',
    ]);
  });

  it('the override is lost when the agent restarts: the limits come from the tasks again', async () => {
    const id = env.containers.get('restart')!;
    expect((await call(update({ value: id }, 300))).status).toBe(200);
    expect((await cgroup(id)).files[hardFile]).toBe(String(300 * MIB));
    const agentId = env.r.agents[0]!.id;
    env.r.driver.input((c) => c.crashAgent(agentId));
    expect((await call(update({ value: id }, 300))).status).toBe(503);
    env.r.driver.input((c) => c.restartAgent(agentId));
    env.r.advance(5_000);
    expect((await cgroup(id)).files).toMatchObject({ [hardFile]: String(96 * MIB), [softFile]: String(96 * MIB) });
    expect(await statistics(id)).toMatchObject({ mem_limit_bytes: 96 * MIB });
  });
});

describe('UPDATE_CONTAINER_MEMORY_LIMIT and the agent flags', () => {
  it('500 without memory isolation, the reason in one log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString('utf8')), done()) });
    const env = await launch({ isolation: 'posix/cpu,posix/mem', logger: pino({ level: 'error' }, sink) }, ['t']);
    const answer = await agentOperatorCall(env.agentUrl, update({ value: env.containers.get('t')! }, 100), 'json');
    expect([answer.status, answer.body]).toEqual([500, '500 Internal Server Error.']);
    const logged = lines.filter((l) => l.includes('memory limit'));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0]!).reason).toMatch(/^Memory isolation is not enabled on agent /);
    expect(
      (await getJson(env.agentUrl, `/containers/cgroup?container_id=${env.containers.get('t')}`)).body.files,
    ).toEqual({});
  });

  it('500 on cgroups v2 without the memory controller delegated', async () => {
    const env = await launch({ cgroups: 'v2', memoryControllerDelegated: false }, ['t']);
    const answer = await agentOperatorCall(env.agentUrl, update({ value: env.containers.get('t')! }, 100), 'protobuf');
    expect(answer.status).toBe(500);
  });

  it('an unlimited container (limits.mem Infinity) reads max and has no mem_limit_bytes until a limit is set', async () => {
    const env = await launch({}, ['u'], { limits: { mem: 'Infinity' } });
    const id = env.containers.get('u')!;
    const stats = async () =>
      (
        (await agentOperatorCall(env.agentUrl, { type: 'GET_CONTAINERS' }, 'protobuf')).response!.get_containers
          .containers as Json[]
      )[0]!.resource_statistics;
    expect((await getJson(env.agentUrl, `/containers/cgroup?container_id=${id}`)).body.files['memory.max']).toBe('max');
    expect(await stats()).not.toHaveProperty('mem_limit_bytes');
    expect((await stats()).mem_soft_limit_bytes).toBe(96 * MIB);
    expect((await agentOperatorCall(env.agentUrl, update({ value: id }, 200), 'protobuf')).status).toBe(200);
    expect((await stats()).mem_limit_bytes).toBe(200 * MIB);
    // Past what the kernel's page counter holds: unlimited again, both files.
    expect((await agentOperatorCall(env.agentUrl, update({ value: id }, 1e300), 'protobuf')).status).toBe(200);
    expect(await stats()).not.toHaveProperty('mem_soft_limit_bytes');
    expect((await getJson(env.agentUrl, `/containers/cgroup?container_id=${id}`)).body.files).toMatchObject({
      'memory.max': 'max',
      'memory.low': 'max',
    });
  });

  it('404 on an agent that does not run the container', async () => {
    const env = await launch({ agents: 2 }, ['t']);
    const other = env.r.agents.find((a) => a.url !== env.agentUrl)!;
    const answer = await agentOperatorCall(other.url, update({ value: env.containers.get('t')! }, 100), 'json');
    expect([answer.status, answer.body]).toEqual([404, `Container ${env.containers.get('t')} cannot be found`]);
  });

  it('401 without credentials with --authenticate-http-readwrite, in the realm mesos-agent-readwrite', async () => {
    const r = await startCluster({
      port: 0,
      agents: 1,
      time: 'virtual',
      credentials: { credentials: [{ principal: 'ops', secret: 's3cret' }] },
      authenticateHttpReadwrite: true,
    });
    opened.push(r);
    const agentUrl = r.agents[0]!.url;
    const body = update({ value: 'c' }, 100);
    const refused = await agentOperatorCall(agentUrl, body, 'json');
    expect([refused.status, refused.headers['www-authenticate']]).toEqual([401, 'Basic realm="mesos-agent-readwrite"']);
    const wrong = await agentOperatorCall(agentUrl, body, 'json', {
      authorization: `Basic ${Buffer.from('ops:nope').toString('base64')}`,
    });
    expect(wrong.status).toBe(401);
    const authorized = await agentOperatorCall(agentUrl, body, 'json', {
      authorization: `Basic ${Buffer.from('ops:s3cret').toString('base64')}`,
    });
    expect(authorized.status).toBe(404);
    // The executor API and the read endpoints stay open.
    expect((await fetch(new URL('/containers', agentUrl))).status).toBe(200);
  });

  it('the start is refused without credentials for the realm, or with an unknown isolator or version', async () => {
    await expect(startCluster({ port: 0, agents: 0, authenticateHttpReadwrite: true })).rejects.toThrow(
      /^authenticateHttpReadwrite: needs credentials/,
    );
    await expect(startCluster({ port: 0, agents: 0, isolation: 'cgroups/mem,gpu/nvidia' })).rejects.toThrow(
      /^isolation: unknown isolator 'gpu\/nvidia'/,
    );
    await expect(startCluster({ port: 0, agents: 0, cgroups: 'v3' as 'v2' })).rejects.toThrow(
      /^cgroups: must be one of v1, v2/,
    );
  });
});
