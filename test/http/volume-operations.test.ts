/**
 * Reservations and persistent volumes through the operator API and ACCEPT,
 * refused as upstream refuses them: a volume is created, used and destroyed
 * only whole, a volume is not unreserved directly, nothing is done with an
 * amount of nothing, and a refused call changes nothing (no offer rescinded,
 * no reservation or volume touched).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { operatorCall, type Json } from './operator-harness.js';

let running: RunningCluster;
let agent: Json;

beforeEach(async () => {
  running = await startCluster({
    port: 0,
    agents: 1,
    time: 'virtual',
    seed: 11,
    agentResources: 'cpus:2;mem:1024;disk:100',
  });
  agent = { agent_id: { value: running.agents[0]!.id } };
});
afterEach(async () => {
  await running.close();
});

const reservation = [{ type: 'DYNAMIC', role: 'db', principal: 'ops' }];
const scalar = (name: string, value: number, extra: Json = {}) => ({
  name,
  type: 'SCALAR',
  scalar: { value },
  ...extra,
});
const disk = (value: number) => scalar('disk', value, { reservations: reservation });
const vol = (value: number, id = 'v1', path = 'data') => ({
  ...disk(value),
  disk: { persistence: { id, principal: 'ops' }, volume: { container_path: path, mode: 'RW' } },
});

const call = (body: Json) => operatorCall(running.masterUrl, body, 'json');
const reserve = (resources: Json[]) => call({ type: 'RESERVE_RESOURCES', reserve_resources: { ...agent, resources } });
const unreserve = (resources: Json[]) =>
  call({ type: 'UNRESERVE_RESOURCES', unreserve_resources: { ...agent, resources } });
const create = (volumes: Json[]) => call({ type: 'CREATE_VOLUMES', create_volumes: { ...agent, volumes } });
const destroy = (volumes: Json[]) => call({ type: 'DESTROY_VOLUMES', destroy_volumes: { ...agent, volumes } });

/** The agent's reserved resources as `/slaves` lists them, each as `name:amount` with its volume id. */
async function reservedOnAgent(): Promise<string[]> {
  const slaves = (await (await fetch(`${running.masterUrl}/slaves`)).json()) as Json;
  const full = (slaves.slaves[0].reserved_resources_full.db ?? []) as Json[];
  return full
    .map((r) => `${r.name}${r.disk?.persistence ? `[${r.disk.persistence.id}]` : ''}:${r.scalar.value}`)
    .sort();
}

/** 100 disk reserved to `db`, 60 of it the volume `v1`. */
async function reserveAndCreate(): Promise<void> {
  expect((await reserve([disk(100)])).status).toBe(200);
  expect((await create([vol(60)])).status).toBe(200);
  expect(await reservedOnAgent()).toEqual(['disk:40', 'disk[v1]:60']);
}

describe('operator calls on a reservation holding a volume', () => {
  const refusals: [string, () => Promise<{ status: number; body: string }>, number, string][] = [
    ['DESTROY of part of a volume', () => destroy([vol(10)]), 400, 'Persistent volumes not found'],
    ['DESTROY naming more than the volume', () => destroy([vol(100)]), 400, 'Persistent volumes not found'],
    [
      'DESTROY of the volume at another path',
      () => destroy([vol(60, 'v1', 'elsewhere')]),
      400,
      'Persistent volumes not found',
    ],
    ['DESTROY of a volume the agent lacks', () => destroy([vol(60, 'v2')]), 400, 'Persistent volumes not found'],
    [
      'DESTROY of the volume in two halves',
      () => destroy([vol(30), vol(30)]),
      400,
      "persistent volume 'v1' is listed twice",
    ],
    [
      'CREATE of one volume in two entries',
      () => create([vol(5, 'v2'), vol(5, 'v2')]),
      400,
      "persistent volume 'v2' is listed twice",
    ],
    ['UNRESERVE naming the volume', () => unreserve([vol(60)]), 400, 'cannot be unreserved directly'],
    ["UNRESERVE of part of the volume's reservation", () => unreserve([disk(50)]), 409, 'does not contain'],
    ['UNRESERVE of all of the reservation', () => unreserve([disk(100)]), 409, 'does not contain'],
    ["CREATE over the volume's disk", () => create([vol(50, 'v2')]), 409, 'does not contain'],
    ['CREATE of the same persistence id', () => create([vol(10)]), 400, "Persistence ID 'v1' is not unique"],
    [
      'RESERVE of 0 cpus',
      () => reserve([scalar('cpus', 0, { reservations: reservation })]),
      400,
      'Operation contains no resources',
    ],
    [
      'RESERVE of 1e-300 cpus',
      () => reserve([scalar('cpus', 1e-300, { reservations: reservation })]),
      400,
      'is below 0.001',
    ],
    [
      'RESERVE of 0.0004 cpus',
      () => reserve([scalar('cpus', 0.0004, { reservations: reservation })]),
      400,
      'is below 0.001',
    ],
    [
      'RESERVE of -1 cpus',
      () => reserve([scalar('cpus', -1, { reservations: reservation })]),
      400,
      "Invalid scalar resource 'cpus': -1",
    ],
    ['RESERVE of nothing', () => reserve([]), 400, 'Operation contains no resources'],
    ['UNRESERVE of 0 disk', () => unreserve([disk(0)]), 400, 'Operation contains no resources'],
    ['CREATE of a volume of 1e-9', () => create([vol(1e-9, 'v2')]), 400, 'is below 0.001'],
    ['DESTROY of a volume of 0', () => destroy([vol(0)]), 400, 'Operation contains no resources'],
  ];

  it.each(refusals)('%s: refused with its reason, nothing changed', async (_name, act, status, reason) => {
    await reserveAndCreate();
    const answer = await act();
    expect([answer.status, answer.body]).toEqual([status, expect.stringContaining(reason)]);
    expect(answer.body).not.toContain('\n');
    expect(await reservedOnAgent()).toEqual(['disk:40', 'disk[v1]:60']);
  });

  it('the whole volume is destroyed, then the whole reservation unreserved', async () => {
    await reserveAndCreate();
    expect((await destroy([vol(60)])).status).toBe(200);
    expect(await reservedOnAgent()).toEqual(['disk:100']);
    expect((await unreserve([disk(100)])).status).toBe(200);
    expect(await reservedOnAgent()).toEqual([]);
  });
});

describe('a volume a task uses', () => {
  async function subscribe(): Promise<{ client: SchedulerClient; offer: Json }> {
    const client = new SchedulerClient(running.masterUrl);
    const info = {
      user: 'root',
      name: 'db',
      principal: 'ops',
      roles: ['db'],
      capabilities: [{ type: 'MULTI_ROLE' }, { type: 'RESERVATION_REFINEMENT' }],
    };
    expect((await client.subscribe(info)).status).toBe(200);
    const offers = await client.next('OFFERS');
    return { client, offer: offers.offers.offers[0] };
  }
  const allocated = (r: Json) => ({ ...r, allocation_info: { role: 'db' } });
  const task = (offer: Json, id: string, resources: Json[]) => ({
    name: id,
    task_id: { value: id },
    agent_id: offer.agent_id,
    resources: [allocated(scalar('cpus', 0.1)), allocated(scalar('mem', 32)), ...resources.map(allocated)],
    command: { value: 'sleep 1000' },
  });
  const launch = (client: SchedulerClient, offer: Json, tasks: Json[]) =>
    client.call({
      type: 'ACCEPT',
      accept: {
        offer_ids: [offer.id],
        operations: [{ type: 'LAUNCH', launch: { task_infos: tasks } }],
        filters: { refuse_seconds: 0 },
      },
    });

  it('cannot be destroyed by the operator while the task runs', async () => {
    await reserveAndCreate();
    const { client, offer } = await subscribe();
    expect((await launch(client, offer, [task(offer, 't1', [vol(60)])])).status).toBe(202);
    const update = await client.next('UPDATE');
    expect(update.update.status.state).toBe('TASK_STARTING');
    const answer = await destroy([vol(60)]);
    expect([answer.status, answer.body]).toEqual([400, expect.stringContaining('Persistent volumes in use')]);
    expect(await reservedOnAgent()).toEqual(['disk:40', 'disk[v1]:60']);
    client.disconnect();
  });

  it('cannot be used in part by a task: the launch fails, the volume stays whole', async () => {
    await reserveAndCreate();
    const { client, offer } = await subscribe();
    expect((await launch(client, offer, [task(offer, 't1', [vol(10)])])).status).toBe(202);
    const update = await client.next('UPDATE');
    expect([update.update.status.state, update.update.status.message]).toEqual([
      'TASK_ERROR',
      expect.stringContaining('Task uses more resources'),
    ]);
    expect(await reservedOnAgent()).toEqual(['disk:40', 'disk[v1]:60']);
    client.disconnect();
  });

  it('cannot be destroyed in part through ACCEPT: OPERATION_ERROR, the volume stays whole', async () => {
    await reserveAndCreate();
    const { client, offer } = await subscribe();
    const part = { type: 'DESTROY', id: { value: 'op-1' }, destroy: { volumes: [allocated(vol(10))] } };
    expect((await client.call({ type: 'ACCEPT', accept: { offer_ids: [offer.id], operations: [part] } })).status).toBe(
      202,
    );
    const status = (await client.next('UPDATE_OPERATION_STATUS')).update_operation_status.status;
    expect([status.state, status.message]).toEqual(['OPERATION_ERROR', 'Persistent volumes not found']);
    expect(await reservedOnAgent()).toEqual(['disk:40', 'disk[v1]:60']);
    client.disconnect();
  });
});
