/**
 * The master's histories are bounded as upstream bounds them: each
 * framework keeps its last `--max_completed_tasks_per_framework` finished
 * tasks and the master its last `--max_completed_frameworks` removed
 * frameworks, the oldest dropped first. What is kept is what `/state`,
 * `/tasks` and the operator's GET_TASKS report.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';

type Json = any;

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({
    port: 0,
    agents: 1,
    time: 'virtual',
    seed: 3,
    maxCompletedTasksPerFramework: 3,
    maxCompletedFrameworks: 2,
  });
});
afterEach(async () => {
  await running.close();
});

/** A framework that launches `count` long tasks into its first offer, then tears itself down. */
async function launchAndTearDown(name: string, count: number): Promise<string> {
  const client = new SchedulerClient(running.masterUrl);
  expect((await client.subscribe({ user: 'root', name })).status).toBe(200);
  await client.next('SUBSCRIBED');
  running.advance(1_000);
  const offer = (await client.next('OFFERS')).offers.offers[0];
  const task_infos = Array.from({ length: count }, (_, i) => ({
    name: 'long',
    task_id: { value: `${name}-t${i + 1}` },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.1 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 8 } },
    ],
    command: { value: 'sleep 1000' },
  }));
  const accept = {
    type: 'ACCEPT',
    accept: {
      offer_ids: [offer.id],
      operations: [{ type: 'LAUNCH', launch: { task_infos } }],
      filters: { refuse_seconds: 0 },
    },
  };
  expect((await client.call(accept)).status).toBe(202);
  running.advance(1_000);
  await client.nextUpdate(`${name}-t${count}`);
  expect((await client.call({ type: 'TEARDOWN' })).status).toBe(202);
  const id = client.frameworkId!;
  client.disconnect();
  return id;
}

async function getJson(path: string, body?: object): Promise<Json> {
  const url = new URL(path, running.masterUrl);
  const res =
    body === undefined
      ? await fetch(url)
      : await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(body),
        });
  expect(res.status).toBe(200);
  return res.json();
}

describe('bounded histories (--max_completed_tasks_per_framework, --max_completed_frameworks)', () => {
  it('keeps the newest completed tasks and frameworks, and every read reports just those', async () => {
    const ids = [];
    for (const name of ['a', 'b', 'c']) ids.push(await launchAndTearDown(name, 5));
    const state = await getJson('/state');
    expect(state.flags.max_completed_tasks_per_framework).toBe('3');
    expect(state.flags.max_completed_frameworks).toBe('2');
    expect(state.completed_frameworks.map((f: Json) => f.id)).toEqual([ids[1], ids[2]]);
    for (const [i, name] of [
      [0, 'b'],
      [1, 'c'],
    ] as const) {
      const completed = state.completed_frameworks[i].completed_tasks;
      expect(completed.map((t: Json) => [t.id, t.state])).toEqual(
        [3, 4, 5].map((n) => [`${name}-t${n}`, 'TASK_KILLED']),
      );
    }
    const tasks = await getJson('/tasks');
    expect(tasks.tasks.map((t: Json) => t.id).sort()).toEqual(['b-t3', 'b-t4', 'b-t5', 'c-t3', 'c-t4', 'c-t5']);
    const operator = await getJson('/api/v1', { type: 'GET_TASKS' });
    expect(operator.get_tasks.completed_tasks.map((t: Json) => t.task_id.value).sort()).toEqual([
      'b-t3',
      'b-t4',
      'b-t5',
      'c-t3',
      'c-t4',
      'c-t5',
    ]);
    expect(operator.get_tasks.tasks ?? []).toEqual([]);
  });

  it('refuses a bound that is not a whole number', async () => {
    await expect(startCluster({ port: 0, agents: 0, time: 'virtual', maxCompletedFrameworks: -1 })).rejects.toThrow(
      StartError,
    );
    await expect(
      startCluster({ port: 0, agents: 0, time: 'virtual', maxCompletedTasksPerFramework: 1.5 }),
    ).rejects.toThrow(/^maxCompletedTasksPerFramework: must be a whole number of at least 0, got 1.5$/);
  });
});
