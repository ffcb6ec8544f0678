/**
 * Quota, weights and reservations through the operator API, in both
 * encodings: every rule of the specification's Quota section with
 * upstream's statuses and texts, the two GET_QUOTA shapes, `/roles`, the
 * quota metrics, and authorization of UPDATE_QUOTA.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { MEDIA, encodeCall, operatorCall, postBinary, type Encoding, type Json } from './operator-harness.js';

let running: RunningCluster | undefined;

async function start(options: StartClusterOptions = {}): Promise<RunningCluster> {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 5, ...options });
  return running;
}

afterEach(async () => {
  await running?.close();
  running = undefined;
});

const limits = (role: string, values: Record<string, number>, guarantees: Record<string, number> = {}) => ({
  role,
  limits: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v }])),
  guarantees: Object.fromEntries(Object.entries(guarantees).map(([k, v]) => [k, { value: v }])),
});

const updateQuota = (configs: Json[], force = false) => ({
  type: 'UPDATE_QUOTA',
  update_quota: { force, quota_configs: configs },
});

describe.each<Encoding>(['json', 'protobuf'])('quota and weights over %s', (encoding) => {
  const call = (body: Json) => operatorCall(running!.masterUrl, body, encoding);

  it('UPDATE_QUOTA answers an empty 200, and GET_QUOTA shows both shapes', async () => {
    await start();
    const res = await call(updateQuota([limits('dev', { cpus: 2, mem: 1024 }, { cpus: 1 }), limits('*', { gpus: 0 })]));
    expect([res.status, res.body, res.headers['content-type']]).toEqual([200, '', undefined]);
    const got = await call({ type: 'GET_QUOTA' });
    expect([got.status, got.headers['content-type']]).toEqual([200, MEDIA[encoding]]);
    const dev = {
      role: 'dev',
      guarantees: { cpus: { value: 1 } },
      limits: { cpus: { value: 2 }, mem: { value: 1024 } },
    };
    const star = { role: '*', limits: { gpus: { value: 0 } } };
    expect(got.response!.get_quota.status.configs).toEqual([star, dev]);
    expect(got.response!.get_quota.status.infos).toEqual([
      { role: '*', configs: [star] },
      { role: 'dev', guarantee: [{ name: 'cpus', type: 'SCALAR', scalar: { value: 1 } }], configs: [dev] },
    ]);
  });

  it('refuses nested roles, non-scalar resources and bad values with 400 and upstream texts, changing nothing', async () => {
    await start();
    const cases: [Json, string][] = [
      [updateQuota([limits('a/b', { cpus: 1 })]), "Updating quota on nested role 'a/b' is not supported yet"],
      [
        updateQuota([limits('ok', { cpus: 1 }), limits('dev', { ports: 5 })]),
        "Invalid QuotaConfig: Invalid limit configuration {'ports': 5}: quota supports only scalar resources, and 'ports' is of type RANGES",
      ],
      [
        updateQuota([limits('dev', { cpus: -1 })]),
        "Invalid QuotaConfig: Invalid limit configuration {'cpus': -1}: Negative values not supported",
      ],
      [
        updateQuota([limits('dev', { cpus: 1 }, { cpus: 2 })]),
        "Invalid QuotaConfig: 'QuotaConfig.guarantees' { cpus: 2 } is not contained within the 'QuotaConfig.limits' { cpus: 1 }",
      ],
      [
        updateQuota([limits('dev', { cpus: 100 }, { cpus: 100 })]),
        "Invalid QuotaConfig: total quota guarantees 'cpus:100' exceed cluster capacity 'cpus:8; disk:32768; mem:16384' (use 'force' flag to bypass this check)",
      ],
    ];
    for (const [body, text] of cases) {
      const res = await call(body);
      expect([res.status, res.body]).toEqual([400, text]);
    }
    expect((await call({ type: 'GET_QUOTA' })).response!.get_quota.status).toEqual({});
  });

  it('denies a limit below consumption unless forced; empty limits reset the role', async () => {
    await start({ agents: 1 });
    await launch(running!, 'dev', 2);
    const denied = await call(updateQuota([limits('dev', { cpus: 1 })]));
    expect([denied.status, denied.body]).toEqual([
      400,
      "Invalid QuotaConfig: Role 'dev' is already consuming 'cpus:2; mem:64'; this is more than the requested limits 'cpus:1' (use 'force' flag to bypass this check)",
    ]);
    expect((await call(updateQuota([limits('dev', { cpus: 1 })], true))).status).toBe(200);
    const roles = (await (await fetch(`${running!.masterUrl}/roles`)).json()) as Json;
    expect(roles.roles.find((r: Json) => r.name === 'dev').quota).toEqual({
      role: 'dev',
      guarantee: {},
      limit: { cpus: 1 },
      consumed: { cpus: 2, mem: 64 },
    });
    const metrics = (await (await fetch(`${running!.masterUrl}/metrics/snapshot`)).json()) as Json;
    expect(metrics['allocator/cluster/quota/roles/dev/resources/cpus/limit']).toBe(1);
    expect((await call(updateQuota([limits('dev', {})]))).status).toBe(200);
    expect((await call({ type: 'GET_QUOTA' })).response!.get_quota.status).toEqual({});
  });

  it('UPDATE_WEIGHTS validates all entries first; GET_WEIGHTS and /roles show the weights', async () => {
    await start({ weights: 'ops=2' });
    const bad = await call({
      type: 'UPDATE_WEIGHTS',
      update_weights: {
        weight_infos: [
          { role: 'dev', weight: 3 },
          { role: 'x', weight: -1 },
        ],
      },
    });
    expect([bad.status, bad.body]).toEqual([
      400,
      "Failed to validate update weights request JSON for role 'x': Invalid weight '-1': Weights must be positive",
    ]);
    expect(
      (await call({ type: 'UPDATE_WEIGHTS', update_weights: { weight_infos: [{ role: 'dev', weight: 3 }] } })).status,
    ).toBe(200);
    const got = (await call({ type: 'GET_WEIGHTS' })).response!;
    expect(got).toEqual({
      type: 'GET_WEIGHTS',
      get_weights: {
        weight_infos: [
          { weight: 3, role: 'dev' },
          { weight: 2, role: 'ops' },
        ],
      },
    });
    const roles = (await call({ type: 'GET_ROLES' })).response!.get_roles.roles as Json[];
    expect(roles.map((r) => [r.name, r.weight])).toEqual([
      ['dev', 3],
      ['ops', 2],
    ]);
  });

  it('RESERVE_RESOURCES, CREATE_VOLUMES, DESTROY_VOLUMES, UNRESERVE_RESOURCES change the agent', async () => {
    await start({ agents: 1 });
    const agentId = running!.agents[0]!.id;
    const reserved = [
      {
        name: 'disk',
        type: 'SCALAR',
        scalar: { value: 100 },
        reservations: [{ type: 'DYNAMIC', role: 'db', principal: 'ops' }],
      },
    ];
    const volume = [
      {
        ...reserved[0],
        disk: { persistence: { id: 'v1', principal: 'ops' }, volume: { container_path: 'data', mode: 'RW' } },
      },
    ];
    const agent = { agent_id: { value: agentId } };
    expect(
      (await call({ type: 'RESERVE_RESOURCES', reserve_resources: { ...agent, resources: reserved } })).status,
    ).toBe(200);
    expect((await call({ type: 'CREATE_VOLUMES', create_volumes: { ...agent, volumes: volume } })).status).toBe(200);
    const slaves = (await (await fetch(`${running!.masterUrl}/slaves`)).json()) as Json;
    expect(slaves.slaves[0].reserved_resources.db.disk).toBe(100);
    expect((await call({ type: 'DESTROY_VOLUMES', destroy_volumes: { ...agent, volumes: volume } })).status).toBe(200);
    expect(
      (await call({ type: 'UNRESERVE_RESOURCES', unreserve_resources: { ...agent, resources: reserved } })).status,
    ).toBe(200);
    const again = await call({ type: 'UNRESERVE_RESOURCES', unreserve_resources: { ...agent, resources: reserved } });
    expect(again.status).toBe(409);
    const after = (await (await fetch(`${running!.masterUrl}/slaves`)).json()) as Json;
    expect(after.slaves[0].reserved_resources).toEqual({});
  });
});

describe.each<Encoding>(['json', 'protobuf'])('GET_OPERATIONS over %s', (encoding) => {
  it("lists a framework's operation until its status is acknowledged", async () => {
    const r = await start({ agents: 1 });
    const { SchedulerClient } = await import('../../src/client/scheduler-client.js');
    const client = new SchedulerClient(r.masterUrl);
    await client.subscribe({
      user: 'u',
      name: 'db',
      principal: 'ops',
      roles: ['db'],
      capabilities: [{ type: 'MULTI_ROLE' }, { type: 'RESERVATION_REFINEMENT' }],
    });
    await client.next('SUBSCRIBED');
    const offer = (await client.next('OFFERS')).offers.offers[0];
    const cpus = { name: 'cpus', type: 'SCALAR', scalar: { value: 1 }, allocation_info: { role: 'db' } };
    const reserve = {
      type: 'RESERVE',
      id: { value: 'op-1' },
      reserve: { resources: [{ ...cpus, reservations: [{ type: 'DYNAMIC', role: 'db', principal: 'ops' }] }] },
    };
    expect(
      (await client.call({ type: 'ACCEPT', accept: { offer_ids: [offer.id], operations: [reserve] } })).status,
    ).toBe(202);
    const update = (await client.next('UPDATE_OPERATION_STATUS')).update_operation_status.status;
    expect(update).toMatchObject({ operation_id: { value: 'op-1' }, state: 'OPERATION_FINISHED' });
    const listed = (await operatorCall(r.masterUrl, { type: 'GET_OPERATIONS' }, encoding)).response!.get_operations
      .operations as Json[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      framework_id: { value: client.frameworkId },
      info: { type: 'RESERVE', id: { value: 'op-1' } },
      latest_status: { state: 'OPERATION_FINISHED' },
    });
    const ack = { agent_id: update.agent_id, uuid: update.uuid.value, operation_id: update.operation_id.value };
    expect(
      (await client.call({ type: 'ACKNOWLEDGE_OPERATION_STATUS', acknowledge_operation_status: ack })).status,
    ).toBe(202);
    r.advance(0);
    expect((await operatorCall(r.masterUrl, { type: 'GET_OPERATIONS' }, encoding)).response!.get_operations).toEqual(
      {},
    );
  });
});

describe('UPDATE_QUOTA with credentials and ACLs', () => {
  it('one role the principal may not change refuses the whole request with 403', async () => {
    const acls = {
      update_quotas: [
        { principals: { values: ['ops'] }, roles: { values: ['dev'] } },
        { principals: { values: ['ops'] }, roles: { type: 'NONE' } },
      ],
    };
    await start({ credentials: { credentials: [{ principal: 'ops', secret: 'pw' }] }, acls });
    const post = (body: Json, auth?: string) =>
      postBinary(new URL('/api/v1', running!.masterUrl), encodeCall(body, 'json'), {
        'content-type': 'application/json',
        ...(auth === undefined ? {} : { authorization: `Basic ${Buffer.from(auth).toString('base64')}` }),
      });
    expect((await post(updateQuota([limits('dev', { cpus: 1 })]))).status).toBe(401);
    expect((await post(updateQuota([limits('dev', { cpus: 1 })]), 'ops:pw')).status).toBe(200);
    const refused = await post(updateQuota([limits('dev', { cpus: 2 }), limits('prod', { cpus: 1 })]), 'ops:pw');
    expect([refused.status, refused.bytes.toString()]).toEqual([
      403,
      "Principal 'ops' is not authorized to update the quota of role 'prod'",
    ]);
    expect(running!.cluster.view.quotas().map((q) => [q.role, q.limits.get('cpus')])).toEqual([['dev', 1000]]);
  });
});

/** A framework of `role` runs a task of `cpus` cpus and 64 MB; resolves once the launch is accepted. */
async function launch(r: RunningCluster, role: string, cpus: number): Promise<void> {
  const { SchedulerClient } = await import('../../src/client/scheduler-client.js');
  const client = new SchedulerClient(r.masterUrl);
  await client.subscribe({ user: 'u', name: 'q', roles: [role], capabilities: [{ type: 'MULTI_ROLE' }] });
  await client.next('SUBSCRIBED');
  const offer = (await client.next('OFFERS')).offers.offers[0];
  const task = {
    name: 't',
    task_id: { value: 't' },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: cpus }, allocation_info: { role } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 64 }, allocation_info: { role } },
    ],
    command: { value: 'sleep 3600' },
  };
  const res = await client.call({
    type: 'ACCEPT',
    accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
  });
  expect(res.status).toBe(202);
}
