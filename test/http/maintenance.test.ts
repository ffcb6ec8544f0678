/**
 * Maintenance, as upstream's master serves it: the `/maintenance/*` and
 * `/machine/*` endpoints, the operator calls in both encodings, offers
 * carrying the unavailability of their agent's machine, inverse offers and
 * their answers, and machines going down and up.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { operatorCall, postRaw, type Encoding, type Json } from './operator-harness.js';

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 7 });
});
afterEach(async () => {
  await running.close();
});

/** Every agent of a cluster on loopback ports runs on this machine. */
const MACHINE = { hostname: '127.0.0.1', ip: '127.0.0.1' };
const OTHER = { hostname: 'db-1', ip: '10.0.0.1' };
const START_NS = 1_900_000_000_000_000_000;
const window = (machines: Json[], durationNs = 3_600_000_000_000) => ({
  machine_ids: machines,
  unavailability: { start: { nanoseconds: START_NS }, duration: { nanoseconds: durationNs } },
});

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(new URL(path, running.masterUrl));
  return { status: res.status, body: await res.text() };
}

async function post(path: string, body: unknown): Promise<{ status: number; body: string }> {
  const res = await postRaw(new URL(path, running.masterUrl), JSON.stringify(body), {
    'content-type': 'application/json',
  });
  return { status: res.status, body: res.body };
}

describe('the maintenance endpoints', () => {
  it('answer an empty schedule and status with {}, and read back a schedule as it was written', async () => {
    expect(await get('/master/maintenance/schedule')).toEqual({ status: 200, body: '{}' });
    expect(await get('/master/maintenance/status')).toEqual({ status: 200, body: '{}' });
    const schedule = { windows: [window([MACHINE]), window([OTHER], 60_000_000_000)] };
    expect((await post('/master/maintenance/schedule', schedule)).status).toBe(200);
    expect(JSON.parse((await get('/maintenance/schedule')).body)).toEqual(schedule);
    expect(JSON.parse((await get('/master/maintenance/status')).body)).toEqual({
      draining_machines: [{ id: MACHINE }, { id: OTHER }],
    });
  });

  it('refuse a schedule as upstream validates it, with one-line reasons', async () => {
    const cases: [unknown, string][] = [
      [{ windows: [window([])] }, 'List of machines in the maintenance window is empty'],
      [{ windows: [window([MACHINE], -1)] }, "Unavailability 'duration' is negative"],
      [{ windows: [window([{}])] }, "Both 'hostname' and 'ip' for a machine are empty"],
      [{ windows: [window([{ ip: '10.0.0' }])] }, 'Failed to parse IPv4: 10.0.0'],
      [
        { windows: [window([MACHINE]), window([MACHINE])] },
        'Machine \'hostname: "127.0.0.1" ip: "127.0.0.1" \' appears more than once in the schedule',
      ],
    ];
    for (const [schedule, reason] of cases)
      expect(await post('/master/maintenance/schedule', schedule)).toEqual({ status: 400, body: reason });
    expect((await post('/master/maintenance/schedule', { windows: [{ machine_ids: [MACHINE] }] })).status).toBe(400);
    expect(await get('/master/maintenance/schedule')).toEqual({ status: 200, body: '{}' });
  });

  it('bring DRAINING machines down and DOWN machines up, in upstream order and words', async () => {
    expect(await post('/master/machine/down', [])).toEqual({ status: 400, body: 'List of machines is empty' });
    expect(await post('/master/machine/down', [OTHER])).toEqual({
      status: 400,
      body: 'Machine \'{"hostname":"db-1","ip":"10.0.0.1"}\' is not part of a maintenance schedule',
    });
    expect((await post('/master/maintenance/schedule', { windows: [window([MACHINE, OTHER])] })).status).toBe(200);
    expect(await post('/master/machine/up', [OTHER])).toEqual({
      status: 400,
      body: 'Machine \'{"hostname":"db-1","ip":"10.0.0.1"}\' is not in DOWN mode and cannot be brought up',
    });
    expect((await post('/master/machine/down', [OTHER])).status).toBe(200);
    expect(await post('/master/machine/down', [OTHER])).toEqual({
      status: 400,
      body: 'Machine \'{"hostname":"db-1","ip":"10.0.0.1"}\' is not in DRAINING mode and cannot be brought down',
    });
    expect(JSON.parse((await get('/master/maintenance/status')).body)).toEqual({
      draining_machines: [{ id: MACHINE }],
      down_machines: [OTHER],
    });
    expect(await post('/master/maintenance/schedule', { windows: [window([MACHINE])] })).toEqual({
      status: 400,
      body: 'Machine \'hostname: "db-1" ip: "10.0.0.1" \' is deactivated and cannot be removed from the schedule',
    });
    expect((await post('/master/machine/up', [OTHER])).status).toBe(200);
    expect(JSON.parse((await get('/master/maintenance/schedule')).body)).toEqual({ windows: [window([MACHINE])] });
    expect((await get('/master/machine/down')).status).toBe(405);
    expect((await fetch(new URL('/master/maintenance/status', running.masterUrl), { method: 'POST' })).status).toBe(
      405,
    );
  });
});

describe.each(['json', 'protobuf'] as Encoding[])('maintenance in %s', (encoding) => {
  const call = (body: Json) => operatorCall(running.masterUrl, body, encoding);

  it('UPDATE_MAINTENANCE_SCHEDULE, GET_MAINTENANCE_SCHEDULE, START_ and STOP_MAINTENANCE, GET_MAINTENANCE_STATUS', async () => {
    const schedule = { windows: [window([OTHER])] };
    expect(
      (await call({ type: 'UPDATE_MAINTENANCE_SCHEDULE', update_maintenance_schedule: { schedule } })).status,
    ).toBe(200);
    expect((await call({ type: 'GET_MAINTENANCE_SCHEDULE' })).response).toEqual({
      type: 'GET_MAINTENANCE_SCHEDULE',
      get_maintenance_schedule: { schedule },
    });
    const refused = await call({ type: 'STOP_MAINTENANCE', stop_maintenance: { machines: [OTHER] } });
    expect([refused.status, refused.body]).toEqual([
      400,
      'Machine \'{"hostname":"db-1","ip":"10.0.0.1"}\' is not in DOWN mode and cannot be brought up',
    ]);
    expect((await call({ type: 'START_MAINTENANCE', start_maintenance: { machines: [OTHER] } })).status).toBe(200);
    expect((await call({ type: 'GET_MAINTENANCE_STATUS' })).response).toEqual({
      type: 'GET_MAINTENANCE_STATUS',
      get_maintenance_status: { status: { down_machines: [OTHER] } },
    });
    expect((await call({ type: 'STOP_MAINTENANCE', stop_maintenance: { machines: [OTHER] } })).status).toBe(200);
    expect((await call({ type: 'GET_MAINTENANCE_SCHEDULE' })).response!.get_maintenance_schedule).toEqual({
      schedule: {},
    });
  });

  it('offers carry the unavailability; a framework using the machine gets inverse offers, answers them with filters, and loses its tasks when it goes down', async () => {
    const client = new SchedulerClient(running.masterUrl, encoding);
    expect((await client.subscribe({ user: 'ops', name: 'drain' })).status).toBe(200);
    await client.next('SUBSCRIBED');
    const first = (await client.next('OFFERS')).offers.offers;
    expect(first[0].unavailability).toBeUndefined();
    await client.launch(first[0], { taskId: 't-1', command: 'sleep 3600' });
    for (;;) {
      const update = await client.nextUpdate('t-1');
      await client.acknowledge(update.update.status);
      if (update.update.status.state === 'TASK_RUNNING') break;
    }
    const schedule = { windows: [window([MACHINE])] };
    expect(
      (await call({ type: 'UPDATE_MAINTENANCE_SCHEDULE', update_maintenance_schedule: { schedule } })).status,
    ).toBe(200);
    await client.next('RESCIND');
    const inverse = (await client.next('INVERSE_OFFERS')).inverse_offers.inverse_offers;
    expect(inverse).toHaveLength(1);
    expect(inverse[0]).toMatchObject({
      framework_id: { value: client.frameworkId },
      agent_id: first[0].agent_id,
      unavailability: window([MACHINE]).unavailability,
    });
    const frameworks = (await call({ type: 'GET_FRAMEWORKS' })).response!.get_frameworks.frameworks;
    expect(frameworks[0].inverse_offers.map((io: Json) => io.id)).toEqual([inverse[0].id]);
    running.advance(6_000);
    const later = (await client.next('OFFERS')).offers.offers;
    expect(later[0].unavailability).toEqual(window([MACHINE]).unavailability);

    expect((await client.declineInverseOffers(inverse[0], { refuse_seconds: 30 })).status).toBe(202);
    const status = (await call({ type: 'GET_MAINTENANCE_STATUS' })).response!.get_maintenance_status.status;
    expect(status.draining_machines[0].statuses).toEqual([
      { status: 'DECLINE', framework_id: { value: client.frameworkId }, timestamp: expect.anything() },
    ]);
    running.advance(20_000);
    expect(client.pending.some((e) => e.type === 'INVERSE_OFFERS')).toBe(false);
    running.advance(11_000);
    const again = (await client.next('INVERSE_OFFERS')).inverse_offers.inverse_offers;
    expect(again[0].id.value).not.toBe(inverse[0].id.value);
    expect((await client.acceptInverseOffers(again[0])).status).toBe(202);
    const accepted = (await call({ type: 'GET_MAINTENANCE_STATUS' })).response!.get_maintenance_status.status;
    expect(accepted.draining_machines[0].statuses[0].status).toBe('ACCEPT');

    expect((await call({ type: 'START_MAINTENANCE', start_maintenance: { machines: [MACHINE] } })).status).toBe(200);
    const lost = (await client.nextUpdate('t-1')).update.status;
    expect(lost).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_MASTER',
      reason: 'REASON_AGENT_REMOVED',
      message: "Slave 127.0.0.1 removed: Operator initiated 'Machine DOWN'",
    });
    await client.next('FAILURE');
    const agents = (await call({ type: 'GET_AGENTS' })).response!.get_agents.agents ?? [];
    expect(agents).toHaveLength(0);
    client.close();
  });
});

describe('maintenance and the ACLs', () => {
  it('a reader refused the get actions sees nothing; a principal refused stop_maintenances hears 403', async () => {
    await running.close();
    const none = { principals: { type: 'ANY' }, machines: { type: 'NONE' } };
    const acls = {
      get_maintenance_schedules: [none],
      get_maintenance_statuses: [none],
      stop_maintenances: [none],
    };
    running = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, acls });
    expect((await post('/master/maintenance/schedule', { windows: [window([OTHER])] })).status).toBe(200);
    expect(await get('/master/maintenance/schedule')).toEqual({ status: 200, body: '{}' });
    expect(await get('/master/maintenance/status')).toEqual({ status: 200, body: '{}' });
    const refused = await post('/master/machine/up', [OTHER]);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('stop maintenance');
  });
});

describe('maintenance and authentication', () => {
  it('the endpoints are in the read-write realm: 401 without credentials, answered with them', async () => {
    await running.close();
    const credentials = { credentials: [{ principal: 'ops', secret: 's3cret' }] };
    running = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, credentials });
    for (const path of ['/maintenance/schedule', '/master/maintenance/status']) {
      const res = await fetch(new URL(path, running.masterUrl));
      expect([path, res.status, res.headers.get('www-authenticate')]).toEqual([
        path,
        401,
        'Basic realm="mesos-master-readwrite"',
      ]);
    }
    const authorization = `Basic ${Buffer.from('ops:s3cret').toString('base64')}`;
    const res = await fetch(new URL('/master/maintenance/schedule', running.masterUrl), { headers: { authorization } });
    expect([res.status, await res.text()]).toEqual([200, '{}']);
  });
});

describe('maintenance and several masters', () => {
  it('a standby answers 307 to the leader; the schedule survives the leader', async () => {
    await running.close();
    running = await startCluster({ port: 0, agents: 1, masters: 2, time: 'virtual', seed: 7 });
    const [leader, standby] = running.masterUrls as [string, string];
    const redirected = await fetch(new URL('/master/maintenance/schedule', standby), { redirect: 'manual' });
    expect(redirected.status).toBe(307);
    const schedule = { windows: [window([OTHER])] };
    const res = await postRaw(new URL('/master/maintenance/schedule', leader), JSON.stringify(schedule), {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(200);
    await fetch(new URL('/sim/v1/faults', leader), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'master_failover' }),
    });
    running.advance(60_000);
    const index = running.driver.read((view) => view.leaderIndex())!;
    const read = await fetch(new URL('/master/maintenance/schedule', running.masterUrls[index]));
    expect(JSON.parse(await read.text())).toEqual(schedule);
  });
});
