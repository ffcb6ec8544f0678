// A test of a scheduler against clustersim, with jest (ESM: run jest with
// `node --experimental-vm-modules`): a cluster in virtual time, a task
// launched from an offer with the client, run to its end.
import { startCluster } from 'clustersim';
import { SchedulerClient } from 'clustersim/client';

let cluster;
let client;

afterEach(async () => {
  client?.close();
  await cluster?.close();
});

test('a task launched from an offer runs and finishes', async () => {
  cluster = await startCluster({ agents: 1, time: 'virtual', seed: 0 });
  client = new SchedulerClient(cluster.masterUrl);
  expect((await client.subscribe({ user: 'root', name: 'example' })).status).toBe(200);

  const offers = await client.waitFor('OFFERS');
  await client.launch(offers.offers.offers[0], { taskId: 'hello', command: 'sleep 5' });

  const states = [];
  for await (const event of client.events()) {
    if (event.type !== 'UPDATE') continue;
    states.push(event.update.status.state);
    await client.acknowledge(event);
    if (event.update.status.state === 'TASK_RUNNING') cluster.advance(5_000);
    if (event.update.status.state === 'TASK_FINISHED') break;
  }
  expect(states).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
});
