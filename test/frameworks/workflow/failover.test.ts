/**
 * The workflow service through a master failover: configured with every
 * master, it follows the first one's redirect to the leader, loses its
 * stream when the leader dies, subscribes again with its framework id
 * once another leads, reconciles, and follows its task to the end; a
 * request queued meanwhile runs too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postRaw } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;
let service: WorkflowService;

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    agents: 2,
    masters: 3,
    electionDelaySeconds: 0.3,
    containerizers: 'docker,mesos',
    seed: 'workflow-failover',
  });
  // A standby first: its redirect names the leader.
  service = await startWorkflowService({
    config: DEFAULT_CONFIG,
    masterUrl: [cluster.masterUrls[1], cluster.masterUrls[0], cluster.masterUrls[2]].join(','),
    port: 0,
  });
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

async function state(id: string): Promise<string | undefined> {
  return ((await (await fetch(`${service.url}/v0/task/${id}`)).json()) as any)?.status?.state;
}

async function until(what: string, test: () => Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const queue = (body: object) =>
  fetch(`${service.url}/v0/queue_command`, { method: 'POST', body: JSON.stringify(body) });

describe('workflow service through a master failover', () => {
  it('keeps its framework and its task, and runs what was queued meanwhile', async () => {
    expect(service.scheduler.masterOrigin).toBe(new URL(cluster.masterUrls[0]!).origin);
    const frameworkId = service.scheduler.frameworkId;
    expect((await queue({ workflow_task_id: 'through', command: 'sleep 3', image: 'alpine' })).status).toBe(200);
    await until('the task to run', async () => (await state('through')) === 'TASK_RUNNING');

    const fault = await postRaw(
      new URL('/sim/v1/faults', cluster.masterUrls[2]!),
      JSON.stringify({ type: 'master_failover' }),
      { 'content-type': 'application/json' },
    );
    expect(JSON.parse(fault.body)).toMatchObject({ type: 'master_failover', master: 0 });
    expect((await queue({ workflow_task_id: 'meanwhile', command: 'exit 0', image: 'alpine' })).status).toBe(200);

    await until('the task to finish', async () => (await state('through')) === 'TASK_FINISHED');
    await until('the request queued meanwhile to finish', async () => (await state('meanwhile')) === 'TASK_FINISHED');
    expect(service.scheduler.frameworkId).toBe(frameworkId);
    expect(service.scheduler.masterOrigin).not.toBe(new URL(cluster.masterUrls[0]!).origin);
  }, 40_000);
});
