/**
 * The workflow service against a master that wants credentials
 * (`authenticate`, `default_principal`, `default_secret`), and speaking
 * protobuf to it instead of JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { DEFAULT_CONFIG } from '../../../src/frameworks/workflow/config.js';
import { startWorkflowService } from '../../../src/frameworks/workflow/service.js';

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    time: 'realtime',
    agents: 1,
    credentials: { credentials: [{ principal: 'wf', secret: 's3cret' }] },
  });
});
afterAll(async () => {
  await cluster?.close();
});

const config = { ...DEFAULT_CONFIG, authenticate: true, defaultPrincipal: 'wf', defaultSecret: 's3cret' };

async function runsToEnd(encoding: 'json' | 'protobuf', id: string): Promise<void> {
  const service = await startWorkflowService({ config, masterUrl: cluster.masterUrl, port: 0, encoding });
  try {
    const frameworks = (await (
      await fetch(`${cluster.masterUrl}/frameworks`, { headers: service.scheduler.authHeaders })
    ).json()) as { frameworks: any[] };
    expect(frameworks.frameworks.find((f) => f.id === service.scheduler.frameworkId)).toMatchObject({
      principal: 'wf',
      checkpoint: true,
      failover_timeout: 604800,
    });
    expect(
      (
        await fetch(`${service.url}/v0/queue_command`, {
          method: 'POST',
          body: JSON.stringify({ workflow_task_id: id, command: 'exit 0', image: 'alpine' }),
        })
      ).status,
    ).toBe(200);
    const end = Date.now() + 15_000;
    let state: string | undefined;
    while (state !== 'TASK_FINISHED' && Date.now() < end) {
      state = ((await (await fetch(`${service.url}/v0/task/${id}`)).json()) as any)?.status?.state;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(state).toBe('TASK_FINISHED');
  } finally {
    await service.close();
  }
}

describe('workflow service with cluster credentials', () => {
  it('subscribes with its principal and secret, in JSON and in protobuf', async () => {
    await runsToEnd('json', 'auth.json');
    await runsToEnd('protobuf', 'auth.protobuf');
  }, 40_000);

  it('does not start with a wrong secret, and says what the master answered', async () => {
    await expect(
      startWorkflowService({ config: { ...config, defaultSecret: 'wrong' }, masterUrl: cluster.masterUrl, port: 0 }),
    ).rejects.toThrow(/SUBSCRIBE answered 401/);
  });
});
