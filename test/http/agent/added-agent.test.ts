/**
 * An agent added while the cluster runs (`RunningCluster.addAgent`, an
 * `add_agent` fault) is served as those the cluster started with: its
 * agent API answers at the address the master reports for it (its pid,
 * hostname and port), with a port per agent and with loopback addressing;
 * with advertised ports, at the endpoint `RunningCluster.agents` lists. It
 * registers and is offered. `removeAgent` (`remove_agent`) closes it.
 * Real sockets; the added agents take ephemeral ports as the others did.
 */
import { existsSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutorClient } from '../../../src/client/executor-client.js';
import { postRaw, SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';
import { cpusMem, startHarness, tick, type Harness } from './executor-harness.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let r: RunningCluster | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await (h ?? r)?.close();
  [r, h] = [undefined, undefined];
});

async function start(options: StartClusterOptions): Promise<RunningCluster> {
  r = await startCluster({ port: 0, time: 'virtual', ...options });
  return r;
}

const post = (path: string, body: unknown) =>
  postRaw(new URL(path, r!.masterUrl), JSON.stringify(body), { 'content-type': 'application/json' });

/** Waits, a bounded number of times 10 ms, until the test holds; fails if it never does. */
async function eventually(test: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(test()).toBe(true);
}

/** Adds an agent by the library; its id, once its endpoint is served and it registered. */
async function addAgent(): Promise<string> {
  const endpoint = await r!.addAgent({ resources: 'cpus:3;mem:1024' });
  expect(r!.agents).toContain(endpoint);
  r!.advance(1_000);
  return endpoint.id;
}

/** Whether `url` refuses connections, once the endpoint there has closed (it follows the input that removed it). */
async function closedAt(url: string): Promise<string> {
  let met = await refused(url);
  for (let i = 0; i < 1_000 && met === 'connected'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    met = await refused(url);
  }
  return met;
}

/** The master's /state entry of an agent. */
async function reported(id: string): Promise<Json> {
  const state = (await (await fetch(new URL('/state', r!.masterUrl))).json()) as Json;
  return state.slaves.find((s: Json) => s.id === id);
}

/** An operator API call to the agent at `url`, in JSON. */
async function agentCall(url: string, type: string): Promise<Json> {
  const reply = await fetch(new URL('/api/v1', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ type }),
  });
  expect(reply.status).toBe(200);
  return reply.json();
}

/** The agent that answers at `url`: by its `/state`, and by the operator API (GET_STATE answers, GET_AGENT names it). */
async function agentAt(url: string): Promise<{ state: string; operator: string }> {
  const state = (await (await fetch(new URL('/state', url))).json()) as Json;
  expect((await agentCall(url, 'GET_STATE')).type).toBe('GET_STATE');
  return { state: state.id, operator: (await agentCall(url, 'GET_AGENT')).get_agent.agent_info.id.value };
}

/** What a fresh connection to `url` meets: 'connected', or the error (a pooled one may still be open until cut). */
const refused = (url: string): Promise<string> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

describe('RunningCluster.addAgent and removeAgent', () => {
  it('an agent added after the start registers, is offered, is listed by /master/slaves and answers its own /state; a removed one is gone', async () => {
    await start({ agents: 1 });
    const scheduler = new SchedulerClient(r!.masterUrl);
    expect((await scheduler.subscribe({ user: 'u', name: 'late-agents' })).status).toBe(200);
    await scheduler.next('SUBSCRIBED');
    const endpoint = await r!.addAgent({ resources: 'cpus:2;mem:512', attributes: 'rack:r9', hostname: 'late-host' });
    // A pid names the address, as upstream's does; the host name is the one given.
    expect(endpoint).toMatchObject({ hostname: 'late-host', pid: `slave(1)@127.0.0.1:${endpoint.port}` });
    let offered = false;
    for (let i = 0; i < 30 && !offered; i++) {
      r!.advance(1_000);
      await tick(5);
      offered = scheduler.pending.some(
        (e) => e.type === 'OFFERS' && (e as Json).offers.offers.some((o: Json) => o.agent_id.value === endpoint.id),
      );
    }
    expect(offered).toBe(true);
    const slaves = (await (await fetch(new URL('/master/slaves', r!.masterUrl))).json()) as Json;
    const listed = slaves.slaves.find((a: Json) => a.id === endpoint.id);
    expect(listed).toMatchObject({ hostname: 'late-host', active: true, attributes: { rack: 'r9' } });
    expect(listed.resources).toMatchObject({ cpus: 2, mem: 512 });
    const own = (await (await fetch(new URL('/state', endpoint.url))).json()) as Json;
    expect(own).toMatchObject({ id: endpoint.id, hostname: 'late-host' });
    await r!.removeAgent(endpoint.id);
    expect(r!.agents.map((a) => a.id)).not.toContain(endpoint.id);
    expect(await closedAt(endpoint.url)).toBe('ECONNREFUSED');
    const after = (await (await fetch(new URL('/master/slaves', r!.masterUrl))).json()) as Json;
    expect(after.slaves.some((a: Json) => a.id === endpoint.id && a.active === true)).toBe(false);
    scheduler.close();
  });

  it('the control API adds it the same way: at an ephemeral port listening already, which the trace keeps', async () => {
    await start({ agents: 1 });
    const added = await post('/sim/v1/faults', { type: 'add_agent', resources: 'cpus:1;mem:256' });
    expect(added.status).toBe(200);
    const id = (JSON.parse(added.body) as { agent_id: string }).agent_id;
    await eventually(() => r!.agents.some((a) => a.id === id));
    const slave = await reported(id);
    expect(await agentAt(`http://${slave.hostname}:${slave.port}`)).toEqual({ state: id, operator: id });
    const fault = r!.trace().find((e) => e.kind === 'fault:add_agent');
    expect(fault?.line).toContain(`"port":${slave.port}`);
  });

  it('refuses what is no agent: bad resources, an unknown agent to remove', async () => {
    await start({ agents: 1 });
    await expect(r!.addAgent({ resources: 'cpu:1' })).rejects.toThrow(/addAgent: resources: unknown resource 'cpu'/);
    await expect(r!.removeAgent('no-such-agent')).rejects.toThrow("Agent 'no-such-agent' not found");
    expect(r!.agents.length).toBe(1);
  });
});

describe('an agent added by a fault', () => {
  it('answers at the address the master reports for it, a port of its own, and closes when removed', async () => {
    await start({ agents: 2 });
    const id = await addAgent();
    const slave = await reported(id);
    const [host, port] = [slave.hostname as string, slave.port as number];
    expect(slave.pid).toBe(`slave(1)@${host}:${port}`);
    const url = `http://${host}:${port}`;
    expect(await agentAt(url)).toEqual({ state: id, operator: id });
    expect(r!.agents.map((a) => a.id)).toEqual([r!.agents[0]!.id, r!.agents[1]!.id, id]);
    expect(r!.agents[2]).toMatchObject({ id, url, port, hostname: host, pid: slave.pid });
    // The agents of the start still answer for themselves.
    expect((await agentAt(r!.agents[0]!.url)).state).toBe(r!.agents[0]!.id);
    await r!.removeAgent(id);
    expect(r!.agents.length).toBe(2);
    expect(await closedAt(url)).toBe('ECONNREFUSED');
    expect(r!.driver.failure).toBeUndefined();
  });

  it('follows a reset: the new cluster has only the agents of the start, and the added one stops listening', async () => {
    await start({ agents: 1 });
    const id = await addAgent();
    const url = r!.agents[1]!.url;
    expect((await agentAt(url)).state).toBe(id);
    r!.reset();
    expect(await closedAt(url)).toBe('ECONNREFUSED');
    await eventually(() => r!.agents.length === 1);
    expect(r!.agents.map((a) => a.id)).toEqual([r!.agents[0]!.id]);
    expect((await agentAt(r!.agents[0]!.url)).state).toBe(r!.agents[0]!.id);
  });

  it('answers at its own address and port with loopback addressing, beside the agent whose address it shares', async () => {
    await start({ agents: 2, agentAddressing: 'loopback' });
    const id = await addAgent();
    const slave = await reported(id);
    expect(slave.hostname).toBe(r!.agents[0]!.hostname);
    expect(slave.port).not.toBe(r!.agents[0]!.port);
    expect(await agentAt(`http://${slave.hostname}:${slave.port}`)).toEqual({ state: id, operator: id });
    expect((await agentAt(r!.agents[0]!.url)).state).toBe(r!.agents[0]!.id);
  });

  it('is where an executor of its task subscribes (custom_executors: await), at the address the master reports', async () => {
    h = await startHarness({ customExecutors: 'await' });
    r = h.cluster;
    const id = await addAgent();
    const slave = await reported(id);
    // An offer of the added agent: time goes on by allocation intervals until one comes.
    let offer: Json;
    for (let i = 0; i < 30 && offer === undefined; i++) {
      r.advance(1_000);
      await tick(5);
      const offers = h.scheduler.pending.flatMap((e) => (e.type === 'OFFERS' ? (e as Json).offers.offers : []));
      offer = offers.find((o: Json) => o.agent_id.value === id);
    }
    const task = {
      name: 't',
      task_id: { value: 't' },
      agent_id: offer.agent_id,
      resources: cpusMem(0.25, 32),
      executor: { executor_id: { value: 'e' }, type: 'CUSTOM', command: { value: 'run' }, resources: cpusMem(0.1, 16) },
    };
    const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] };
    expect((await h.scheduler.call({ type: 'ACCEPT', accept })).status).toBe(202);
    const executor = new ExecutorClient(`http://${slave.hostname}:${slave.port}`, {
      frameworkId: h.frameworkId,
      executorId: 'e',
    });
    try {
      expect((await executor.subscribe()).status).toBe(200);
      expect((await executor.next('LAUNCH')).launch.task.task_id.value).toBe('t');
    } finally {
      executor.close();
    }
  });

  it('has its executors’ domain socket with --http-executor-domain-sockets, removed with it', async () => {
    await start({ agents: 1, httpExecutorDomainSockets: true });
    const id = await addAgent();
    // Its endpoint follows the input that added it: listed once its sockets listen.
    const socket = r!.agents[1]!.domainSocket!;
    expect(socket).toBe(path.join(r!.workDir!, 'agents', id, 'agent.sock'));
    expect(statSync(socket).isSocket()).toBe(true);
    await post('/sim/v1/faults', { type: 'remove_agent', agent_id: id });
    await post('/sim/v1/advance', { ms: 1_000 });
    await eventually(() => !existsSync(socket));
    expect(existsSync(r!.agents[0]!.domainSocket!)).toBe(true);
  });

  it('answers at the endpoint the cluster lists where it advertises ports of its own, with no agent at the start too; the control API adds it', async () => {
    await start({ agents: 0, advertisePorts: { master: 5050, firstAgent: 5051 } });
    const added = await post('/sim/v1/faults', { type: 'add_agent', resources: 'cpus:3;mem:1024', hostname: 'late' });
    expect(added.status).toBe(200);
    const id = (JSON.parse(added.body) as { agent_id: string }).agent_id;
    await eventually(() => r!.agents.some((a) => a.id === id));
    expect((await reported(id)).hostname).toBe('late');
    expect((await reported(id)).port).toBe(5051);
    const [endpoint] = r!.agents;
    expect(endpoint).toMatchObject({ id, pid: 'slave(1)@127.0.0.1:5051' });
    expect(await agentAt(endpoint!.url)).toEqual({ state: id, operator: id });
  });
});
