/**
 * The framework against a master that wants HTTP Basic credentials on the
 * scheduler API: it subscribes with CLUSTER_PRINCIPAL (or CLUSTER_USERNAME)
 * and CLUSTER_PASSWORD, names its principal, and a wrong secret stops its
 * start with the master's 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { runningAtMaster, startService, testConfig, until } from './orch-harness.js';

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    host: '127.0.0.1',
    agents: 1,
    time: 'realtime',
    containerizers: 'docker,mesos',
    credentials: { credentials: [{ principal: 'orch', secret: 's3cret' }] },
  });
});
afterAll(async () => {
  await cluster?.close();
});

describe('cluster credentials', () => {
  it('subscribes with the principal and secret, and runs its parts', async () => {
    const service = await startService(
      testConfig(cluster, {
        CLUSTER_PRINCIPAL: 'orch',
        CLUSTER_PASSWORD: 's3cret',
        ORCH_AGENT_MEM: '256',
        ORCH_SERVER_MEM: '256',
        DS_MEM: '256',
      }),
    );
    try {
      const id = service.orchestrator.frameworkId!;
      expect(cluster.driver.read((v) => v.framework(id)?.info.principal)).toBe('orch');
      await until(
        'every part running',
        () => JSON.stringify(runningAtMaster(cluster, id)) === '{"server":1,"agent":1,"datastore":1}',
      );
    } finally {
      await service.orchestrator.teardown();
      await service.close();
    }
  });

  it('stops its start with the 401 of a wrong secret, or of none', async () => {
    await expect(
      startService(testConfig(cluster, { CLUSTER_USERNAME: 'orch', CLUSTER_PASSWORD: 'wrong' })),
    ).rejects.toThrow(/^SUBSCRIBE to http:\/\/127\.0\.0\.1:\d+: 401/);
    await expect(startService(testConfig(cluster))).rejects.toThrow(/: 401/);
  });
});
