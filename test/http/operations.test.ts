import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let running: RunningCluster;

beforeEach(async () => {
  running = await startCluster({
    port: 0,
    agents: 1,
    time: 'virtual',
    seed: 3,
    agentResources: 'cpus:2;mem:1024;disk:512;cpus(r1):1',
  });
});
afterEach(async () => {
  await running.close();
});

type Json = Record<string, any>;

async function subscribe(
  encoding: 'json' | 'protobuf',
  capabilities: string[],
): Promise<{ client: SchedulerClient; offer: Json }> {
  const client = new SchedulerClient(running.masterUrl, encoding);
  const info = {
    user: 'root',
    name: 'ops',
    principal: 'p',
    roles: ['r1'],
    capabilities: capabilities.map((type) => ({ type })),
  };
  expect((await client.subscribe(info)).status).toBe(200);
  const offers = await client.next('OFFERS');
  return { client, offer: offers.offers.offers[0] };
}

const cpus = (value: number, extra: Json = {}) => ({
  name: 'cpus',
  type: 'SCALAR',
  scalar: { value },
  allocation_info: { role: 'r1' },
  ...extra,
});

describe.each(['json', 'protobuf'] as const)('RESERVE over %s', (encoding) => {
  it('without RESERVATION_REFINEMENT: pre-refinement resources in, UPDATE_OPERATION_STATUS with a 16-byte uuid out, acknowledged', async () => {
    const { client, offer } = await subscribe(encoding, ['MULTI_ROLE']);
    const staticCpus = offer.resources.find((r: Json) => r.name === 'cpus' && r.role === 'r1');
    expect(staticCpus).toEqual(cpus(1, { role: 'r1' }));
    const accept = await client.call({
      type: 'ACCEPT',
      accept: {
        offer_ids: [offer.id],
        operations: [
          {
            type: 'RESERVE',
            id: { value: 'op-1' },
            reserve: { resources: [cpus(1, { role: 'r1', reservation: { principal: 'p' } })] },
          },
        ],
        filters: { refuse_seconds: 0 },
      },
    });
    expect(accept.status).toBe(202);
    const update = await client.next('UPDATE_OPERATION_STATUS');
    const status = update.update_operation_status.status;
    expect(status.operation_id).toEqual({ value: 'op-1' });
    expect(status.state).toBe('OPERATION_FINISHED');
    expect(status.agent_id).toEqual({ value: running.agents[0]!.id });
    expect(Buffer.from(status.uuid.value, 'base64')).toHaveLength(16);
    const ack = await client.call({
      type: 'ACKNOWLEDGE_OPERATION_STATUS',
      acknowledge_operation_status: {
        agent_id: status.agent_id,
        uuid: status.uuid.value,
        operation_id: status.operation_id,
      },
    });
    expect(ack.status).toBe(202);
    running.advance(2_000);
    const next = await client.next('OFFERS');
    const dynamic = next.offers.offers.flatMap((o: Json) => o.resources).find((r: Json) => r.reservation !== undefined);
    expect(dynamic).toEqual(cpus(1, { role: 'r1', reservation: { principal: 'p' } }));
    client.disconnect();
  });

  it('with RESERVATION_REFINEMENT: the reservations stack and no role', async () => {
    const { client, offer } = await subscribe(encoding, ['MULTI_ROLE', 'RESERVATION_REFINEMENT']);
    const reservedCpus = offer.resources.find((r: Json) => r.reservations !== undefined);
    expect(reservedCpus).toEqual(cpus(1, { reservations: [{ type: 'STATIC', role: 'r1' }] }));
    expect(offer.resources.every((r: Json) => r.role === undefined)).toBe(true);
    client.disconnect();
  });
});

describe('ACKNOWLEDGE_OPERATION_STATUS validation', () => {
  it('needs a 16-byte uuid and an agent_id', async () => {
    const { client } = await subscribe('json', ['MULTI_ROLE']);
    const shortUuid = await client.call({
      type: 'ACKNOWLEDGE_OPERATION_STATUS',
      acknowledge_operation_status: {
        agent_id: { value: 'a' },
        uuid: Buffer.alloc(4).toString('base64'),
        operation_id: { value: 'x' },
      },
    });
    expect(shortUuid.status).toBe(400);
    const noAgent = await client.call({
      type: 'ACKNOWLEDGE_OPERATION_STATUS',
      acknowledge_operation_status: { uuid: Buffer.alloc(16).toString('base64'), operation_id: { value: 'x' } },
    });
    expect(noAgent.status).toBe(400);
    expect(noAgent.body).toContain("Expecting 'agent_id' to be present");
    client.disconnect();
  });
});

describe('/slaves and /roles', () => {
  it('render reservations per role, in both forms in the full objects', async () => {
    const { client, offer } = await subscribe('json', ['MULTI_ROLE']);
    await client.call({
      type: 'ACCEPT',
      accept: {
        offer_ids: [offer.id],
        operations: [
          {
            type: 'RESERVE',
            reserve: { resources: [cpus(1, { reservations: [{ type: 'DYNAMIC', role: 'r1', principal: 'p' }] })] },
          },
        ],
      },
    });
    const slaves = (await (await fetch(`${running.masterUrl}/slaves`)).json()) as Json;
    const agent = slaves.slaves[0];
    expect(agent.reserved_resources.r1.cpus).toBe(2);
    expect(agent.unreserved_resources.cpus).toBe(1);
    const dynamic = agent.reserved_resources_full.r1.find((r: Json) => r.reservation !== undefined);
    expect(dynamic).toEqual({
      name: 'cpus',
      type: 'SCALAR',
      scalar: { value: 1 },
      role: 'r1',
      reservation: { principal: 'p' },
      reservations: [{ type: 'DYNAMIC', role: 'r1', principal: 'p' }],
    });
    const roles = (await (await fetch(`${running.masterUrl}/roles`)).json()) as Json;
    expect(roles.roles.find((r: Json) => r.name === 'r1').reserved).toEqual({ cpus: 2 });
    client.disconnect();
  });
});
