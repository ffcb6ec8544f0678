/**
 * The control API (`/sim/v1/`) over real sockets: the clock of a cluster
 * in virtual time read and moved on from outside, faults injected on
 * agents, agents added and removed, and the refusals; and
 * `clustersim up --time virtual --epoch`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import { startUp } from '../../e2e/cli-process.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const post = (path: string, body: unknown) =>
  postRaw(new URL(path, r!.masterUrl), JSON.stringify(body), { 'content-type': 'application/json' });
const clock = async () =>
  (await (await fetch(new URL('/sim/v1/clock', r!.masterUrl))).json()) as {
    time_ms: number;
    epoch_ms: number;
    mode: string;
  };

describe('the control API', () => {
  it('reads and moves the clock of a cluster in virtual time; events fall due on the way', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual', epochMs: 1_800_000_000_000 });
    expect(await clock()).toMatchObject({ time_ms: 0, epoch_ms: 1_800_000_000_000, mode: 'virtual' });
    const client = new SchedulerClient(r.masterUrl);
    await client.subscribe({ user: 'u', name: 'clocked' });
    await client.next('SUBSCRIBED');
    await client.next('HEARTBEAT');
    const moved = await post('/sim/v1/advance', { ms: 15_000 });
    expect(moved.status).toBe(200);
    expect(JSON.parse(moved.body)).toMatchObject({ time_ms: 15_000 });
    // The next heartbeat is due 15 s after the first.
    expect((await client.next('HEARTBEAT')).type).toBe('HEARTBEAT');
    client.disconnect();
  });

  it('injects faults: a crashed agent is down, a partitioned one becomes unreachable once time passes', async () => {
    r = await startCluster({ port: 0, agents: 2, time: 'virtual' });
    const [a, b] = r.agents;
    expect(JSON.parse((await post('/sim/v1/faults', { type: 'crash_agent', agent_id: a!.id })).body)).toEqual({
      type: 'crash_agent',
      agent_id: a!.id,
      state: 'crashed',
    });
    expect(
      JSON.parse((await post('/sim/v1/faults', { type: 'restart_agent', agent_id: a!.id, recover: 'reconnect' })).body)
        .state,
    ).not.toBe('crashed');
    expect((await post('/sim/v1/faults', { type: 'partition', agent_id: b!.id })).status).toBe(200);
    await post('/sim/v1/advance', { ms: 90_000 });
    const slaves = (await (await fetch(new URL('/master/state', r.masterUrl))).json()) as {
      unreachable_slaves?: unknown[];
      slaves: { id: string }[];
    };
    expect(slaves.slaves.map((s) => s.id)).not.toContain(b!.id);
    expect((await post('/sim/v1/faults', { type: 'heal', agent_id: b!.id })).status).toBe(200);
  });

  it('refuses what it cannot do, with the reason', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await post('/sim/v1/advance', { ms: -1 })).toMatchObject({
      status: 400,
      body: "Expecting 'ms' to be a whole number of milliseconds from 0 to 86400000",
    });
    expect(await post('/sim/v1/faults', { type: 'explode', agent_id: 'x' })).toMatchObject({ status: 400 });
    expect(await post('/sim/v1/faults', { type: 'crash_agent', agent_id: 'nobody' })).toMatchObject({
      status: 404,
      body: "Agent 'nobody' not found",
    });
    // The master is a node of the network, but no agent: its process faults are the master faults.
    expect(await post('/sim/v1/faults', { type: 'crash_agent', agent_id: 'master' })).toMatchObject({
      status: 404,
      body: "Agent 'master' not found",
    });
    expect(await post('/sim/v1/faults', { type: 'restart_agent', agent_id: 'master' })).toMatchObject({
      status: 404,
      body: "Agent 'master' not found",
    });
    expect(await post('/sim/v1/faults', { type: 'partition', agent_id: 'master' })).toMatchObject({
      status: 400,
      body: "Expecting 'agent_id' to be an agent's id: the link is the agent's to the master",
    });
    expect(r.driver.failure).toBeUndefined();
    expect(
      (await postRaw(new URL('/sim/v1/advance', r.masterUrl), 'not json', { 'content-type': 'application/json' }))
        .status,
    ).toBe(400);
    await r.close();
    r = await startCluster({ port: 0, agents: 0 });
    expect((await post('/sim/v1/advance', { ms: 10 })).status).toBe(409);
    expect((await clock()).mode).toBe('realtime');
  });
});

describe('network rules through the control API', () => {
  it('drops the messages a rule names until it is removed', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual', recordTrace: true });
    const agentId = r.agents[0]!.id;
    const added = await post('/sim/v1/faults', {
      type: 'network_rule',
      action: 'drop',
      from: agentId,
      to: 'master',
      messages: ['PONG'],
    });
    expect(added.status).toBe(200);
    const ruleId = JSON.parse(added.body).rule_id as number;
    // Pings unanswered, 15 s apart: after five, at the next ping (90 s), the master takes the agent for unreachable.
    await post('/sim/v1/advance', { ms: 90_000 });
    expect(r.cluster.trace.entries().filter((e) => e.kind === 'net:drop')).toHaveLength(5);
    const kinds = () => r!.cluster.trace.entries().map((e) => e.kind);
    expect(kinds()).toContain('agent:unreachable');
    expect(await post('/sim/v1/faults', { type: 'remove_network_rule', rule_id: ruleId })).toMatchObject({
      status: 200,
    });
    expect(kinds()).toContain('net:rule-remove');
  });

  it('refuses a rule it cannot read', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await post('/sim/v1/faults', { type: 'network_rule', action: 'shred' })).toMatchObject({
      status: 400,
      body: "Expecting 'action' to be one of drop, delay, duplicate",
    });
    expect((await post('/sim/v1/faults', { type: 'network_rule', action: 'delay', delay_ms: -5 })).status).toBe(400);
    expect((await post('/sim/v1/faults', { type: 'network_rule', action: 'drop', probability: 2 })).status).toBe(400);
    expect((await post('/sim/v1/faults', { type: 'network_rule', action: 'drop', messages: ['pong'] })).status).toBe(
      400,
    );
  });
});

describe('the trace stream', () => {
  it('gives the entries kept, then the new ones as they come, as JSON lines', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual', recordTrace: true });
    const lines: { seq: number; time_ms: number; kind: string; line: string }[] = [];
    const controller = new AbortController();
    const res = await fetch(new URL('/sim/v1/trace', r.masterUrl), { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const reader = res.body!.getReader();
    let buffered = '';
    const readUntil = async (test: () => boolean) => {
      while (!test()) {
        const { value } = await reader.read();
        buffered += new TextDecoder().decode(value);
        const parts = buffered.split('\n');
        buffered = parts.pop()!;
        for (const part of parts) lines.push(JSON.parse(part));
      }
    };
    await readUntil(() => lines.some((l) => l.kind === 'agent:add'));
    expect(lines[0]).toMatchObject({ seq: 1, time_ms: 0, kind: 'cluster:start' });
    const before = lines.length;
    await post('/sim/v1/faults', { type: 'crash_agent', agent_id: r.agents[0]!.id });
    await readUntil(() => lines.some((l) => l.kind === 'agent:crash'));
    expect(lines.length).toBeGreaterThan(before);
    // Entries in order, one each.
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    controller.abort();
  });
});

describe('clustersim up --time virtual --epoch', () => {
  it('starts a cluster whose clock moves only through the control API, from the epoch given', async () => {
    const up = await startUp([
      '--agents',
      '1',
      '--time',
      'virtual',
      '--epoch',
      '1750000000000',
      '--log-level',
      'silent',
    ]);
    try {
      const read = async () =>
        (await (await fetch(new URL('/sim/v1/clock', up.masterUrl))).json()) as { time_ms: number; epoch_ms: number };
      expect(await read()).toMatchObject({ time_ms: 0, epoch_ms: 1_750_000_000_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await read()).time_ms).toBe(0);
      await postRaw(new URL('/sim/v1/advance', up.masterUrl), JSON.stringify({ ms: 2_500 }), {
        'content-type': 'application/json',
      });
      expect((await read()).time_ms).toBe(2_500);
    } finally {
      expect(await up.stop()).toBe(0);
    }
  }, 30_000);
});

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
    // The agents took ephemeral ports: so does it, listening before the core places it there.
    for (let i = 0; i < 100 && !r.agents.some((a) => a.id === id); i++) await new Promise((go) => setTimeout(go, 10));
    expect(r.agents.find((a) => a.id === id)?.port).toBe(agent!.port);
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
    expect(await post('/sim/v1/faults', { type: 'schedule_maintenance', agent_id: 'nobody' })).toMatchObject({
      status: 400,
      body: "Expecting 'duration_ms' to be a whole number of milliseconds from 1 to 86400000",
    });
    expect(
      await post('/sim/v1/faults', { type: 'schedule_maintenance', agent_id: 'nobody', duration_ms: 1_000 }),
    ).toMatchObject({ status: 404, body: "Agent 'nobody' not found" });
    const agentId = r.agents[0]!.id;
    expect(
      JSON.parse(
        (await post('/sim/v1/faults', { type: 'schedule_maintenance', agent_id: agentId, duration_ms: 60_000 })).body,
      ),
    ).toEqual({ type: 'schedule_maintenance', agent_id: agentId });
    const status = await fetch(new URL('/master/maintenance/status', r.masterUrl));
    expect(JSON.parse(await status.text()).draining_machines).toHaveLength(1);
    expect(r.driver.failure).toBeUndefined();
  });
});
