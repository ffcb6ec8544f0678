/**
 * Agents joining and leaving through the control API: `add_agent` boots an
 * agent that registers as the others did and takes tasks, `remove_agent`
 * decommissions one (the master marks it gone), and bad bodies are one-line 400s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const post = (path: string, body: unknown) =>
  postRaw(new URL(path, r!.masterUrl), JSON.stringify(body), { 'content-type': 'application/json' });

interface Slave {
  id: string;
  hostname: string;
  port: number;
  resources: Record<string, unknown>;
  attributes: Record<string, unknown>;
}
const slaves = async (): Promise<Slave[]> =>
  ((await (await fetch(new URL('/master/slaves', r!.masterUrl))).json()) as { slaves: Slave[] }).slaves;

describe('agents added and removed by faults', () => {
  it('adds an agent that registers with the resources and attributes given, then removes it', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const added = await post('/sim/v1/faults', {
      type: 'add_agent',
      resources: 'cpus:3;mem:1024',
      attributes: 'rack:b',
    });
    expect(added.status).toBe(200);
    const { type, agent_id: id } = JSON.parse(added.body) as { type: string; agent_id: string };
    expect(type).toBe('add_agent');
    await post('/sim/v1/advance', { ms: 1_000 });
    const agent = (await slaves()).find((s) => s.id === id);
    expect(agent).toMatchObject({ resources: { cpus: 3, mem: 1024 }, attributes: { rack: 'b' } });
    // It takes the next port after the first agent's.
    expect(agent!.port).toBe(r.agents[0]!.port + 1);
    expect(JSON.parse((await post('/sim/v1/faults', { type: 'remove_agent', agent_id: id })).body)).toEqual({
      type: 'remove_agent',
      agent_id: id,
    });
    expect((await slaves()).map((s) => s.id)).toEqual([r.agents[0]!.id]);
    expect(r.driver.failure).toBeUndefined();
  });

  it('refuses bad bodies and unknown agents in one line', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await post('/sim/v1/faults', { type: 'add_agent' })).toMatchObject({
      status: 400,
      body: "Expecting 'resources' to be resources in the agent flag form, e.g. cpus:4;mem:8192",
    });
    expect(await post('/sim/v1/faults', { type: 'add_agent', resources: 'cpus:x' })).toMatchObject({ status: 400 });
    expect(await post('/sim/v1/faults', { type: 'add_agent', resources: 'cpus:1', attributes: 3 })).toMatchObject({
      status: 400,
      body: "Expecting 'attributes' to be attributes in the agent flag form, e.g. rack:r1;zone:a",
    });
    expect(await post('/sim/v1/faults', { type: 'remove_agent' })).toMatchObject({
      status: 400,
      body: "Expecting 'agent_id' to be present",
    });
    expect(await post('/sim/v1/faults', { type: 'remove_agent', agent_id: 'nobody' })).toMatchObject({
      status: 404,
      body: "Agent 'nobody' not found",
    });
    expect(r.driver.failure).toBeUndefined();
  });
});
