/**
 * An agent's own endpoints over real sockets: the agent operator API in
 * both encodings, and the legacy `/state`, `/flags` and `/containers`,
 * all rendered from what the agent process itself knows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { decodeJson } from '../../../src/wire/json-decode.js';
import { encodeJson } from '../../../src/wire/json-encode.js';
import { decodeProto, encodeProto } from '../../../src/wire/proto-codec.js';
import { MEDIA, postBinary, type Encoding, type Json } from '../operator-harness.js';

let r: RunningCluster;
let frameworkId: string;
let agentUrl: string;
let client: SchedulerClient;

const cpusMem = (cpus: number, mem: number) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus } },
  { name: 'mem', type: 'SCALAR', scalar: { value: mem } },
];

/** Posts an agent Call to the agent's `/api/v1` in one encoding; the Response comes back as upstream JSON. */
async function agentCall(
  call: Json,
  encoding: Encoding,
  path = '/api/v1',
): Promise<{ status: number; body: string; response?: Json }> {
  const media = MEDIA[encoding];
  let body: string | Buffer = JSON.stringify(call);
  if (encoding === 'protobuf') {
    const decoded = decodeJson<object>('mesos.v1.agent.Call', body);
    if (!decoded.ok) throw new Error(decoded.error);
    body = Buffer.from(encodeProto('mesos.v1.agent.Call', decoded.value));
  }
  const raw = await postBinary(new URL(path, agentUrl), body, { 'content-type': media, accept: media });
  if (raw.status !== 200) return { status: raw.status, body: raw.bytes.toString('utf8') };
  expect(raw.headers['content-type']).toBe(media);
  if (encoding === 'json') return { status: 200, body: '', response: JSON.parse(raw.bytes.toString('utf8')) as Json };
  const decoded = decodeProto<object>('mesos.v1.agent.Response', raw.bytes, 'Response');
  if (!decoded.ok) throw new Error(decoded.error);
  return { status: 200, body: '', response: JSON.parse(encodeJson('mesos.v1.agent.Response', decoded.value)) as Json };
}

async function getJson(path: string): Promise<Json> {
  const res = await fetch(new URL(path, agentUrl));
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}

beforeAll(async () => {
  r = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 3 });
  agentUrl = r.agents[0]!.url;
  client = new SchedulerClient(r.masterUrl, 'json');
  expect((await client.subscribe({ user: 'alice', name: 'agent-endpoints', checkpoint: true })).status).toBe(200);
  frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value;
  for (let i = 0; i < 30 && !client.pending.some((e) => e.type === 'OFFERS'); i++) {
    r.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const offer = (await client.next('OFFERS', 100)).offers.offers[0];
  const infos = [
    {
      name: 'cmd',
      task_id: { value: 'cmd' },
      agent_id: offer.agent_id,
      resources: cpusMem(0.5, 64),
      command: { value: 'sleep 3600' },
    },
    {
      name: 'exe',
      task_id: { value: 'exe' },
      agent_id: offer.agent_id,
      resources: cpusMem(0.25, 32),
      executor: {
        executor_id: { value: 'exec-1' },
        name: 'my executor',
        command: { value: 'run-executor' },
        resources: cpusMem(0.1, 16),
      },
    },
  ];
  const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: infos } }] };
  expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
  const waiting = new Set(['cmd', 'exe']);
  while (waiting.size > 0) {
    const { status } = (await client.next((e) => e.type === 'UPDATE')).update;
    if (status.uuid !== undefined)
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    if (status.state === 'TASK_RUNNING') waiting.delete(status.task_id.value);
  }
});

afterAll(async () => {
  await r?.close();
});

describe.each(['json', 'protobuf'] as const)('agent operator API (%s)', (encoding) => {
  it('GET_HEALTH, GET_VERSION and GET_FLAGS describe this agent', async () => {
    expect((await agentCall({ type: 'GET_HEALTH' }, encoding)).response).toEqual({
      type: 'GET_HEALTH',
      get_health: { healthy: true },
    });
    expect((await agentCall({ type: 'GET_VERSION' }, encoding)).response?.get_version.version_info.version).toBe(
      '1.11.0',
    );
    const flags = (await agentCall({ type: 'GET_FLAGS' }, encoding)).response?.get_flags.flags as Json[];
    const port = new URL(agentUrl).port;
    expect(flags).toContainEqual({ name: 'port', value: port });
    expect(flags).toContainEqual({ name: 'master', value: `127.0.0.1:${new URL(r.masterUrl).port}` });
  });

  it('GET_AGENT names the agent itself', async () => {
    const info = (await agentCall({ type: 'GET_AGENT' }, encoding)).response?.get_agent.agent_info;
    expect(info.id.value).toBe(r.agents[0]!.id);
    expect(info.port).toBe(Number(new URL(agentUrl).port));
    expect(info.resources.length).toBeGreaterThan(0);
  });

  it('GET_FRAMEWORKS, GET_EXECUTORS and GET_TASKS list what the agent runs', async () => {
    const frameworks = (await agentCall({ type: 'GET_FRAMEWORKS' }, encoding)).response?.get_frameworks;
    expect(frameworks.frameworks.map((f: Json) => f.framework_info.id.value)).toEqual([frameworkId]);
    const executors = (await agentCall({ type: 'GET_EXECUTORS' }, encoding)).response?.get_executors;
    const ids = executors.executors.map((e: Json) => e.executor_info.executor_id.value).sort();
    expect(ids).toEqual(['cmd', 'exec-1']);
    const custom = executors.executors.find((e: Json) => e.executor_info.executor_id.value === 'exec-1').executor_info;
    expect(custom.name).toBe('my executor');
    expect(custom.framework_id.value).toBe(frameworkId);
    const tasks = (await agentCall({ type: 'GET_TASKS' }, encoding)).response?.get_tasks;
    expect(tasks.launched_tasks.map((t: Json) => [t.task_id.value, t.state, t.executor_id?.value]).sort()).toEqual([
      ['cmd', 'TASK_RUNNING', undefined],
      ['exe', 'TASK_RUNNING', 'exec-1'],
    ]);
    const state = (await agentCall({ type: 'GET_STATE' }, encoding)).response?.get_state;
    expect(state.get_tasks).toEqual(tasks);
    expect(state.get_executors).toEqual(executors);
    expect(state.get_frameworks).toEqual(frameworks);
  });

  it('GET_CONTAINERS gives each executor its limits and no simulated usage', async () => {
    const containers = (await agentCall({ type: 'GET_CONTAINERS' }, encoding)).response?.get_containers
      .containers as Json[];
    const custom = containers.find((c) => c.executor_id.value === 'exec-1')!;
    expect(custom.resource_statistics.cpus_limit).toBeCloseTo(0.35);
    expect(custom.resource_statistics.mem_limit_bytes).toBe(48 * 1024 * 1024);
    expect(custom.resource_statistics.mem_rss_bytes).toBe(0);
    expect(custom.container_status.container_id).toEqual(custom.container_id);
    // A command executor adds upstream's allowance (0.1 cpus, 32 MB) to its task's resources.
    const cmd = containers.find((c) => c.executor_id.value === 'cmd')!;
    expect(cmd.resource_statistics.cpus_limit).toBeCloseTo(0.6);
    expect(cmd.resource_statistics.mem_limit_bytes).toBe(96 * 1024 * 1024);
    expect(cmd.executor_name).toBe("Command Executor (Task: cmd) (Command: sh -c 'sleep 3600')");
  });

  it('checks calls as upstream and answers calls for missing features', async () => {
    expect(await agentCall({}, encoding)).toMatchObject({
      status: 400,
      body: "Failed to validate agent::Call: Expecting 'type' to be present",
    });
    expect(await agentCall({ type: 'READ_FILE' }, encoding)).toMatchObject({
      status: 400,
      body: "Failed to validate agent::Call: Expecting 'read_file' to be present",
    });
    expect((await agentCall({ type: 'LIST_FILES', list_files: { path: '/x' } }, encoding)).status).toBe(404);
    expect((await agentCall({ type: 'GET_OPERATIONS' }, encoding)).status).toBe(501);
    expect((await agentCall({ type: 'GET_HEALTH' }, encoding, '/slave(1)/api/v1')).status).toBe(200);
  });
});

describe('agent legacy endpoints', () => {
  it('/state shows the agent, its frameworks, executors and tasks', async () => {
    for (const path of ['/state', '/slave(1)/state']) {
      const state = await getJson(path);
      expect(state.id).toBe(r.agents[0]!.id);
      expect(state.pid).toBe(r.agents[0]!.pid);
      expect(state.flags.port).toBe(new URL(agentUrl).port);
      expect(state.frameworks).toHaveLength(1);
      const fw = state.frameworks[0];
      expect(fw.id).toBe(frameworkId);
      expect(fw.executors.map((e: Json) => e.id).sort()).toEqual(['cmd', 'exec-1']);
      const exe = fw.executors.find((e: Json) => e.id === 'exec-1');
      expect(exe.tasks.map((t: Json) => [t.id, t.state, t.executor_id])).toEqual([['exe', 'TASK_RUNNING', 'exec-1']]);
      // A command task names no executor, as upstream's agent shows it.
      const cmd = fw.executors.find((e: Json) => e.id === 'cmd');
      expect(cmd.tasks.map((t: Json) => [t.id, t.executor_id])).toEqual([['cmd', '']]);
      expect(cmd.source).toBe('cmd');
      // An executor's resources are its own and its live tasks'.
      expect(cmd.resources.cpus).toBeCloseTo(0.6);
      expect(exe.resources.mem).toBe(48);
      expect(fw.role).toBe('*');
      expect(fw.capabilities).toBeUndefined();
      expect(state.unreserved_resources_allocated.mem).toBe(96 + 48);
      expect(state.resource_providers).toEqual([]);
    }
  });

  it('/flags and /containers', async () => {
    expect((await getJson('/flags')).flags.hostname).toBe('127.0.0.1');
    const containers = (await getJson('/containers')) as unknown as Json[];
    expect(containers.map((c) => c.executor_id).sort()).toEqual(['cmd', 'exec-1']);
    const custom = containers.find((c) => c.executor_id === 'exec-1')!;
    expect(custom.statistics.mem_limit_bytes).toBe(48 * 1024 * 1024);
    expect(custom.statistics.cpus_user_time_secs).toBe(0);
  });
});

describe('an ended task', () => {
  it('moves its command executor to the completed ones, and its container away', async () => {
    expect(
      (await client.call({ type: 'KILL', kill: { task_id: { value: 'cmd' }, agent_id: { value: r.agents[0]!.id } } }))
        .status,
    ).toBe(202);
    for (;;) {
      const { status } = (await client.next((e) => e.type === 'UPDATE' && e.update.status.task_id.value === 'cmd'))
        .update;
      if (status.uuid !== undefined)
        await client.call({
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
        });
      if (status.state === 'TASK_KILLED') break;
    }
    r.advance(1_000);
    const executors = (await agentCall({ type: 'GET_EXECUTORS' }, 'protobuf')).response?.get_executors;
    expect(executors.executors.map((e: Json) => e.executor_info.executor_id.value)).toEqual(['exec-1']);
    expect(executors.completed_executors.map((e: Json) => e.executor_info.executor_id.value)).toEqual(['cmd']);
    const tasks = (await agentCall({ type: 'GET_TASKS' }, 'json')).response?.get_tasks;
    expect(tasks.completed_tasks.map((t: Json) => [t.task_id.value, t.state])).toEqual([['cmd', 'TASK_KILLED']]);
    expect(tasks.launched_tasks.map((t: Json) => t.task_id.value)).toEqual(['exe']);
    const containers = (await getJson('/containers')) as unknown as Json[];
    expect(containers.map((c) => c.executor_id)).toEqual(['exec-1']);
    const fw = (await getJson('/state')).frameworks[0];
    expect(fw.completed_executors.map((e: Json) => [e.id, e.completed_tasks.map((t: Json) => t.state)])).toEqual([
      ['cmd', ['TASK_KILLED']],
    ]);
  });
});

describe('a crashed agent', () => {
  it('answers 503 until it restarts, then serves what its checkpoint and surviving executors hold', async () => {
    const agentId = r.agents[0]!.id;
    r.driver.input((c) => c.crashAgent(agentId));
    for (const encoding of ['json', 'protobuf'] as const) {
      expect(await agentCall({ type: 'GET_TASKS' }, encoding)).toMatchObject({
        status: 503,
        body: 'Agent has not finished recovery',
      });
    }
    expect((await fetch(new URL('/state', agentUrl))).status).toBe(503);
    r.driver.input((c) => c.restartAgent(agentId));
    // The framework checkpoints, so its executors outlived the crash.
    const tasks = (await agentCall({ type: 'GET_TASKS' }, 'json')).response?.get_tasks;
    expect(tasks.launched_tasks.map((t: Json) => t.task_id.value)).toEqual(['exe']);
    expect((await getJson('/state')).frameworks.map((f: Json) => f.id)).toEqual([frameworkId]);
  });
});
