/**
 * An agent's metrics and monitor over real sockets, in virtual time:
 * `/metrics/snapshot` and GET_METRICS in both encodings, the executors'
 * statistics at `/monitor/statistics` and `/slave(1)/monitor/statistics`,
 * every task's status history in `/state`, and a framework whose last
 * executor ended listed under `completed_frameworks`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { agentOperatorCall, type Json } from '../operator-harness.js';
import { startWithOneTask, updatesUntil } from './one-task.js';

let r: RunningCluster;
let client: SchedulerClient;
let frameworkId: string;
let agentUrl: string;
/** Cluster time, in ms since the epoch, when the task's TASK_RUNNING came. */
let runningAtMs: number;

async function get(path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(new URL(path, agentUrl));
  return { status: res.status, text: await res.text() };
}

async function getJson(path: string): Promise<Json> {
  const { status, text } = await get(path);
  expect(status).toBe(200);
  return JSON.parse(text) as Json;
}

beforeAll(async () => {
  ({ cluster: r, client, frameworkId, runningAtMs } = await startWithOneTask(5));
  agentUrl = r.agents[0]!.url;
});

afterAll(async () => {
  await r?.close();
});

describe('an agent running one task', () => {
  it('/metrics/snapshot has its slave/* figures', async () => {
    const metrics = await getJson('/metrics/snapshot');
    expect(metrics).toMatchObject({
      'slave/registered': 1,
      'slave/frameworks_active': 1,
      'slave/tasks_running': 1,
      'slave/tasks_staging': 0,
      'slave/tasks_finished': 0,
      'slave/executors_running': 1,
      'slave/executors_terminated': 0,
      'slave/cpus_revocable_total': 0,
      'slave/container_launch_errors': 0,
      'slave/invalid_status_updates': 0,
    });
    const cpusTotal = metrics['slave/cpus_total'] as number;
    expect(cpusTotal).toBeGreaterThan(0);
    // The task's 0.5 cpus and 64 MB, and its command executor's allowance (0.1 cpus, 32 MB).
    expect(metrics['slave/cpus_used']).toBeCloseTo(0.6);
    expect(metrics['slave/mem_used']).toBe(96);
    expect(metrics['slave/cpus_percent']).toBeCloseTo(0.6 / cpusTotal);
    expect(metrics['slave/valid_status_updates']).toBeGreaterThanOrEqual(2);
    expect(Object.keys(metrics)).toEqual(Object.keys(metrics).sort());
    // Doubles are written as doubles, as upstream's are.
    expect((await get('/metrics/snapshot')).text).toContain('"slave/registered":1.0');
  });

  it('counts the framework messages it hands to an executor', async () => {
    const message = { agent_id: { value: r.agents[0]!.id }, executor_id: { value: 'sleeper' }, data: 'aGk=' };
    expect((await client.call({ type: 'MESSAGE', message })).status).toBe(202);
    r.advance(1_000);
    expect(await getJson('/metrics/snapshot')).toMatchObject({
      'slave/valid_framework_messages': 1,
      'slave/invalid_framework_messages': 0,
    });
  });

  it('counts its uptime in cluster time', async () => {
    const before = (await getJson('/metrics/snapshot'))['slave/uptime_secs'] as number;
    r.advance(7_000);
    expect((await getJson('/metrics/snapshot'))['slave/uptime_secs']).toBeCloseTo(before + 7);
  });

  it('honours jsonp and checks timeout as upstream', async () => {
    const wrapped = await get('/metrics/snapshot?jsonp=show&timeout=5secs');
    expect(wrapped.status).toBe(200);
    expect(wrapped.text.startsWith('show({')).toBe(true);
    const bad = await get('/metrics/snapshot?timeout=5parsecs');
    expect(bad.status).toBe(400);
    expect(bad.text).toBe(
      "Invalid timeout '5parsecs': Unknown duration unit 'parsecs'; supported units are 'ns', 'us', 'ms', 'secs', 'mins', 'hrs', 'days', and 'weeks'.",
    );
    expect((await get('/metrics/snapshot?timeout=abc')).text).toBe(
      "Invalid timeout 'abc': Failed to convert '' to number.",
    );
  });

  it.each(['json', 'protobuf'] as const)('GET_METRICS (%s) answers the snapshot', async (encoding) => {
    const answer = await agentOperatorCall(agentUrl, { type: 'GET_METRICS', get_metrics: {} }, encoding);
    expect(answer.status).toBe(200);
    const metrics = answer.response?.get_metrics.metrics as { name: string; value?: number }[];
    const byName = new Map(metrics.map((m) => [m.name, m.value ?? 0]));
    const snapshot = await getJson('/metrics/snapshot');
    expect([...byName.keys()]).toEqual(Object.keys(snapshot));
    expect(byName.get('slave/tasks_running')).toBe(1);
    expect(byName.get('slave/cpus_used')).toBeCloseTo(0.6);
  });

  it.each([
    '/monitor/statistics',
    '/slave(1)/monitor/statistics',
  ])('%s gives each executor its statistics', async (path) => {
    const first = (await getJson(path)) as unknown as Json[];
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      executor_id: 'sleeper',
      framework_id: frameworkId,
      source: 'sleeper',
      executor_name: "Command Executor (Task: sleeper) (Command: sh -c 'sleep 3600')",
    });
    const stats = first[0]!.statistics as Json;
    expect(stats.cpus_limit).toBeCloseTo(0.6);
    expect(stats.mem_limit_bytes).toBe(96 * 1024 * 1024);
    expect(stats.cpus_system_time_secs).toBe(0);
    const nowMs = Math.round(stats.timestamp * 1000);
    // The task's 0.5 cpus, used while it runs.
    expect(stats.cpus_user_time_secs).toBeCloseTo((0.5 * (nowMs - runningAtMs)) / 1000);
    r.advance(4_000);
    const after = ((await getJson(path)) as unknown as Json[])[0]!.statistics as Json;
    expect(after.timestamp).toBeCloseTo(stats.timestamp + 4);
    expect(after.cpus_user_time_secs).toBeCloseTo(stats.cpus_user_time_secs + 2);
  });

  it('/monitor/statistics honours jsonp', async () => {
    const { text } = await get('/slave(1)/monitor/statistics?jsonp=cb');
    expect(text.startsWith('cb([{')).toBe(true);
  });

  it('/state gives every task its status history', async () => {
    const state = await getJson('/state');
    const executor = state.frameworks[0].executors[0];
    const task = executor.tasks[0];
    expect(task.statuses.at(-1)).toEqual({
      state: 'TASK_RUNNING',
      timestamp: runningAtMs / 1000,
      container_status: { container_id: { value: executor.container } },
    });
    const v1 = await agentOperatorCall(agentUrl, { type: 'GET_TASKS' }, 'protobuf');
    const launched = v1.response?.get_tasks.launched_tasks[0];
    expect(launched.statuses.at(-1)).toMatchObject({ state: 'TASK_RUNNING', task_id: { value: 'sleeper' } });
    expect(state.completed_frameworks).toEqual([]);
  });
});

describe('after its last executor ended', () => {
  it('lists the framework as completed, counts the end, and monitors nothing', async () => {
    const agentId = r.agents[0]!.id;
    const kill = { task_id: { value: 'sleeper' }, agent_id: { value: agentId } };
    expect((await client.call({ type: 'KILL', kill })).status).toBe(202);
    await updatesUntil(client, 'sleeper', 'TASK_KILLED');
    r.advance(5_000);
    const state = await getJson('/state');
    expect(state.frameworks).toEqual([]);
    const completed = state.completed_frameworks as Json[];
    expect(completed.map((f) => f.id)).toEqual([frameworkId]);
    expect(completed[0]!.executors).toEqual([]);
    const task = completed[0]!.completed_executors[0].completed_tasks[0];
    expect(task.statuses.map((s: Json) => s.state).slice(-2)).toEqual(['TASK_RUNNING', 'TASK_KILLED']);
    const frameworks = (await agentOperatorCall(agentUrl, { type: 'GET_FRAMEWORKS' }, 'json')).response;
    expect(frameworks?.get_frameworks.frameworks ?? []).toEqual([]);
    expect(frameworks?.get_frameworks.completed_frameworks.map((f: Json) => f.framework_info.id.value)).toEqual([
      frameworkId,
    ]);
    const metrics = await getJson('/metrics/snapshot');
    expect(metrics).toMatchObject({
      'slave/frameworks_active': 0,
      'slave/tasks_running': 0,
      'slave/tasks_killed': 1,
      'slave/executors_running': 0,
      'slave/executors_terminated': 1,
      'slave/cpus_used': 0,
    });
    expect(await getJson('/monitor/statistics')).toEqual([]);
  });
});

describe('after its framework was torn down', () => {
  it('keeps listing it as completed, with its executors', async () => {
    expect((await client.call({ type: 'TEARDOWN' })).status).toBe(202);
    r.advance(5_000);
    const state = await getJson('/state');
    expect(state.frameworks).toEqual([]);
    const completed = state.completed_frameworks as Json[];
    expect(completed.map((f) => [f.id, f.completed_executors.map((e: Json) => e.id)])).toEqual([
      [frameworkId, ['sleeper']],
    ]);
    const executors = (await agentOperatorCall(agentUrl, { type: 'GET_EXECUTORS' }, 'protobuf')).response;
    expect(executors?.get_executors.completed_executors.map((e: Json) => e.executor_info.executor_id.value)).toEqual([
      'sleeper',
    ]);
  });
});

describe('an agent under ACLs that refuse every endpoint', () => {
  it('answers its metrics and statistics 403, and statistics to GET only', async () => {
    const acls = { permissive: true, get_endpoints: [{ principals: { type: 'ANY' }, paths: { type: 'NONE' } }] };
    const guarded = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, acls });
    try {
      const url = guarded.agents[0]!.url;
      for (const path of ['/metrics/snapshot', '/monitor/statistics', '/slave(1)/monitor/statistics'])
        expect([path, (await fetch(new URL(path, url))).status]).toEqual([path, 403]);
      const posted = await fetch(new URL('/monitor/statistics', url), { method: 'POST' });
      expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET']);
    } finally {
      await guarded.close();
    }
  });
});
