/**
 * What fuzzing the operator API found, one case each: the call that broke
 * an answer or an event, and the answer it gets now.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { operatorCall, OperatorStream, type Encoding } from './operator-harness.js';

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 3 });
});
afterEach(async () => {
  await running.close();
});

describe.each<Encoding>(['json', 'protobuf'])('operator calls found by fuzzing, over %s', (encoding) => {
  const call = (body: object) => operatorCall(running.masterUrl, body, encoding);

  it('refuses a DRAIN_AGENT whose max_grace_period no DurationInfo can hold, and the agent stays readable', async () => {
    const agentId = running.agents[0]!.id;
    // 2^53 seconds is 9e24 ns, past int64: GET_AGENTS and SUBSCRIBED could no longer be read.
    const res = await call({
      type: 'DRAIN_AGENT',
      drain_agent: { agent_id: { value: agentId }, max_grace_period: { seconds: 2 ** 53 } },
    });
    expect([res.status, res.body]).toEqual([400, "Failed to validate master::Call: 'max_grace_period' is too large"]);
    const largest = await call({
      type: 'DRAIN_AGENT',
      drain_agent: { agent_id: { value: agentId }, max_grace_period: { seconds: 9_000_000_000 } },
    });
    expect(largest.status).toBe(200);
    const agents = await call({ type: 'GET_AGENTS' });
    expect(agents.response!.get_agents.agents[0].drain_info.config.max_grace_period).toEqual({ nanoseconds: 9e18 });
    const stream = new OperatorStream(running.masterUrl, encoding);
    await stream.open();
    const subscribed = await stream.next('SUBSCRIBED');
    // No task to wait for: drained at once.
    expect(subscribed.subscribed.get_state.get_agents.agents[0].drain_info).toEqual({
      state: 'DRAINED',
      config: { max_grace_period: { nanoseconds: 9e18 }, mark_gone: false },
    });
    stream.close();
  });
});
