/**
 * The agent lifecycle as HTTP clients see it: a partitioned agent becomes
 * unreachable in `/master/state` and `/metrics/snapshot`, the subscribed
 * framework gets FAILURE with its `agent_id`, and the healed agent is
 * registered again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { AGENT_PING_TIMEOUT_MS, MAX_AGENT_PING_TIMEOUTS } from '../../../src/core/master/agent-health.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 11 });
});
afterEach(async () => {
  await running.close();
});

async function getJson(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(new URL(path, running.masterUrl));
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('an unreachable agent over HTTP', () => {
  it('is counted in unreachable_slaves and master/slaves_unreachable, and the framework gets FAILURE', async () => {
    const client = new SchedulerClient(running.masterUrl);
    const res = await client.subscribe({
      user: 'root',
      name: 'lifecycle',
      capabilities: [{ type: 'PARTITION_AWARE' }],
    });
    expect(res.status).toBe(200);
    await client.next('SUBSCRIBED');
    const agentId = running.agents[0]!.id;
    running.driver.input((c) => c.partition(agentId, 'master'));
    running.advance(AGENT_PING_TIMEOUT_MS * (MAX_AGENT_PING_TIMEOUTS + 1) + 1_000);

    const failure = await client.next('FAILURE');
    expect(failure.failure).toEqual({ agent_id: { value: agentId } });
    const state = await getJson('/master/state');
    expect(state.unreachable_slaves).toBe(1);
    expect((state.slaves as { id: string }[]).map((s) => s.id)).toEqual([running.agents[1]!.id]);
    expect((await getJson('/metrics/snapshot'))['master/slaves_unreachable']).toBe(1);

    running.driver.input((c) => c.heal(agentId, 'master'));
    running.advance(5_000);
    const healed = await getJson('/master/state');
    expect(healed.unreachable_slaves).toBe(0);
    expect((healed.slaves as unknown[]).length).toBe(2);
    expect((await getJson('/metrics/snapshot'))['master/slaves_unreachable']).toBe(0);
  });
});
