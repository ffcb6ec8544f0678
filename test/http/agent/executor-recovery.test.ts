/**
 * An agent restart with executors that outlive it (a checkpointing
 * framework's), in both recover modes, over real sockets: `reconnect`
 * takes back the executors that subscribe again within
 * `--executor_reregistration_timeout` and destroys the others; `cleanup`
 * shuts every executor down (one that subscribes again gets SHUTDOWN at
 * once), destroys those still there after the grace period, and exits
 * without registering; its updates reach the framework when the agent
 * next starts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newUuid, startHarness, tick, type Harness } from './executor-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const crash = (h: Harness) => h.cluster.driver.input((c) => c.crashAgent(h.agentId));
const restart = (h: Harness, recover: 'reconnect' | 'cleanup') =>
  h.cluster.driver.input((c) => c.restartAgent(h.agentId, recover));

describe('agent restart, --recover=reconnect', () => {
  it('takes back an executor that subscribes again, and destroys one that does not', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const e1 = await h.runningTask('t1', 'e1');
    await h.runningTask('t2', 'e2');
    crash(h);
    await tick(50);
    expect(e1.closed).toBe(true);
    restart(h, 'reconnect');
    expect((await e1.subscribe()).status).toBe(200);
    expect((await e1.next()).type).toBe('SUBSCRIBED');
    h.cluster.advance(2_000);
    const failed = await h.scheduler.nextUpdate('t2');
    expect(failed.update.status).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_REREGISTRATION_TIMEOUT',
      message: 'Executor did not reregister within 2secs',
    });
    // The one that came back still runs its task and reports it.
    expect((await e1.update({ task_id: { value: 't1' }, state: 'TASK_FINISHED', uuid: newUuid() })).status).toBe(202);
    expect((await h.scheduler.nextUpdate('t1')).update.status.state).toBe('TASK_FINISHED');
  });
});

describe('agent restart, --recover=cleanup', () => {
  it('shuts down the executors it finds, then exits; the lost task reaches the framework after the next start', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const e1 = await h.runningTask('t1', 'e1');
    crash(h);
    await tick(50);
    restart(h, 'cleanup');
    expect((await e1.subscribe()).status).toBe(200);
    expect((await e1.next()).type).toBe('SHUTDOWN');
    // It does not exit: after the grace period the agent destroys it, then exits itself.
    h.cluster.advance(5_000);
    await tick(50);
    expect(h.cluster.driver.read((view) => view.agentProcessState(h!.agentId))).toBe('crashed');
    expect(h.scheduler.pending.some((e) => e.type === 'UPDATE')).toBe(false);
    restart(h, 'reconnect');
    h.cluster.advance(1_000);
    const lost = await h.scheduler.nextUpdate('t1');
    expect(lost.update.status).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
  });

  it('kills the simulated executors it finds: their tasks end killed', async () => {
    h = await startHarness({ customExecutors: 'simulate' });
    await h.launch('t1', 'e1', { value: 'sleep 3600' });
    for (const state of ['TASK_STARTING', 'TASK_RUNNING']) {
      const update = await h.scheduler.nextUpdate('t1');
      expect(update.update.status.state).toBe(state);
      await h.acknowledge(update);
    }
    crash(h);
    restart(h, 'cleanup');
    expect(h.cluster.driver.read((view) => view.agentProcessState(h!.agentId))).toBe('crashed');
    restart(h, 'reconnect');
    h.cluster.advance(1_000);
    expect((await h.scheduler.nextUpdate('t1')).update.status.state).toBe('TASK_KILLED');
  });
});
