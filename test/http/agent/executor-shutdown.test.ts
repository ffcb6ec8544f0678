/**
 * Custom executors being shut down. A framework torn down while its
 * executor runs: the agent keeps the framework, as upstream's does
 * (TERMINATING), until its executors are gone, so that the executor can
 * still be heard during its shutdown grace period and the agent still ends
 * its stream, even if its own process dies meanwhile. An executor whose
 * shutdown an agent crash cut short: the restarted agent does not leave it
 * running for ever. A framework shut down on one agent only (not partition
 * aware, on an agent back from a partition): its new tasks there run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MASTER_NODE } from '../../../src/core/model/messages.js';
import { newUuid, startHarness, tick, type Harness } from './executor-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('an executor whose framework is torn down', () => {
  it('gets SHUTDOWN, is still heard during its grace period, and its stream ends with the grace period', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const executor = await h.runningTask('t1', 'e1');
    expect((await h.scheduler.call({ type: 'TEARDOWN' })).status).toBe(202);
    await executor.next('SHUTDOWN');
    // The executor kills its task and says so, as an executor library does on SHUTDOWN.
    expect((await executor.update({ task_id: { value: 't1' }, state: 'TASK_KILLED', uuid: newUuid() })).status).toBe(
      202,
    );
    expect((await executor.call({ type: 'MESSAGE', message: { data: '' } })).status).toBe(202);
    h.cluster.advance(5_000);
    await tick();
    expect(executor.closed).toBe(true);
    expect((await executor.call({ type: 'MESSAGE', message: { data: '' } })).body).toBe('Framework cannot be found');
  });

  it('has its stream ended when the agent process dies during the grace period', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const executor = await h.runningTask('t1', 'e1');
    expect((await h.scheduler.call({ type: 'TEARDOWN' })).status).toBe(202);
    await executor.next('SHUTDOWN');
    h.cluster.driver.input((c) => c.crashAgent(h!.agentId));
    await tick();
    expect(executor.closed).toBe(true);
  });
});

describe('an executor shut down just before its agent crashed', () => {
  it('is destroyed by the restarted agent when it does not exit, its task lost', async () => {
    h = await startHarness({ customExecutors: 'await' });
    const executor = await h.runningTask('t1', 'e1');
    const shutdown = { executor_id: { value: 'e1' }, agent_id: { value: h.agentId } };
    expect((await h.scheduler.call({ type: 'SHUTDOWN', shutdown })).status).toBe(202);
    await executor.next('SHUTDOWN');
    h.cluster.driver.input((c) => c.crashAgent(h!.agentId));
    await tick();
    h.cluster.driver.input((c) => c.restartAgent(h!.agentId, 'reconnect'));
    h.cluster.advance(5_000);
    await tick();
    const lost = await h.scheduler.nextUpdate('t1');
    expect(lost.update.status).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
    expect(
      h.cluster.driver.read((view) =>
        view
          .agentNode(h!.agentId)!
          .executors()
          .filter((e) => e.alive),
      ),
    ).toEqual([]);
  });
});

describe('a framework shut down on an agent back from a partition', () => {
  it('runs its new tasks there, and their updates reach it', async () => {
    h = await startHarness({ customExecutors: 'await' });
    await h.runningTask('t1', 'e1');
    h.cluster.driver.input((c) => c.partition(h!.agentId, MASTER_NODE));
    for (let i = 0; i < 3; i++) {
      h.cluster.advance(60_000);
      await tick(2);
    }
    expect((await h.scheduler.nextUpdate('t1')).update.status.state).toBe('TASK_LOST');
    // Back: the master shuts the framework down on the agent, which still runs t1 for it.
    h.cluster.driver.input((c) => c.heal(h!.agentId, MASTER_NODE));
    // The offers seen before the partition were rescinded: the launch takes one made after it.
    h.scheduler.pending.splice(0);
    await h.launch('t2', 'e2');
    const e2 = h.executor('e2');
    expect((await e2.subscribe()).status).toBe(200);
    await e2.next('LAUNCH');
    expect((await e2.update({ task_id: { value: 't2' }, state: 'TASK_RUNNING', uuid: newUuid() })).status).toBe(202);
    expect((await h.scheduler.nextUpdate('t2')).update.status.state).toBe('TASK_RUNNING');
  });
});
