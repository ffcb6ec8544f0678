/**
 * POST /api/v1, the master operator API, in both encodings: every call the
 * master answers, its errors in upstream's order, and the operator event
 * stream.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { parseResources } from '../../src/core/model/resources.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { MEDIA, operatorCall, OperatorStream, postRaw, waitFor, type Encoding, type Json } from './operator-harness.js';

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 11 });
});
afterEach(async () => {
  await running.close();
});

const FRAMEWORK = { user: 'ops', name: 'operator-test' };

async function scheduler(info: Json = FRAMEWORK): Promise<SchedulerClient> {
  const client = new SchedulerClient(running.masterUrl);
  expect((await client.subscribe(info)).status).toBe(200);
  await client.next('SUBSCRIBED');
  return client;
}

/** Launches `sleep 3600` (or a task with a custom executor) on the first offer; resolves once it runs. */
async function runningTask(client: SchedulerClient, taskId: string, executor?: Json): Promise<string> {
  const offers = await client.next('OFFERS');
  const offer = offers.offers.offers[0];
  const task = {
    name: taskId,
    task_id: { value: taskId },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 64 } },
    ],
    ...(executor === undefined ? { command: { value: 'sleep 3600' } } : { executor }),
  };
  const res = await client.call({
    type: 'ACCEPT',
    accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
  });
  expect(res.status).toBe(202);
  for (;;) {
    const update = await client.nextUpdate(taskId);
    const { status } = update.update;
    if (status.uuid !== undefined) {
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    }
    if (status.state === 'TASK_RUNNING') return offer.agent_id.value as string;
  }
}

async function acknowledgeUntil(client: SchedulerClient, taskId: string, state: string): Promise<Json> {
  for (;;) {
    const { status } = (await client.nextUpdate(taskId)).update;
    if (status.uuid !== undefined) {
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    }
    if (status.state === state) return status;
  }
}

describe.each<Encoding>(['json', 'protobuf'])('POST /api/v1 in %s', (encoding) => {
  const call = (body: Json, path?: string) => operatorCall(running.masterUrl, body, encoding, path);
  const media = MEDIA[encoding];

  it('GET_HEALTH, GET_VERSION, GET_FLAGS, GET_LOGGING_LEVEL, GET_MASTER answer 200 in the encoding asked for', async () => {
    const health = await call({ type: 'GET_HEALTH' });
    expect([health.status, health.headers['content-type']]).toEqual([200, media]);
    expect(health.response).toEqual({ type: 'GET_HEALTH', get_health: { healthy: true } });
    const version = (await call({ type: 'GET_VERSION' })).response!;
    expect(version.get_version.version_info.version).toBe(running.cluster.view.masterInfo.version);
    expect(version.get_version.version_info.build_user).toBe('clustersim');
    const flags = (await call({ type: 'GET_FLAGS' })).response!.get_flags.flags as Json[];
    expect(flags).toContainEqual({ name: 'allocation_interval', value: '1secs' });
    expect((await call({ type: 'GET_LOGGING_LEVEL' })).response).toEqual({
      type: 'GET_LOGGING_LEVEL',
      get_logging_level: { level: 0 },
    });
    const master = (await call({ type: 'GET_MASTER' })).response!.get_master;
    expect(master.master_info.id).toBe(running.cluster.view.masterInfo.id);
    expect(master.elected_time).toBe(master.start_time);
  });

  it('GET_METRICS lists the snapshot as Metric messages, and needs its payload', async () => {
    const metrics = (await call({ type: 'GET_METRICS', get_metrics: {} })).response!.get_metrics.metrics as Json[];
    expect(metrics).toContainEqual({ name: 'master/elected', value: 1 });
    expect(metrics).toContainEqual({ name: 'master/slaves_active', value: 2 });
    const bare = await call({ type: 'GET_METRICS' });
    expect([bare.status, bare.body]).toEqual([
      400,
      "Failed to validate master::Call: Expecting 'get_metrics' to be present",
    ]);
  });

  it('GET_AGENTS, GET_FRAMEWORKS, GET_TASKS, GET_EXECUTORS, GET_ROLES and GET_STATE show a framework and its tasks', async () => {
    const client = await scheduler();
    const agentId = await runningTask(client, 'web-1');
    // What the first ACCEPT left is declined for 5 s.
    running.advance(6_000);
    await runningTask(client, 'custom-1', { executor_id: { value: 'exec-1' }, command: { value: 'run-executor' } });
    const agents = (await call({ type: 'GET_AGENTS' })).response!.get_agents.agents as Json[];
    expect(agents).toHaveLength(2);
    const agent = agents.find((a) => a.agent_info.id.value === agentId)!;
    expect(agent).toMatchObject({
      active: true,
      deactivated: false,
      pid: expect.stringMatching(/^slave\(1\)@127\.0\.0\.1:/),
    });
    expect(agent.capabilities).toContainEqual({ type: 'AGENT_DRAINING' });
    expect(agent.allocated_resources.length).toBeGreaterThan(0);
    const frameworks = (await call({ type: 'GET_FRAMEWORKS' })).response!.get_frameworks;
    expect(frameworks.frameworks).toHaveLength(1);
    expect(frameworks.frameworks[0]).toMatchObject({
      active: true,
      connected: true,
      recovered: false,
      framework_info: { name: 'operator-test', id: { value: client.frameworkId } },
    });
    const tasks = (await call({ type: 'GET_TASKS' })).response!.get_tasks.tasks as Json[];
    expect(tasks.map((t) => [t.task_id.value, t.state, t.user]).sort()).toEqual([
      ['custom-1', 'TASK_RUNNING', 'ops'],
      ['web-1', 'TASK_RUNNING', 'ops'],
    ]);
    const executors = (await call({ type: 'GET_EXECUTORS' })).response!.get_executors.executors as Json[];
    expect(executors.map((e) => [e.executor_info.executor_id.value, e.executor_info.framework_id.value])).toEqual([
      ['exec-1', client.frameworkId],
    ]);
    const roles = (await call({ type: 'GET_ROLES' })).response!.get_roles.roles as Json[];
    expect(roles.find((r) => r.name === '*')).toMatchObject({ weight: 1, frameworks: [{ value: client.frameworkId }] });
    const state = (await call({ type: 'GET_STATE' })).response!.get_state;
    expect(state.get_tasks.tasks).toHaveLength(2);
    expect(state.get_frameworks.frameworks).toHaveLength(1);
    expect(state.get_agents.agents).toHaveLength(2);
    expect(state.get_executors.executors).toHaveLength(1);
    client.disconnect();
  });

  it('TEARDOWN removes a framework (200, empty), and answers 400 for one it does not know', async () => {
    const client = await scheduler();
    const res = await call({ type: 'TEARDOWN', teardown: { framework_id: { value: client.frameworkId } } });
    expect([res.status, res.body, res.headers['content-type']]).toEqual([200, '', undefined]);
    await waitFor(() => client.closed);
    const frameworks = (await call({ type: 'GET_FRAMEWORKS' })).response!.get_frameworks;
    expect(frameworks.frameworks ?? []).toEqual([]);
    expect(frameworks.completed_frameworks[0].framework_info.id.value).toBe(client.frameworkId);
    const again = await call({ type: 'TEARDOWN', teardown: { framework_id: { value: client.frameworkId } } });
    expect([again.status, again.body]).toEqual([400, 'No framework found with specified ID']);
    const bare = await call({ type: 'TEARDOWN' });
    expect([bare.status, bare.body]).toEqual([
      400,
      "Failed to validate master::Call: Expecting 'teardown' to be present",
    ]);
  });

  it('MARK_AGENT_GONE ends its tasks, removes it from the lists, and answers 200 again; an unknown agent is 404', async () => {
    const client = await scheduler();
    const agentId = await runningTask(client, 'doomed');
    const res = await call({ type: 'MARK_AGENT_GONE', mark_agent_gone: { agent_id: { value: agentId } } });
    expect([res.status, res.body]).toEqual([200, '']);
    const update = (await client.nextUpdate('doomed')).update.status;
    expect([update.state, update.reason, update.source]).toEqual([
      'TASK_LOST',
      'REASON_AGENT_REMOVED_BY_OPERATOR',
      'SOURCE_MASTER',
    ]);
    await client.next((e) => e.type === 'FAILURE' && e.failure.agent_id.value === agentId);
    const agents = (await call({ type: 'GET_AGENTS' })).response!.get_agents.agents as Json[];
    expect(agents.map((a) => a.agent_info.id.value)).not.toContain(agentId);
    expect((await call({ type: 'MARK_AGENT_GONE', mark_agent_gone: { agent_id: { value: agentId } } })).status).toBe(
      200,
    );
    const unknown = await call({ type: 'MARK_AGENT_GONE', mark_agent_gone: { agent_id: { value: 'nope' } } });
    expect([unknown.status, unknown.body]).toEqual([404, "Agent 'nope' not found"]);
    client.disconnect();
  });

  it('DEACTIVATE_AGENT rescinds its offers and stops them; REACTIVATE_AGENT brings them back', async () => {
    const client = await scheduler();
    const [offer] = (await client.next('OFFERS')).offers.offers as Json[];
    const agentId = offer!.agent_id.value as string;
    expect((await call({ type: 'DEACTIVATE_AGENT', deactivate_agent: { agent_id: { value: agentId } } })).status).toBe(
      200,
    );
    await client.next((e) => e.type === 'RESCIND' && e.rescind.offer_id.value === offer!.id.value);
    const agent = ((await call({ type: 'GET_AGENTS' })).response!.get_agents.agents as Json[]).find(
      (a) => a.agent_info.id.value === agentId,
    )!;
    expect([agent.active, agent.deactivated]).toEqual([false, true]);
    running.advance(5_000);
    await client.call({ type: 'REVIVE' });
    expect(
      client.pending.filter(
        (e) => e.type === 'OFFERS' && e.offers.offers.some((o: Json) => o.agent_id.value === agentId),
      ),
    ).toEqual([]);
    expect((await call({ type: 'REACTIVATE_AGENT', reactivate_agent: { agent_id: { value: agentId } } })).status).toBe(
      200,
    );
    await client.next((e) => e.type === 'OFFERS' && e.offers.offers.some((o: Json) => o.agent_id.value === agentId));
    const again = await call({ type: 'REACTIVATE_AGENT', reactivate_agent: { agent_id: { value: agentId } } });
    expect([again.status, again.body]).toEqual([400, 'Agent is not deactivated']);
    const unknown = await call({ type: 'DEACTIVATE_AGENT', deactivate_agent: { agent_id: { value: 'nope' } } });
    expect([unknown.status, unknown.body]).toEqual([400, 'Unknown agent']);
    client.disconnect();
  });

  it('DRAIN_AGENT kills the tasks, is DRAINING until they are acknowledged, then DRAINED, and gone with mark_gone', async () => {
    const client = await scheduler({ ...FRAMEWORK, capabilities: [{ type: 'PARTITION_AWARE' }] });
    const agentId = await runningTask(client, 'drained');
    const res = await call({
      type: 'DRAIN_AGENT',
      drain_agent: { agent_id: { value: agentId }, max_grace_period: { seconds: 10 }, mark_gone: true },
    });
    expect([res.status, res.body]).toEqual([200, '']);
    const drainOf = async () =>
      ((await call({ type: 'GET_AGENTS' })).response!.get_agents.agents as Json[]).find(
        (a) => a.agent_info.id.value === agentId,
      )?.drain_info;
    expect(await drainOf()).toEqual({
      state: 'DRAINING',
      config: { max_grace_period: { nanoseconds: 10_000_000_000 }, mark_gone: true },
    });
    const reactivate = await call({ type: 'REACTIVATE_AGENT', reactivate_agent: { agent_id: { value: agentId } } });
    expect([reactivate.status, reactivate.body]).toEqual([400, 'Agent is still in the DRAINING state']);
    // A drain that marks the agent gone ends each task as TASK_GONE_BY_OPERATOR.
    const status = await acknowledgeUntil(client, 'drained', 'TASK_GONE_BY_OPERATOR');
    expect(status.source).toBe('SOURCE_EXECUTOR');
    await waitFor(() => running.cluster.view.agentSnapshot(agentId)?.drain?.state === 'DRAINED');
    expect(await drainOf()).toBeUndefined();
    const unknown = await call({ type: 'DRAIN_AGENT', drain_agent: { agent_id: { value: 'nope' } } });
    expect([unknown.status, unknown.body]).toEqual([400, 'Unknown agent']);
    client.disconnect();
  });

  it('a call without its payload is invalid', async () => {
    const bare = await call({ type: 'UPDATE_QUOTA' });
    expect([bare.status, bare.body]).toEqual([
      400,
      "Failed to validate master::Call: Expecting 'update_quota' to be present",
    ]);
  });

  it('GET_MAINTENANCE_STATUS and GET_MAINTENANCE_SCHEDULE answer an empty status and schedule', async () => {
    expect((await call({ type: 'GET_MAINTENANCE_STATUS' })).response).toEqual({
      type: 'GET_MAINTENANCE_STATUS',
      get_maintenance_status: { status: {} },
    });
    expect((await call({ type: 'GET_MAINTENANCE_SCHEDULE' })).response).toEqual({
      type: 'GET_MAINTENANCE_SCHEDULE',
      get_maintenance_schedule: { schedule: {} },
    });
  });

  it('features this master lacks get upstream answers: files it has not attached are not found, the rest is not implemented', async () => {
    // No log directory is attached: LIST_FILES and READ_FILE find nothing there, 404.
    for (const body of [
      { type: 'LIST_FILES', list_files: { path: '/master/log' } },
      { type: 'READ_FILE', read_file: { path: '/master/log', offset: 0 } },
    ]) {
      const res = await call(body);
      expect([body.type, res.status, res.body]).toEqual([body.type, 404, '404 Not Found.']);
    }
    for (const body of [
      { type: 'UNKNOWN' },
      { type: 'SET_LOGGING_LEVEL', set_logging_level: { level: 1, duration: { nanoseconds: 1_000_000_000 } } },
      { type: 'GROW_VOLUME', grow_volume: {} },
      { type: 'SHRINK_VOLUME', shrink_volume: {} },
      { type: 'SET_QUOTA', set_quota: { quota_request: { role: 'a' } } },
      { type: 'REMOVE_QUOTA', remove_quota: { role: 'a' } },
    ]) {
      const res = await call(body);
      expect([body.type, res.status, res.body]).toEqual([body.type, 501, '501 Not Implemented.']);
    }
  });

  it('checks the request in upstream order: method, Content-Type, body, validation, then Accept on every call', async () => {
    const url = new URL('/api/v1', running.masterUrl);
    const get = await fetch(url);
    expect([get.status, await get.text()]).toEqual([
      405,
      "405 Method Not Allowed. Expecting one of { 'POST' }, but received 'GET'.",
    ]);
    expect((await postRaw(url, '{}', {})).status).toBe(400);
    expect((await postRaw(url, '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    const garbage = await postRaw(url, encoding === 'json' ? '{' : '\u00ff\u00ff', { 'content-type': media });
    expect(garbage.status).toBe(400);
    expect(garbage.body).toMatch(
      encoding === 'json' ? /^Failed to parse body into JSON/ : /^Failed to parse body into Call protobuf/,
    );
    const untyped = await call({});
    expect([untyped.status, untyped.body]).toEqual([
      400,
      "Failed to validate master::Call: Expecting 'type' to be present",
    ]);
    const body = encoding === 'json' ? JSON.stringify({ type: 'GET_HEALTH' }) : Buffer.from([0x08, 0x01]);
    const refused = await postRaw(url, body, { 'content-type': media, accept: 'text/html' });
    expect([refused.status, refused.body]).toEqual([
      406,
      "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'",
    ]);
    // JSON wins whenever the client accepts it; no Accept is JSON.
    const either = await postRaw(url, body, { 'content-type': media });
    expect([either.status, either.headers['content-type']]).toEqual([200, 'application/json']);
  });

  it('SUBSCRIBE streams SUBSCRIBED with the whole state, then the changes, and HEARTBEAT 15 s after subscribing', async () => {
    const stream = new OperatorStream(running.masterUrl, encoding);
    await stream.open();
    expect([stream.status, stream.headers['content-type'], stream.headers['transfer-encoding']]).toEqual([
      200,
      media,
      'chunked',
    ]);
    expect(stream.headers['mesos-stream-id']).toBeUndefined();
    const subscribed = await stream.next('SUBSCRIBED');
    expect(subscribed.subscribed.heartbeat_interval_seconds).toBe(15);
    expect(subscribed.subscribed.get_state.get_agents.agents).toHaveLength(2);
    expect(stream.events).toEqual([]);

    const client = await scheduler();
    expect((await stream.next('FRAMEWORK_ADDED')).framework_added.framework.framework_info.id.value).toBe(
      client.frameworkId,
    );
    const agentId = await runningTask(client, 't-1');
    const added = (await stream.next('TASK_ADDED')).task_added.task;
    expect([added.task_id.value, added.state, added.agent_id.value]).toEqual(['t-1', 'TASK_STAGING', agentId]);
    const updated = await stream.next((e) => e.type === 'TASK_UPDATED' && e.task_updated.state === 'TASK_RUNNING');
    expect(updated.task_updated.framework_id.value).toBe(client.frameworkId);

    running.driver.input((c) =>
      c.addAgent({
        hostname: 'late',
        ip: '127.0.0.1',
        port: 1,
        resources: parseResources('cpus:1;mem:128') as never,
        attributes: [],
      }),
    );
    expect((await stream.next('AGENT_ADDED')).agent_added.agent.agent_info.hostname).toBe('late');
    await operatorCall(
      running.masterUrl,
      { type: 'MARK_AGENT_GONE', mark_agent_gone: { agent_id: { value: agentId } } },
      encoding,
    );
    expect((await stream.next('AGENT_REMOVED')).agent_removed.agent_id.value).toBe(agentId);

    await operatorCall(
      running.masterUrl,
      { type: 'TEARDOWN', teardown: { framework_id: { value: client.frameworkId } } },
      encoding,
    );
    expect((await stream.next('FRAMEWORK_REMOVED')).framework_removed.framework_info.id.value).toBe(client.frameworkId);

    expect(stream.events.filter((e) => e.type === 'HEARTBEAT')).toEqual([]);
    running.advance(15_000);
    await stream.next('HEARTBEAT');
    stream.close();
    await waitFor(() => running.cluster.view.operatorSubscribers() === 0);
  });
});
