// A test of a scheduler against clustersim, with vitest: a cluster in
// virtual time, a framework subscribed with the typed client, a task
// launched from an offer, run to its end and acknowledged at each step.
import { afterEach, expect, test } from 'vitest';
import { startCluster, type RunningCluster } from 'clustersim';
import { SchedulerClient, type SchedulerEventOf, type TaskState } from 'clustersim/client';

let cluster: RunningCluster | undefined;
let client: SchedulerClient | undefined;

afterEach(async () => {
  client?.close();
  await cluster?.close();
});

test('a task launched from an offer runs and finishes', async () => {
  cluster = await startCluster({ agents: 1, time: 'virtual', seed: 0 });
  client = new SchedulerClient(cluster.masterUrl);
  const answer = await client.subscribe({ user: 'root', name: 'example' });
  expect(answer.status).toBe(200);

  const subscribed = await client.waitFor('SUBSCRIBED');
  expect(subscribed.subscribed.framework_id.value).toBe(client.frameworkId);
  expect(client.streamId).toBeDefined();

  const offers: SchedulerEventOf<'OFFERS'> = await client.waitFor('OFFERS');
  const offer = offers.offers.offers?.[0];
  if (offer === undefined) throw new Error('no offer');
  await client.launch(offer, { taskId: 'hello', command: 'sleep 5', resources: { cpus: 0.5, mem: 128 } });

  const states: TaskState[] = [];
  for await (const event of client.events()) {
    if (event.type !== 'UPDATE') continue;
    const { status } = event.update;
    states.push(status.state);
    await client.acknowledge(event);
    // The task sleeps 5 s of cluster time: move the clock on.
    if (status.state === 'TASK_RUNNING') cluster.advance(5_000);
    if (status.state === 'TASK_FINISHED') break;
  }
  expect(states).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
  expect(cluster.now()).toBe(5_000);

  // Acknowledged, nothing is left to retry: the cluster goes idle.
  expect(cluster.runUntilIdle().idle).toBe(true);
});
