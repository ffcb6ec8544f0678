/**
 * The typed client of an agent's operator API (`mesos.v1.agent`), in both
 * encodings, against a cluster in virtual time: the reads typed as
 * upstream's Responses, a task launched through the scheduler client seen
 * in the agent's GET_STATE and GET_CONTAINERS, and a refusal as a CallError.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AgentOperatorClient, CallError, SchedulerClient, type Encoding } from '../../src/client/index.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let r: RunningCluster | undefined;
const closers: { close(): void }[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c.close();
  await r?.close();
  r = undefined;
});

describe.each(['json', 'protobuf'] as Encoding[])('AgentOperatorClient in %s', (encoding) => {
  it('reads the agent, its flags, and the task a framework launched there with its container', async () => {
    r = await startCluster({ agents: 1, time: 'virtual', seed: 5 });
    const scheduler = new SchedulerClient(r.masterUrl, { encoding, transport: r.inProcess });
    closers.push(scheduler);
    await scheduler.subscribe({ user: 'root', name: 'agent-reader' });
    const offers = await scheduler.waitFor('OFFERS');
    await scheduler.launch(offers.offers.offers![0]!, {
      taskId: 'seen',
      command: 'sleep 100',
      resources: { cpus: 0.5, mem: 64 },
    });
    await scheduler.acknowledge(await scheduler.waitForUpdate('seen', { state: 'TASK_STARTING' }));
    await scheduler.acknowledge(await scheduler.waitForUpdate('seen', { state: 'TASK_RUNNING' }));

    const agent = new AgentOperatorClient(r.agents[0]!.url, { encoding });
    closers.push(agent);
    expect((await agent.getAgent()).agent_info?.id?.value).toBe(r.agents[0]!.id);
    expect((await agent.getFlags()).flags!.length).toBeGreaterThan(0);
    const state = await agent.getState();
    expect(state.get_tasks?.launched_tasks?.map((t) => t.task_id.value)).toEqual(['seen']);
    expect((await agent.getTasks()).launched_tasks?.map((t) => t.state)).toEqual(['TASK_RUNNING']);
    const containers = await agent.getContainers();
    expect(containers.containers).toHaveLength(1);
    expect(containers.containers![0]!.executor_id!.value).toBe('seen');
  });

  it('throws a CallError with the agent’s reason when it refuses a call', async () => {
    r = await startCluster({ agents: 1, time: 'virtual', seed: 5 });
    const agent = new AgentOperatorClient(r.agents[0]!.url, { encoding });
    closers.push(agent);
    const refused = agent.send({ type: 'KILL_CONTAINER', kill_container: { container_id: { value: 'nope' } } });
    await expect(refused).rejects.toThrow(CallError);
    await expect(refused).rejects.toThrow(/KILL_CONTAINER: 404/);
  });
});
