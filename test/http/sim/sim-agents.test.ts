/**
 * GET /sim/v1/agents over a real socket: every agent the master books, an
 * unreachable one too (which `/master/state` only counts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const get = async (path: string) => (await fetch(new URL(path, r!.masterUrl))).json();
const post = (path: string, body: object) =>
  fetch(new URL(path, r!.masterUrl), {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

describe('GET /sim/v1/agents', () => {
  it('lists each agent with its state, the unreachable ones that /master/state leaves out', async () => {
    r = await startCluster({ port: 0, agents: 2, time: 'virtual' });
    const { agents } = (await get('/sim/v1/agents')) as { agents: { id: string; state: string }[] };
    expect(agents.map((a) => a.state)).toEqual(['active', 'active']);
    expect(agents[0]).toEqual({
      id: agents[0]!.id,
      hostname: expect.any(String),
      port: expect.any(Number),
      state: 'active',
    });
    const crashed = agents[1]!.id;
    expect((await post('/sim/v1/faults', { type: 'crash_agent', agent_id: crashed })).status).toBe(200);
    expect((await post('/sim/v1/advance', { ms: 120_000 })).status).toBe(200);
    const after = (await get('/sim/v1/agents')) as { agents: { id: string; state: string }[] };
    expect(after.agents.map((a) => [a.id, a.state])).toEqual([
      [agents[0]!.id, 'active'],
      [crashed, 'unreachable'],
    ]);
    const state = (await get('/master/state')) as { slaves: unknown[]; unreachable_slaves: number };
    expect([state.slaves.length, state.unreachable_slaves]).toEqual([1, 1]);
  });
});
