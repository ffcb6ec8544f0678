/**
 * An agent lost while a workflow task runs, in virtual time: the agent
 * crashes and never comes back, the master marks it unreachable after its
 * missed pings, and the service reports the task TASK_LOST (its framework
 * is not partition-aware), one of the five states the operator fails on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;
let service: WorkflowService;

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    time: 'virtual',
    agents: 1,
    containerizers: 'docker,mesos',
    seed: 'workflow-agent-lost',
  });
  service = await startWorkflowService({ config: DEFAULT_CONFIG, masterUrl: cluster.masterUrl, port: 0 });
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

async function state(id: string): Promise<string | undefined> {
  return ((await (await fetch(`${service.url}/v0/task/${id}`)).json()) as any)?.status?.state;
}

/** Moves cluster time a step at a time, letting the service answer between steps, until the task is in the state. */
async function advanceUntil(id: string, wanted: string, stepMs: number, maxMs: number): Promise<number> {
  for (let moved = 0; moved <= maxMs; moved += stepMs) {
    if ((await state(id)) === wanted) return moved;
    cluster.advance(stepMs);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} not ${wanted} after ${maxMs} ms of cluster time (it is ${await state(id)})`);
}

describe('an agent lost while a workflow task runs', () => {
  it('ends the task TASK_LOST once the master gives the agent up', async () => {
    const queued = await fetch(`${service.url}/v0/queue_command`, {
      method: 'POST',
      body: JSON.stringify({ workflow_task_id: 'stranded', command: 'sleep 600', image: 'alpine' }),
    });
    expect(queued.status).toBe(200);
    await advanceUntil('stranded', 'TASK_RUNNING', 100, 5_000);
    cluster.driver.input((c) => c.crashAgent(cluster.agents[0]!.id));
    const movedMs = await advanceUntil('stranded', 'TASK_LOST', 5_000, 120_000);
    // Five missed pings, 15 s apart: 75 to 90 s after it last answered.
    expect(movedMs).toBeGreaterThanOrEqual(70_000);
    const lost = (await (await fetch(`${service.url}/v0/task/stranded`)).json()) as any;
    expect(lost.status).toMatchObject({ state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_AGENT_REMOVED' });
  }, 30_000);
});
