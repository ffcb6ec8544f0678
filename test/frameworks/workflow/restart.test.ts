/**
 * A restart of the workflow service: with a state file it fails over onto
 * its framework (the master kept it and its tasks for failover_timeout),
 * reconciles, and keeps its running and queued tasks; a running task is
 * then followed to its final state.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;
const dir = mkdtempSync(path.join(os.tmpdir(), 'workflow-restart-'));
const config = { ...DEFAULT_CONFIG, failoverTimeoutSeconds: 60 };

beforeAll(async () => {
  cluster = await startCluster({ port: 0, time: 'realtime', containerizers: 'docker,mesos', agents: 1 });
});
afterAll(async () => {
  await cluster?.close();
});

const start = (stateFile: string) => startWorkflowService({ config, masterUrl: cluster.masterUrl, port: 0, stateFile });

async function status(service: WorkflowService, id: string): Promise<any> {
  return (await fetch(`${service.url}/v0/task/${id}`)).json();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 20_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function frameworks(): Promise<any[]> {
  return ((await (await fetch(`${cluster.masterUrl}/frameworks`)).json()) as { frameworks: any[] }).frameworks;
}

describe('workflow service restart', () => {
  it('keeps its framework, its running task and its queue across a restart', async () => {
    const stateFile = path.join(dir, 'state.json');
    const first = await start(stateFile);
    const frameworkId = first.scheduler.frameworkId;
    const post = (body: object) =>
      fetch(`${first.url}/v0/queue_command`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ workflow_task_id: 'long', command: 'sleep 2', image: 'alpine' })).status).toBe(200);
    expect(
      (await post({ workflow_task_id: 'waits', command: 'true', image: 'alpine', attributes: ['zone:none'] })).status,
    ).toBe(200);
    await until('long to run', async () =>
      (await status(first, 'long'))?.status?.state === 'TASK_RUNNING' ? true : undefined,
    );
    await first.close();
    expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ frameworkId, queue: ['waits'] });
    // The master holds the framework, disconnected, with its task.
    expect((await frameworks()).find((f) => f.id === frameworkId)).toMatchObject({
      active: false,
      tasks: [expect.objectContaining({ id: 'long' })],
    });

    const second = await start(stateFile);
    try {
      expect(second.scheduler.frameworkId).toBe(frameworkId);
      expect((await status(second, 'long')).status.task_id.value).toBe('long');
      expect(await status(second, 'waits')).toBeNull();
      const done = await until('long to finish', async () => {
        const s = await status(second, 'long');
        return s.status.state === 'TASK_FINISHED' ? s : undefined;
      });
      expect(done.status.agent_id.value).toBe(cluster.agents[0]!.id);
      expect((await frameworks()).filter((f) => f.name === config.frameworkName)).toHaveLength(1);
    } finally {
      await second.close();
    }
  }, 40_000);

  it('refuses a state file that does not read', async () => {
    const stateFile = path.join(dir, 'bad.json');
    writeFileSync(stateFile, '{"version": 7}');
    await expect(start(stateFile)).rejects.toThrow(/bad\.json: not a state file of the workflow service/);
  });
});
