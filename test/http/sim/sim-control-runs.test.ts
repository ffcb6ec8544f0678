/**
 * The control API's runs and rewinds over real sockets: run until idle,
 * run until a condition, snapshot and restore, reset with a new seed (a
 * real scheduler client's stream closes and it subscribes again), their
 * refusals, and the same through the library's methods.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient, type SchedulerEventOf, type TaskState } from '../../../src/client/index.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let r: RunningCluster | undefined;
const clients: SchedulerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await r?.close();
  r = undefined;
});

const post = async (path: string, body?: unknown) => {
  const answer = await postRaw(new URL(path, r!.masterUrl), body === undefined ? '' : JSON.stringify(body), {
    'content-type': 'application/json',
  });
  return {
    status: answer.status,
    body: answer.body,
    json: answer.status === 200 ? (JSON.parse(answer.body) as Record<string, unknown>) : undefined,
  };
};
const state = async () =>
  (await (await fetch(new URL('/master/state', r!.masterUrl))).json()) as {
    slaves: { id: string }[];
    frameworks: { id: string; tasks: { id: string; state: string }[] }[];
  };

async function until(test: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(test()).toBe(true);
}

/** A subscribed framework (or one subscribing again with its id), its first offer taken. */
async function framework(id?: string): Promise<{ client: SchedulerClient; offer: SchedulerEventOf<'OFFERS'> }> {
  const client = new SchedulerClient(r!.masterUrl);
  clients.push(client);
  // A failover timeout, so that a framework whose stream closes stays to subscribe again.
  await client.subscribe({
    user: 'u',
    name: 'runs',
    failover_timeout: 3600,
    ...(id === undefined ? {} : { id: { value: id } }),
  });
  await client.waitFor('SUBSCRIBED');
  return { client, offer: await client.waitFor('OFFERS') };
}

async function launch(
  client: SchedulerClient,
  offer: SchedulerEventOf<'OFFERS'>,
  taskId: string,
  command: string,
): Promise<void> {
  await client.launch(offer.offers.offers![0]!, { taskId, command, resources: { cpus: 0.5, mem: 32 } });
}

/** Acknowledges a task's updates as they come (each comes once the one before is acknowledged), up to `last`; the states seen. */
async function acknowledgeUntil(client: SchedulerClient, taskId: string, last: TaskState): Promise<TaskState[]> {
  const states: TaskState[] = [];
  while (states.at(-1) !== last) {
    const update = await client.waitForUpdate(taskId);
    if (states.at(-1) !== update.update.status.state) states.push(update.update.status.state);
    await client.acknowledge(update);
  }
  return states;
}

describe('POST /sim/v1/run_until_idle and /sim/v1/run_until', () => {
  it('runs a task to its end and stops once only heartbeats are left; runs until a condition holds', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const { client, offer } = await framework();
    await launch(client, offer, 'nap', 'sleep 30');
    // The task ends at 30 s; nothing is due after but heartbeats and pings.
    expect((await post('/sim/v1/run_until_idle', {})).json).toEqual({ idle: true, time_ms: 30_000 });
    expect(await acknowledgeUntil(client, 'nap', 'TASK_FINISHED')).toEqual([
      'TASK_STARTING',
      'TASK_RUNNING',
      'TASK_FINISHED',
    ]);
    await launch(client, await client.waitFor('OFFERS'), 'long', 'sleep 100');
    // The master sees each update of a task once the framework acknowledged the one before.
    expect(await acknowledgeUntil(client, 'long', 'TASK_RUNNING')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    const condition = { tasks: { state: 'TASK_FINISHED', task_id: 'long' } };
    expect((await post('/sim/v1/run_until', { condition, max_ms: 50_000 })).json).toEqual({
      held: false,
      time_ms: 80_000,
    });
    expect((await post('/sim/v1/run_until', { condition, max_ms: 50_000 })).json).toEqual({
      held: true,
      time_ms: 130_000,
    });
    expect(
      (await post('/sim/v1/run_until', { condition: { frameworks: { state: 'subscribed', count: 1 } }, max_ms: 0 }))
        .json,
    ).toEqual({ held: true, time_ms: 130_000 });
    // By framework id; bounds of exactly, at least, at most.
    const byFramework = { tasks: { state: 'TASK_FINISHED', framework: client.frameworkId, count: 2 } };
    expect((await post('/sim/v1/run_until', { condition: byFramework, max_ms: 0 })).json).toEqual({
      held: true,
      time_ms: 130_000,
    });
    const running = { all: [{ tasks: { state: 'TASK_RUNNING', max: 0 } }, { agents: { state: 'active', min: 1 } }] };
    expect((await post('/sim/v1/run_until', { condition: running, max_ms: 0 })).json).toEqual({
      held: true,
      time_ms: 130_000,
    });
    const other = { tasks: { state: 'TASK_FINISHED', framework: 'no-such-framework' } };
    expect((await post('/sim/v1/run_until', { condition: other, max_ms: 1_000 })).json).toEqual({
      held: false,
      time_ms: 131_000,
    });
    // Bounded: an idle cluster's clock stays where it is, with a bound of 0 too.
    expect((await post('/sim/v1/run_until_idle', { max_ms: 0 })).json).toMatchObject({ time_ms: 131_000 });
  });

  it('refuses what it cannot read, and runs only in virtual time', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await post('/sim/v1/run_until_idle', { max_ms: -1 })).toMatchObject({
      status: 400,
      body: "Expecting 'max_ms' to be a whole number of milliseconds from 0 to 86400000",
    });
    expect(await post('/sim/v1/run_until_idle', [1])).toMatchObject({ status: 400, body: 'Expecting a JSON object' });
    expect(await post('/sim/v1/run_until', { max_ms: 10 })).toMatchObject({
      status: 400,
      body: "Expecting 'condition' to be an object",
    });
    expect(await post('/sim/v1/run_until', { condition: { agents: { state: 'active' } } })).toMatchObject({
      status: 400,
      body: "Expecting 'max_ms' to be a whole number of milliseconds from 0 to 86400000",
    });
    expect(await post('/sim/v1/run_until', { condition: { tasks: { state: 'DONE' } }, max_ms: 1 })).toMatchObject({
      status: 400,
      body: "Expecting 'condition.tasks.state' to be a task state (TASK_RUNNING, ...)",
    });
    // The forms before the one vocabulary: refused, with the form to write.
    expect(
      await post('/sim/v1/run_until', { condition: { task_state: { state: 'TASK_RUNNING' } }, max_ms: 1 }),
    ).toMatchObject({
      status: 400,
      body: `'condition.task_state' is the old form of a condition: write {"tasks":{"state":"TASK_RUNNING","min":1}}`,
    });
    expect(await post('/sim/v1/run_until', { condition: { agents_registered: 1 }, max_ms: 1 })).toMatchObject({
      status: 400,
      body: `'condition.agents_registered' is the old form of a condition: write {"agents":{"state":"active","min":1}}`,
    });
    expect(
      (await postRaw(new URL('/sim/v1/run_until_idle', r.masterUrl), 'nope', { 'content-type': 'application/json' }))
        .status,
    ).toBe(400);
    expect((await fetch(new URL('/sim/v1/run_until_idle', r.masterUrl))).status).toBe(405);
    await r.close();
    r = await startCluster({ port: 0, agents: 0 });
    expect(await post('/sim/v1/run_until_idle', {})).toMatchObject({
      status: 409,
      body: expect.stringMatching(/virtual time/),
    });
    expect(
      (await post('/sim/v1/run_until', { condition: { agents: { state: 'active', min: 0 } }, max_ms: 1 })).status,
    ).toBe(409);
  });
});

describe('POST /sim/v1/snapshot and /sim/v1/restore', () => {
  it('brings the cluster back to the snapshot; the client stream closes and the framework subscribes again', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const first = await framework();
    const frameworkId = first.client.frameworkId!;
    const snapshot = await post('/sim/v1/snapshot');
    expect(snapshot.json).toEqual({ snapshot_id: 'snapshot-1', time_ms: 0 });
    await launch(first.client, first.offer, 'after', 'sleep 1000');
    await post('/sim/v1/advance', { ms: 5_000 });
    expect((await state()).frameworks[0]!.tasks.map((t) => t.id)).toEqual(['after']);

    expect((await post('/sim/v1/restore', { snapshot_id: 'snapshot-1' })).json).toEqual({
      snapshot_id: 'snapshot-1',
      time_ms: 0,
    });
    await until(() => first.client.closed);
    expect(((await (await fetch(new URL('/sim/v1/clock', r.masterUrl))).json()) as { time_ms: number }).time_ms).toBe(
      0,
    );
    // The task launched after the snapshot never was; the framework is there, disconnected, and comes back.
    const back = await framework(frameworkId);
    expect(back.client.frameworkId).toBe(frameworkId);
    expect((await state()).frameworks.map((f) => [f.id, f.tasks.length])).toEqual([[frameworkId, 0]]);
    await launch(back.client, back.offer, 'again', 'sleep 5');
    expect(
      (
        await post('/sim/v1/run_until', {
          condition: { tasks: { state: 'TASK_FINISHED', task_id: 'again' } },
          max_ms: 60_000,
        })
      ).json,
    ).toMatchObject({ held: true });
  });

  it('refuses an unknown snapshot, a body without one, and a cluster that does not record its inputs', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await post('/sim/v1/restore', { snapshot_id: 'snapshot-9' })).toMatchObject({
      status: 404,
      body: "Snapshot 'snapshot-9' not found",
    });
    expect(await post('/sim/v1/restore', {})).toMatchObject({
      status: 400,
      body: "Expecting 'snapshot_id' to be present",
    });
    expect((await post('/sim/v1/snapshot', 'x')).status).toBe(400);
    // A restore forgets the snapshots taken after its own.
    const [a, b] = [(await post('/sim/v1/snapshot')).json!, (await post('/sim/v1/snapshot')).json!];
    expect((await post('/sim/v1/restore', { snapshot_id: a['snapshot_id'] })).status).toBe(200);
    expect((await post('/sim/v1/restore', { snapshot_id: b['snapshot_id'] })).status).toBe(200);
    await post('/sim/v1/advance', { ms: 10 });
    const c = (await post('/sim/v1/snapshot')).json!;
    expect((await post('/sim/v1/restore', { snapshot_id: a['snapshot_id'] })).status).toBe(200);
    expect((await post('/sim/v1/restore', { snapshot_id: c['snapshot_id'] })).status).toBe(404);
    await r.close();
    r = await startCluster({ port: 0, agents: 1 });
    expect(await post('/sim/v1/snapshot')).toMatchObject({
      status: 409,
      body: 'To take a snapshot, the cluster must record its inputs (virtual time records them)',
    });
  });

  it('gives, after a restore, the trace the original had from that point for the same inputs (library)', async () => {
    r = await startCluster({ port: 0, agents: 2, time: 'virtual', recordTrace: true });
    const [a, b] = r.agents;
    r.advance(20_000);
    const snapshot = r.snapshot();
    const from = r.trace().length;
    const later = (): string[] => {
      r!.cluster.inject({ type: 'crash_agent', agentId: a!.id });
      r!.advanceTo(r!.now() + 30_000);
      r!.cluster.inject({ type: 'partition', nodes: [b!.id, 'master'] });
      expect(r!.runUntil({ trace: { kind: 'agent:unreachable' } }, { maxMs: 200_000 }).held).toBe(true);
      r!.cluster.inject({ type: 'restart_agent', agentId: a!.id, recover: 'reconnect' });
      r!.runUntilIdle({ maxMs: 60_000 });
      return r!
        .trace()
        .slice(from)
        .map((e) => `${e.seq} ${e.line}`);
    };
    const original = later();
    expect(original.length).toBeGreaterThan(20);
    expect(r.restore(snapshot.snapshotId)).toEqual(snapshot);
    expect(r.trace().length).toBe(from);
    expect(later()).toEqual(original);
  });
});

describe('rewinds in real time', () => {
  it('restores and resets a cluster that follows the wall clock, when it records its inputs', async () => {
    r = await startCluster({ port: 0, agents: 1, recordInputs: true });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const snapshot = (await post('/sim/v1/snapshot')).json!;
    await new Promise((resolve) => setTimeout(resolve, 60));
    const restored = (await post('/sim/v1/restore', { snapshot_id: snapshot['snapshot_id'] })).json!;
    expect(restored['time_ms']).toBe(snapshot['time_ms']);
    // The clock goes on with the wall clock from there.
    expect(r.now()).toBeGreaterThanOrEqual(snapshot['time_ms'] as number);
    expect((await post('/sim/v1/reset', { seed: 'again' })).json).toMatchObject({ seed: 'again' });
    expect((await state()).slaves.map((s) => s.id)).toEqual([r.agents[0]!.id]);
    expect(() => r!.advanceTo(10_000_000)).toThrow(/virtual time/);
  });
});

describe('POST /sim/v1/reset', () => {
  it('starts the cluster again with a new seed, the same agents and options; clients subscribe again', async () => {
    r = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 5 });
    const agentIds = r.agents.map((a) => a.id);
    const first = await framework();
    await launch(first.client, first.offer, 'gone', 'sleep 1000');
    await post('/sim/v1/advance', { ms: 60_000 });
    const traceStream = await fetch(new URL('/sim/v1/trace', r.masterUrl));
    const reading = traceStream.text();

    expect((await post('/sim/v1/reset', { seed: 42 })).json).toEqual({ seed: '42', time_ms: 0 });
    await until(() => first.client.closed);
    expect(await reading).toMatch(/cluster:start/);
    expect(r.cluster.seed).toBe('42');
    expect((await state()).slaves.map((s) => s.id).sort()).toEqual([...agentIds].sort());
    expect((await state()).frameworks).toEqual([]);
    const back = await framework(first.client.frameworkId);
    expect(back.offer.offers.offers![0]!.agent_id.value).toMatch(/-S[01]$/);
    expect((await post('/sim/v1/reset')).json).toEqual({ seed: '43', time_ms: 0 });
    const refused = {
      status: 400,
      body: "Expecting 'seed' to be a whole number or a non-empty string of at most 256 characters",
    };
    expect(await post('/sim/v1/reset', { seed: 1.5 })).toMatchObject(refused);
    // Every random stream is seeded from the seed's text: a seed of megabytes would hold the cluster up, and comes back in the answer.
    expect(await post('/sim/v1/reset', { seed: '\u0000'.repeat(1_000_000) })).toMatchObject(refused);
    expect(await post('/sim/v1/reset', { seed: 'x'.repeat(257) })).toMatchObject(refused);
    expect((await post('/sim/v1/reset', { seed: 'x'.repeat(256) })).json).toEqual({
      seed: 'x'.repeat(256),
      time_ms: 0,
    });
  });
});
