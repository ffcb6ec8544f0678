/**
 * The typed executor and operator clients against a cluster in virtual
 * time: an executor in `await` mode subscribes, takes its LAUNCH from the
 * typed stream and reports its task; the operator client reads the state,
 * agents and tasks as typed responses and follows the SUBSCRIBE stream,
 * in both encodings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ExecutorClient,
  OperatorClient,
  SchedulerClient,
  type Encoding,
  type OperatorEvent,
} from '../../src/client/index.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let r: RunningCluster | undefined;
const closers: { close(): void }[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c.close();
  await r?.close();
  r = undefined;
});

async function framework(options: Parameters<typeof startCluster>[0] = {}): Promise<SchedulerClient> {
  r = await startCluster({ agents: 1, time: 'virtual', seed: 5, ...options });
  const scheduler = new SchedulerClient(r.masterUrl);
  closers.push(scheduler);
  expect((await scheduler.subscribe({ user: 'root', name: 'clients' })).status).toBe(200);
  await scheduler.waitFor('SUBSCRIBED');
  return scheduler;
}

describe.each<Encoding>(['json', 'protobuf'])('ExecutorClient in %s', (encoding) => {
  it('takes its LAUNCH from the typed stream and reports its task, the scheduler acknowledging', async () => {
    const scheduler = await framework({ customExecutors: 'await' });
    const offer = (await scheduler.waitFor('OFFERS')).offers.offers![0]!;
    const executorInfo = {
      executor_id: { value: 'ex' },
      type: 'CUSTOM' as const,
      command: { value: 'run-executor' },
      resources: [],
    };
    await scheduler.launch(offer, {
      taskId: 'custom',
      resources: { cpus: 0.5, mem: 32 },
      info: { executor: executorInfo },
    });
    const executor = new ExecutorClient(
      r!.agents[0]!.url,
      { frameworkId: scheduler.frameworkId!, executorId: 'ex' },
      { encoding },
    );
    closers.push(executor);
    expect((await executor.subscribe()).status).toBe(200);
    const types: string[] = [];
    for await (const event of executor.events()) {
      types.push(event.type);
      if (event.type === 'SUBSCRIBED') expect(event.subscribed.executor_info.executor_id.value).toBe('ex');
      if (event.type === 'LAUNCH') {
        expect(event.launch.task.task_id.value).toBe('custom');
        await executor.sendStatus('custom', 'TASK_RUNNING');
        const update = await scheduler.waitForUpdate('custom', { state: 'TASK_RUNNING' });
        expect(update.update.status.source).toBe('SOURCE_EXECUTOR');
        await scheduler.acknowledge(update);
      }
      if (event.type === 'ACKNOWLEDGED') {
        expect(event.acknowledged.task_id.value).toBe('custom');
        break;
      }
    }
    expect(types).toEqual(['SUBSCRIBED', 'LAUNCH', 'ACKNOWLEDGED']);
  });
});

describe.each<Encoding>(['json', 'protobuf'])('OperatorClient in %s', (encoding) => {
  it('reads typed responses and follows the event stream', async () => {
    const scheduler = await framework();
    const operator = new OperatorClient(r!.masterUrl, { encoding });
    closers.push(operator);
    const agents = await operator.getAgents();
    expect(agents.agents!.map((a) => a.agent_info.id?.value)).toEqual([r!.agents[0]!.id]);
    const state = await operator.getState();
    expect(state.get_frameworks!.frameworks!.map((f) => f.framework_info.name)).toEqual(['clients']);

    await operator.subscribe();
    const subscribed = await operator.waitFor('SUBSCRIBED');
    expect(subscribed.subscribed.get_state!.get_agents!.agents).toHaveLength(1);
    const offer = (await scheduler.waitFor('OFFERS')).offers.offers![0]!;
    await scheduler.launch(offer, { taskId: 'seen', command: 'sleep 1' });
    const seen: OperatorEvent['type'][] = [];
    for await (const event of operator.events()) {
      seen.push(event.type);
      if (event.type === 'TASK_ADDED') expect(event.task_added.task.task_id.value).toBe('seen');
      if (event.type === 'TASK_UPDATED' && event.task_updated.state === 'TASK_RUNNING') break;
      if (event.type === 'TASK_UPDATED')
        await scheduler.acknowledge(await scheduler.waitForUpdate('seen', { state: event.task_updated.state }));
    }
    expect(seen).toEqual(['TASK_ADDED', 'TASK_UPDATED', 'TASK_UPDATED']);
    const tasks = await operator.getTasks();
    expect(tasks.tasks!.map((t) => [t.task_id.value, t.state])).toEqual([['seen', 'TASK_RUNNING']]);
  });

  it('follows a standby master to the leader, for calls and the stream', async () => {
    r = await startCluster({ agents: 1, time: 'virtual', masters: 2 });
    const operator = new OperatorClient(r.masterUrls[1]!, { encoding });
    closers.push(operator);
    expect((await operator.getAgents()).agents).toHaveLength(1);
    const fresh = new OperatorClient(r.masterUrls[1]!, { encoding });
    closers.push(fresh);
    await fresh.subscribe();
    expect((await fresh.waitFor('SUBSCRIBED')).subscribed.get_state!.get_agents!.agents).toHaveLength(1);
  });

  it('throws a CallError for a call the master refuses', async () => {
    await framework();
    const operator = new OperatorClient(r!.masterUrl, { encoding });
    closers.push(operator);
    await expect(operator.teardown('no-such-framework')).rejects.toThrow(/^TEARDOWN: 4\d\d /);
  });
});
