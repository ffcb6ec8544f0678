/**
 * The executor HTTP API over real sockets, with the agents awaiting their
 * custom executors (`--custom-executors await`): the test is the executor.
 * SUBSCRIBE and its stream, UPDATE and ACKNOWLEDGED, MESSAGE both ways, the
 * error table of wire-facts §3, and the rows of the spec's executor state
 * table that need no process of their own (registration timeout, SHUTDOWN
 * and its grace period, a broken stream with and without checkpointing).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutorClient } from '../../../src/client/executor-client.js';
import type { Encoding } from '../../../src/client/scheduler-client.js';
import { newUuid, startHarness, tick, type Harness } from './executor-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each<Encoding>(['json', 'protobuf'])('an executor speaking %s', (encoding) => {
  it('subscribes, gets its task, reports it, sees the acknowledgement, and exchanges messages with its framework', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.launch('t1', 'e1');
    const executor = h.executor('e1', encoding);
    const sub = await executor.subscribe();
    expect(sub.status).toBe(200);
    expect(sub.headers['content-type']).toBe(encoding === 'json' ? 'application/json' : 'application/x-protobuf');
    expect(sub.headers['mesos-stream-id']).toBeUndefined();

    const subscribed = await executor.next();
    expect(subscribed.type).toBe('SUBSCRIBED');
    expect(subscribed.subscribed.executor_info.executor_id.value).toBe('e1');
    expect(subscribed.subscribed.executor_info.framework_id.value).toBe(h.frameworkId);
    expect(subscribed.subscribed.framework_info).toMatchObject({
      id: { value: h.frameworkId },
      name: 'executor-api',
      checkpoint: true,
    });
    expect(subscribed.subscribed.agent_info.id.value).toBe(h.agentId);
    expect(subscribed.subscribed.container_id.value).toMatch(/^[0-9a-f-]{36}$/);
    const launch = await executor.next();
    expect(launch.type).toBe('LAUNCH');
    expect(launch.launch.task.task_id.value).toBe('t1');

    const uuid = newUuid();
    expect((await executor.update({ task_id: { value: 't1' }, state: 'TASK_RUNNING', uuid })).status).toBe(202);
    const running = await h.scheduler.nextUpdate('t1');
    expect(running.update.status).toMatchObject({
      state: 'TASK_RUNNING',
      source: 'SOURCE_EXECUTOR',
      executor_id: { value: 'e1' },
      uuid,
    });
    await h.acknowledge(running);
    const acked = await executor.next('ACKNOWLEDGED');
    expect(acked.acknowledged).toEqual({ task_id: { value: 't1' }, uuid });

    // Bytes that are not text, both ways.
    const toExecutor = Buffer.from([0, 255, 1, 128, 10]).toString('base64');
    const message = { agent_id: { value: h.agentId }, executor_id: { value: 'e1' }, data: toExecutor };
    expect((await h.scheduler.call({ type: 'MESSAGE', message })).status).toBe(202);
    expect((await executor.next('MESSAGE')).message.data).toBe(toExecutor);
    const toFramework = Buffer.from([7, 0, 200]).toString('base64');
    expect((await executor.call({ type: 'MESSAGE', message: { data: toFramework } })).status).toBe(202);
    const received = await h.scheduler.next('MESSAGE');
    expect(received.message).toEqual({
      agent_id: { value: h.agentId },
      executor_id: { value: 'e1' },
      data: toFramework,
    });

    const finished = newUuid();
    expect((await executor.update({ task_id: { value: 't1' }, state: 'TASK_FINISHED', uuid: finished })).status).toBe(
      202,
    );
    expect((await h.scheduler.nextUpdate('t1')).update.status.state).toBe('TASK_FINISHED');
  });
});

describe('the executor endpoint refuses as upstream does', () => {
  it('answers each row of the error table', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.launch('t1', 'e1');
    await h.launch('t2', 'e2');
    const e1 = h.executor('e1');
    const post = (call: Record<string, unknown>, headers: Record<string, string> = {}) => e1.call(call, headers);

    // Before subscribing: only SUBSCRIBE (and HEARTBEAT) is allowed.
    expect(await post({ type: 'MESSAGE', message: { data: '' } })).toMatchObject({
      status: 403,
      body: 'Executor is not subscribed',
    });
    expect((await post({ type: 'HEARTBEAT' })).status).toBe(202);
    expect((await e1.subscribe()).status).toBe(200);

    const other = h.executor('e3');
    expect(await other.call({ type: 'MESSAGE', message: { data: '' } })).toMatchObject({
      status: 400,
      body: 'Executor cannot be found',
    });
    const stranger = new ExecutorClient(h.agentUrl, { frameworkId: 'no-such-framework', executorId: 'e1' });
    expect(await stranger.call({ type: 'MESSAGE', message: { data: '' } })).toMatchObject({
      status: 400,
      body: 'Framework cannot be found',
    });
    stranger.close();

    const update = (status: Record<string, unknown>) =>
      post({ type: 'UPDATE', update: { status: { task_id: { value: 't1' }, ...status } } });
    expect(await update({ state: 'TASK_RUNNING', source: 'SOURCE_EXECUTOR' })).toMatchObject({
      status: 400,
      body: "Failed to validate executor::Call: Expecting 'uuid' to be present",
    });
    expect((await update({ state: 'TASK_STAGING', source: 'SOURCE_EXECUTOR', uuid: newUuid() })).body).toBe(
      `Failed to validate executor::Call: Received TASK_STAGING from executor e1 of framework ${h.frameworkId} which is not allowed`,
    );
    expect((await update({ state: 'TASK_RUNNING', source: 'SOURCE_AGENT', uuid: newUuid() })).body).toBe(
      `Failed to validate executor::Call: Received Call from executor e1 of framework ${h.frameworkId} with invalid source, expecting 'SOURCE_EXECUTOR'`,
    );
    expect(
      (
        await update({
          state: 'TASK_RUNNING',
          source: 'SOURCE_EXECUTOR',
          executor_id: { value: 'e2' },
          uuid: newUuid(),
        })
      ).body,
    ).toBe('Failed to validate executor::Call: ExecutorID in Call: e1 does not match ExecutorID in TaskStatus: e2');
    // The task of another executor cannot be reported through this one.
    expect(
      await post({
        type: 'UPDATE',
        update: {
          status: { task_id: { value: 't2' }, state: 'TASK_RUNNING', source: 'SOURCE_EXECUTOR', uuid: newUuid() },
        },
      }),
    ).toMatchObject({
      status: 400,
      body: "Task 't2' is not a task of executor 'e1'",
    });
    expect((await post({ type: 'UNKNOWN' })).status).toBe(501);
    expect(await e1.call({ type: 'MESSAGE', message: { data: '' } }, { 'content-type': 'text/plain' })).toMatchObject({
      status: 415,
    });

    // The agent process is down: 503 until it is back.
    h.cluster.driver.input((c) => c.crashAgent(h!.agentId));
    expect(await post({ type: 'MESSAGE', message: { data: '' } })).toMatchObject({
      status: 503,
      body: 'Agent has not finished recovery',
    });
  });

  it('answers 406 to a SUBSCRIBE whose Accept it cannot satisfy', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.launch('t1', 'e1');
    const e1 = h.executor('e1');
    const body = e1.encodeCall({ type: 'SUBSCRIBE', subscribe: {} });
    const res = await fetch(new URL('/api/v1/executor', h.agentUrl), {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'text/html' },
    });
    expect(res.status).toBe(406);
  });
});

describe('the executor state table', () => {
  it('destroys an executor that does not subscribe within the registration timeout, failing its task', async () => {
    h = await startHarness({ customExecutors: 'await', executorRegistrationTimeoutSeconds: 30 });
    await h.launch('t1', 'e1');
    h.cluster.advance(29_000);
    await tick();
    expect(h.scheduler.pending.some((e) => e.type === 'UPDATE')).toBe(false);
    h.cluster.advance(1_000);
    const failed = await h.scheduler.nextUpdate('t1');
    expect(failed.update.status).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_REGISTRATION_TIMEOUT',
      message: 'Executor did not register within 30secs',
    });
    expect((await h.scheduler.next('FAILURE')).failure.executor_id.value).toBe('e1');
    // Gone: it can no longer subscribe.
    expect(await h.executor('e1').subscribe()).toMatchObject({ status: 400, body: 'Executor cannot be found' });
  });

  it('SHUTDOWN: an executor that does not exit is destroyed after the grace period, its tasks lost', async () => {
    h = await startHarness({ customExecutors: 'await', executorShutdownGracePeriodSeconds: 3 });
    const executor = await h.runningTask('t1', 'e1');
    const shutdown = { agent_id: { value: h.agentId }, executor_id: { value: 'e1' } };
    expect((await h.scheduler.call({ type: 'SHUTDOWN', shutdown })).status).toBe(202);
    expect((await executor.next('SHUTDOWN')).type).toBe('SHUTDOWN');
    h.cluster.advance(3_000);
    const lost = await h.scheduler.nextUpdate('t1');
    expect(lost.update.status).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
    expect((await h.scheduler.next('FAILURE')).failure).toMatchObject({ executor_id: { value: 'e1' }, status: 9 });
    // Its stream ends with its container.
    await expect(executor.next(() => false, 1_000)).rejects.toThrow(/closed/);
  });

  it('a broken stream with checkpointing: the executor subscribes again with what was not acknowledged', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.launch('t1', 'e1');
    const executor = h.executor('e1');
    await executor.subscribe();
    await executor.next('LAUNCH');
    executor.disconnect();
    await tick(50);
    // Updates are still taken from an executor whose stream broke; this one's acknowledgement cannot reach it.
    const running = newUuid();
    expect((await executor.update({ task_id: { value: 't1' }, state: 'TASK_RUNNING', uuid: running })).status).toBe(
      202,
    );
    await h.acknowledge(await h.scheduler.nextUpdate('t1'));
    const finished = newUuid();
    const finishedStatus = {
      task_id: { value: 't1' },
      state: 'TASK_FINISHED',
      source: 'SOURCE_EXECUTOR',
      uuid: finished,
    };
    const runningStatus = { task_id: { value: 't1' }, state: 'TASK_RUNNING', source: 'SOURCE_EXECUTOR', uuid: running };
    expect(
      (await executor.subscribe({ unacknowledged_updates: [{ status: runningStatus }, { status: finishedStatus }] }))
        .status,
    ).toBe(200);
    expect((await executor.next()).type).toBe('SUBSCRIBED');
    // Acknowledged while it was away: answered at once.
    expect((await executor.next('ACKNOWLEDGED')).acknowledged.uuid).toBe(running);
    const update = await h.scheduler.nextUpdate('t1');
    expect(update.update.status).toMatchObject({ state: 'TASK_FINISHED', uuid: finished });
    await h.acknowledge(update);
    expect((await executor.next('ACKNOWLEDGED')).acknowledged.uuid).toBe(finished);
  });

  it('a broken stream without checkpointing ends an awaited executor: its task fails', async () => {
    h = await startHarness({ customExecutors: 'await' }, { checkpoint: false });
    await h.launch('t1', 'e1');
    const executor = h.executor('e1');
    await executor.subscribe();
    await executor.next('LAUNCH');
    executor.disconnect();
    const failed = await h.scheduler.nextUpdate('t1');
    expect(failed.update.status).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
    expect((await h.scheduler.next('FAILURE')).failure.executor_id.value).toBe('e1');
  });

  it('a task launched while the stream was down, unknown to the executor when it subscribes again, is lost', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const executor = await h.runningTask('t1', 'e1');
    executor.disconnect();
    await tick(50);
    await h.launch('t2', 'e1');
    await tick(50);
    expect((await executor.subscribe({ unacknowledged_tasks: [] })).status).toBe(200);
    const lost = await h.scheduler.nextUpdate('t2');
    expect(lost.update.status).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_AGENT',
      reason: 'REASON_AGENT_RESTARTED',
    });
  });
});

describe('--http-executor-domain-sockets', () => {
  it('serves the executor API on the agent Unix domain socket as on TCP', async () => {
    h = await startHarness({ customExecutors: 'await', httpExecutorDomainSockets: true });
    const socket = h.cluster.agents[0]!.domainSocket!;
    expect(socket).toBe(`${h.cluster.workDir}/agents/${h.agentId}/agent.sock`);
    await h.launch('t1', 'e1');
    const executor = new ExecutorClient(socket, { frameworkId: h.frameworkId, executorId: 'e1' }, 'protobuf');
    try {
      expect((await executor.subscribe()).status).toBe(200);
      expect((await executor.next()).type).toBe('SUBSCRIBED');
      expect((await executor.next()).launch.task.task_id.value).toBe('t1');
      expect((await executor.update({ task_id: { value: 't1' }, state: 'TASK_RUNNING', uuid: newUuid() })).status).toBe(
        202,
      );
      expect((await h.scheduler.nextUpdate('t1')).update.status.state).toBe('TASK_RUNNING');
      // The socket names its agent: a call for an executor of no agent's is refused as on TCP.
      const stranger = new ExecutorClient(socket, { frameworkId: h.frameworkId, executorId: 'nobody' });
      expect(await stranger.call({ type: 'MESSAGE', message: { data: '' } })).toMatchObject({
        status: 400,
        body: 'Executor cannot be found',
      });
      stranger.close();
    } finally {
      executor.close();
    }
  });
});

describe('KILL forwarding to a custom executor', () => {
  it('carries the kill policy: the KILL call grace period, else the task own', async () => {
    h = await startHarness({ customExecutors: 'await' }, { capabilities: [{ type: 'TASK_KILLING_STATE' }] });
    const executor = await h.runningTask('t1', 'e1');
    const kill = {
      task_id: { value: 't1' },
      agent_id: { value: h.agentId },
      kill_policy: { grace_period: { nanoseconds: 7_000_000_000 } },
    };
    expect((await h.scheduler.call({ type: 'KILL', kill })).status).toBe(202);
    const event = await executor.next('KILL');
    expect(event.kill).toEqual({
      task_id: { value: 't1' },
      kill_policy: { grace_period: { nanoseconds: 7_000_000_000 } },
    });
    // The executor decides what a kill is: here TASK_KILLING, then TASK_KILLED.
    await executor.update({ task_id: { value: 't1' }, state: 'TASK_KILLING', uuid: newUuid() });
    await h.acknowledge(await h.scheduler.nextUpdate('t1'));
    await executor.update({ task_id: { value: 't1' }, state: 'TASK_KILLED', uuid: newUuid() });
    expect((await h.scheduler.nextUpdate('t1')).update.status).toMatchObject({
      state: 'TASK_KILLED',
      source: 'SOURCE_EXECUTOR',
    });
  });

  it('a task killed before its executor subscribed never reaches it: the agent reports it killed', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.launch('t1', 'e1');
    expect(
      (await h.scheduler.call({ type: 'KILL', kill: { task_id: { value: 't1' }, agent_id: { value: h.agentId } } }))
        .status,
    ).toBe(202);
    const killed = await h.scheduler.nextUpdate('t1');
    expect(killed.update.status).toMatchObject({
      state: 'TASK_KILLED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_TASK_KILLED_DURING_LAUNCH',
    });
    const executor = h.executor('e1');
    await executor.subscribe();
    expect((await executor.next()).type).toBe('SUBSCRIBED');
    await tick(50);
    expect(executor.pending.some((e) => e.type === 'LAUNCH')).toBe(false);
  });
});
