/**
 * The faults of frameworks' streams, executors, tasks and the wall clock
 * through `POST /sim/v1/faults`, over real sockets, with a scheduler that
 * speaks the upstream JSON API: what the framework sees, and the 400, 404
 * and 409 answers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient, type JsonEvent } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let r: RunningCluster | undefined;
const clients: SchedulerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await r?.close();
  r = undefined;
});

const post = (path: string, body: unknown) =>
  postRaw(new URL(path, r!.masterUrl), JSON.stringify(body), { 'content-type': 'application/json' });
const fault = async (body: Record<string, unknown>) => {
  const answer = await post('/sim/v1/faults', body);
  return {
    status: answer.status,
    body: answer.status === 200 ? (JSON.parse(answer.body) as Record<string, unknown>) : answer.body,
  };
};
const advance = (ms: number) => post('/sim/v1/advance', { ms });

async function subscribed(info: Record<string, unknown> = {}): Promise<SchedulerClient> {
  const client = new SchedulerClient(r!.masterUrl);
  clients.push(client);
  await client.subscribe({ user: 'u', name: 'faulted', failover_timeout: 600, ...info });
  await client.next('SUBSCRIBED');
  await client.next('HEARTBEAT');
  return client;
}

/** Launches a task on the first offer and acknowledges its updates up to TASK_RUNNING. */
async function launch(client: SchedulerClient, taskId: string, command: string, memoryLabel?: string): Promise<string> {
  const offer = ((await client.next('OFFERS')) as JsonEvent).offers.offers[0];
  const agentId = offer.agent_id.value as string;
  const scalar = (name: string, value: number) => ({ name, type: 'SCALAR', scalar: { value } });
  const task = {
    name: taskId,
    task_id: { value: taskId },
    agent_id: { value: agentId },
    resources: [scalar('cpus', 0.5), scalar('mem', 128)],
    command: { value: command },
    ...(memoryLabel === undefined ? {} : { labels: { labels: [{ key: 'memory', value: memoryLabel }] } }),
  };
  const accepted = await client.call({
    type: 'ACCEPT',
    accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
  });
  expect(accepted.status).toBe(202);
  expect(await acknowledged(client, taskId)).toBe('TASK_STARTING');
  expect(await acknowledged(client, taskId)).toBe('TASK_RUNNING');
  return agentId;
}

/** The task's next update, acknowledged; its state. */
async function acknowledged(client: SchedulerClient, taskId: string): Promise<string> {
  const { status } = (await client.nextUpdate(taskId)).update;
  await client.call({
    type: 'ACKNOWLEDGE',
    acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
  });
  return status.state as string;
}

async function nextStatus(client: SchedulerClient, taskId: string) {
  return (await client.nextUpdate(taskId)).update.status as Record<string, unknown>;
}

describe('faults of a framework stream', () => {
  it('drop_framework_connection closes the stream; the master keeps the framework until it subscribes again', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = await subscribed();
    const frameworkId = client.frameworkId!;
    expect(await fault({ type: 'drop_framework_connection', framework_id: frameworkId })).toEqual({
      status: 200,
      body: { type: 'drop_framework_connection', framework_id: frameworkId },
    });
    await expect(client.next('NEVER', 2_000)).rejects.toThrow(/closed/);
    const state = (await (await fetch(new URL('/master/frameworks', r.masterUrl))).json()) as {
      frameworks: { id: string; active: boolean }[];
    };
    expect(state.frameworks.find((f) => f.id === frameworkId)?.active).toBe(false);
    const again = await subscribed({ id: { value: frameworkId } });
    expect(again.frameworkId).toBe(frameworkId);
    expect(await fault({ type: 'drop_framework_connection', framework_id: 'nobody' })).toEqual({
      status: 404,
      body: "Framework 'nobody' not found",
    });
  });

  it('stall_heartbeats: nothing arrives for the duration, then what the master sent arrives in order', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = await subscribed();
    expect(
      (await fault({ type: 'stall_heartbeats', framework_id: client.frameworkId, duration_ms: 30_000 })).status,
    ).toBe(200);
    await advance(29_000);
    await expect(client.next('HEARTBEAT', 300)).rejects.toThrow();
    await advance(1_000);
    await client.next('HEARTBEAT');
    await client.next('HEARTBEAT');
    expect(client.closed).toBe(false);
  });

  it('resume_heartbeats ends a stall without a duration; meanwhile the stream writes no keepalive of its own', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual', streamKeepaliveMs: 50 });
    const client = await subscribed();
    await fault({ type: 'stall_heartbeats', framework_id: client.frameworkId });
    // Let a keepalive that was under way land before the stall is watched.
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.pending.splice(0);
    await advance(15_000);
    await expect(client.next('HEARTBEAT', 500)).rejects.toThrow();
    expect(await fault({ type: 'resume_heartbeats', framework_id: client.frameworkId })).toEqual({
      status: 200,
      body: { type: 'resume_heartbeats', framework_id: client.frameworkId },
    });
    await client.next('HEARTBEAT');
  });

  it('refuses what it cannot read (400), an unknown framework (404) and one with no stream (409)', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await fault({ type: 'stall_heartbeats' })).toEqual({
      status: 400,
      body: "Expecting 'framework_id' to be present",
    });
    expect(await fault({ type: 'stall_heartbeats', framework_id: 'f', duration_ms: 0 })).toMatchObject({ status: 400 });
    expect(await fault({ type: 'resume_heartbeats', framework_id: 7 })).toMatchObject({ status: 400 });
    expect(await fault({ type: 'stall_heartbeats', framework_id: 'nobody' })).toMatchObject({ status: 404 });
    const client = await subscribed();
    const frameworkId = client.frameworkId!;
    client.disconnect();
    await expect(client.next('NEVER', 2_000)).rejects.toThrow(/closed/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await fault({ type: 'drop_framework_connection', framework_id: frameworkId })).toEqual({
      status: 409,
      body: `Framework '${frameworkId}' has no subscription stream open`,
    });
  });
});

describe('faults of executors and tasks', () => {
  it('crash_executor by task: TASK_FAILED from the agent, as an executor termination', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = await subscribed();
    await launch(client, 't1', 'sleep 3600');
    expect(await fault({ type: 'crash_executor', task_id: 't9' })).toEqual({
      status: 404,
      body: "Task 't9' not found; the live tasks: t1",
    });
    expect(await fault({ type: 'crash_executor', task_id: 't1' })).toEqual({
      status: 200,
      body: { type: 'crash_executor' },
    });
    expect(await nextStatus(client, 't1')).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
      message: 'Executor terminated',
    });
    expect(await fault({ type: 'crash_executor', executor_id: 'ghost' })).toEqual({
      status: 404,
      body: "Executor 'ghost' not found",
    });
    // A wrong task id: the refusal lists the ids that a fault could name now (t1 has ended).
    expect(await fault({ type: 'crash_executor', task_id: 'ghost' })).toEqual({
      status: 404,
      body: "Task 'ghost' not found; no task is live now",
    });

    expect(await fault({ type: 'crash_executor' })).toEqual({
      status: 400,
      body: "Expecting 'executor_id' or 'task_id' to be present",
    });
    expect(await fault({ type: 'crash_executor', executor_id: 'e', task_id: 't' })).toMatchObject({ status: 400 });
  });

  it('fail_task and hang_task', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = await subscribed();
    await launch(client, 'failing', 'sleep 3600');
    expect((await fault({ type: 'fail_task', task_id: 'failing', exit_code: 42 })).status).toBe(200);
    expect(await nextStatus(client, 'failing')).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_EXECUTOR',
      message: 'Command exited with status 42',
    });
    await advance(1_000);
    await launch(client, 'hung', 'sleep 5');
    expect((await fault({ type: 'hang_task', task_id: 'hung' })).status).toBe(200);
    await advance(10_000);
    await expect(client.nextUpdate('hung', 300)).rejects.toThrow();
    expect(await fault({ type: 'fail_task', task_id: 'ghost' })).toMatchObject({ status: 404 });
    expect(await fault({ type: 'fail_task', task_id: 'hung', exit_code: 0 })).toEqual({
      status: 400,
      body: "Expecting 'exit_code' to be a whole number from 1 to 255",
    });
    expect(await fault({ type: 'hang_task' })).toEqual({ status: 400, body: "Expecting 'task_id' to be present" });
  });

  it('memory_spike past the limit and set_memory_limit below use end in an OOM kill', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = await subscribed();
    const agentId = await launch(client, 'spiked', 'sleep 3600', 'constant:64');
    expect((await fault({ type: 'memory_spike', task_id: 'spiked', mib: 200, duration_ms: 1_000 })).status).toBe(200);
    expect(await nextStatus(client, 'spiked')).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_CONTAINER_LIMITATION_MEMORY',
    });
    await advance(1_000);
    await launch(client, 'limited', 'sleep 3600', 'constant:64');
    expect(await fault({ type: 'set_memory_limit', agent_id: agentId, container_id: 'nothing', mib: 32 })).toEqual({
      status: 404,
      body: 'Container nothing cannot be found',
    });
    expect(
      await fault({ type: 'set_memory_limit', agent_id: agentId, container_id: 'limited', mib: 32 }),
    ).toMatchObject({ status: 400 });
    expect((await fault({ type: 'set_memory_limit', agent_id: agentId, task_id: 'limited', mib: 48 })).status).toBe(
      200,
    );
    expect(await nextStatus(client, 'limited')).toMatchObject({
      state: 'TASK_FAILED',
      reason: 'REASON_CONTAINER_LIMITATION_MEMORY',
    });
    expect(await fault({ type: 'memory_spike', task_id: 'limited', mib: 10 })).toMatchObject({ status: 404 });
    expect(await fault({ type: 'memory_spike', task_id: 'x', mib: -1 })).toEqual({
      status: 400,
      body: "Expecting 'mib' to be a positive number of MiB",
    });
    expect(await fault({ type: 'set_memory_limit', agent_id: agentId, mib: 32 })).toEqual({
      status: 400,
      body: "Expecting one of 'container_id' and 'task_id'",
    });
    expect(await fault({ type: 'set_memory_limit', agent_id: 'nowhere', task_id: 'x', mib: 32 })).toMatchObject({
      status: 404,
    });
  });
});

describe('clock_jump', () => {
  it('steps the wall clock the cluster reports, not its virtual time', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual', epochMs: 1_800_000_000_000 });
    expect(await fault({ type: 'clock_jump', ms: 7_200_000 })).toEqual({
      status: 200,
      body: { type: 'clock_jump', wall_time_ms: 1_800_007_200_000 },
    });
    const clock = (await (await fetch(new URL('/sim/v1/clock', r.masterUrl))).json()) as { time_ms: number };
    expect(clock.time_ms).toBe(0);
    const client = await subscribed();
    await launch(client, 'stamped', 'sleep 3600');
    const stamp = (await (await fetch(new URL('/master/tasks', r.masterUrl))).json()) as {
      tasks: { statuses: { timestamp: number }[] }[];
    };
    expect(stamp.tasks[0]!.statuses[0]!.timestamp).toBe(1_800_007_200);
    expect(await fault({ type: 'clock_jump', ms: 0 })).toMatchObject({ status: 400 });
    expect(await fault({ type: 'clock_jump', ms: -5 })).toMatchObject({ status: 400 });
    expect(await fault({ type: 'clock_jump' })).toEqual({
      status: 400,
      body: "Expecting 'ms' to be a whole number of milliseconds from 1 to 86400000",
    });
  });
});
