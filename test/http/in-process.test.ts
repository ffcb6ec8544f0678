/**
 * The in-process transport (`RunningCluster.inProcess`): what HTTP does at
 * the connection, done without one. A standby's 307 is followed to the
 * leader, a client that hangs up leaves its framework disconnected, a
 * master that is down fails the request as a reset would, and an address
 * that is no master of the cluster is refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/index.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const INFO = { user: 'root', name: 'in-process', failover_timeout: 3600 };

const stateOf = (cluster: RunningCluster, id: string): string | undefined =>
  cluster.driver.read((view) => view.framework(id)?.state);

/** Waits (a bounded number of turns of the event loop) until the test holds. */
async function eventually(test: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !test(); turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(test()).toBe(true);
}

describe('the in-process transport', () => {
  it("follows a standby's redirect to the leader and subscribes there", async () => {
    r = await startCluster({ agents: 1, masters: 2, time: 'virtual', seed: 7 });
    const client = new SchedulerClient(r.masterUrls[1]!, { transport: r.inProcess });
    const answer = await client.subscribe(INFO);
    expect(answer.status).toBe(200);
    expect(client.url.origin).toBe(new URL(r.masterUrls[0]!).origin);
    expect((await client.waitFor('SUBSCRIBED')).subscribed.framework_id.value).toBe(client.frameworkId);
    client.close();
  });

  it('leaves a framework disconnected when its client hangs up, and can subscribe it again', async () => {
    r = await startCluster({ agents: 1, time: 'virtual', seed: 7 });
    const cluster = r;
    const client = new SchedulerClient(cluster.masterUrl, { transport: cluster.inProcess });
    await client.subscribe(INFO);
    await client.waitFor('SUBSCRIBED');
    const id = client.frameworkId!;
    client.disconnect();
    await eventually(() => stateOf(cluster, id) === 'disconnected');
    const again = new SchedulerClient(cluster.masterUrl, { transport: cluster.inProcess });
    expect((await again.subscribe({ ...INFO, id: { value: id } })).status).toBe(200);
    await again.waitFor('SUBSCRIBED');
    expect(stateOf(cluster, id)).toBe('subscribed');
    again.close();
  });

  it('ends the stream when the master goes down, fails calls to it as a reset, and refuses other addresses', async () => {
    r = await startCluster({ agents: 1, masters: 2, time: 'virtual', seed: 7 });
    const cluster = r;
    const client = new SchedulerClient(cluster.masterUrl, { transport: cluster.inProcess });
    await client.subscribe(INFO);
    await client.waitFor('SUBSCRIBED');
    cluster.driver.input((c) => c.inject({ type: 'crash_master' }));
    await eventually(() => client.closed);
    await expect(client.call({ type: 'REVIVE', revive: {} })).rejects.toThrow(/destroyed|reset/i);
    const stranger = new SchedulerClient('http://127.0.0.1:1', { transport: cluster.inProcess });
    await expect(stranger.subscribe(INFO)).rejects.toThrow(
      'connect ECONNREFUSED 127.0.0.1:1 (no master of this cluster)',
    );
  });
});
