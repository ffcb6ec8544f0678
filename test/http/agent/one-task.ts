/**
 * A cluster in virtual time on port 0 with one agent running one command
 * task (`sleeper`, 0.5 cpus and 64 MB, `sleep 3600`) of one framework,
 * for the tests of the agent's own endpoints.
 */
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import type { Json } from '../operator-harness.js';

export interface OneTask {
  readonly cluster: RunningCluster;
  readonly client: SchedulerClient;
  readonly frameworkId: string;
  /** Cluster time, in ms since the epoch, of the task's TASK_RUNNING. */
  readonly runningAtMs: number;
}

const resources = (cpus: number, mem: number) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus } },
  { name: 'mem', type: 'SCALAR', scalar: { value: mem } },
];

/** Acknowledges a task's updates until it reaches `state`; that update's status. */
export async function updatesUntil(client: SchedulerClient, taskId: string, state: string): Promise<Json> {
  for (;;) {
    const { status } = (await client.next((e) => e.type === 'UPDATE' && e.update.status.task_id.value === taskId))
      .update;
    if (status.uuid !== undefined)
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    if (status.state === state) return status;
  }
}

/** `command`: the task's shell command (what it writes lands in its sandbox). */
export async function startWithOneTask(seed: number, command = 'sleep 3600'): Promise<OneTask> {
  const cluster = await startCluster({ port: 0, agents: 1, time: 'virtual', seed });
  const client = new SchedulerClient(cluster.masterUrl, 'json');
  if ((await client.subscribe({ user: 'alice', name: 'one-task' })).status !== 200) throw new Error('not subscribed');
  const frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value as string;
  for (let i = 0; i < 30 && !client.pending.some((e) => e.type === 'OFFERS'); i++) {
    cluster.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const offer = (await client.next('OFFERS', 100)).offers.offers[0];
  const task = {
    name: 'sleeper',
    task_id: { value: 'sleeper' },
    agent_id: offer.agent_id,
    resources: resources(0.5, 64),
    command: { value: command },
  };
  const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] };
  if ((await client.call({ type: 'ACCEPT', accept })).status !== 202) throw new Error('launch refused');
  const running = await updatesUntil(client, 'sleeper', 'TASK_RUNNING');
  return { cluster, client, frameworkId, runningAtMs: Math.round(running.timestamp * 1000) };
}
