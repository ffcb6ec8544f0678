/**
 * The `view_*` ACLs on what the master shows, against real sockets: the
 * read endpoints behind HTTP Basic with `authenticateHttpReadonly` (realm
 * `mesos-master-readonly`), and every reader seeing the frameworks, tasks,
 * executors, roles and flags its principal may view, on the legacy
 * endpoints, the operator reads in both encodings, and the operator event
 * stream. A reader no rule names sees what a master without ACLs shows.
 *
 * The cluster: framework A (user `alice-user`, role `dev`) runs `a-plain`,
 * `a-hidden` (its command runs as `hidden-user`) and `a-exec` (a custom
 * executor); framework B (user `bob-user`, role `prod`) runs `b-plain`;
 * framework C (user `carol-user`) was torn down. One agent holds `cpus(prod):1`.
 * alice may view the frameworks of `alice-user` only, tasks of `alice-user`
 * only, no executor, the role `dev` only, and not the flags; bob and carol
 * are named by no rule, and `permissive` lets them see everything.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { parseResources, type Resources } from '../../src/core/model/resources.js';
import { READONLY_REALM } from '../../src/http/auth.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';
import { renderState, toV0Json } from '../../src/wire/v0/index.js';
import { operatorCall, OperatorStream, type Encoding, type Json } from './operator-harness.js';

const CREDENTIALS = {
  credentials: [
    { principal: 'alice', secret: 'a' },
    { principal: 'bob', secret: 'b' },
    { principal: 'carol', secret: 'c' },
  ],
};
const only = (principal: string, key: string, values: string[]) => [
  { principals: { values: [principal] }, [key]: { values } },
  { principals: { values: [principal] }, [key]: { type: 'NONE' } },
];
const ACLS = {
  permissive: true,
  view_frameworks: only('alice', 'users', ['alice-user']),
  view_tasks: only('alice', 'users', ['alice-user']),
  view_executors: [{ principals: { values: ['alice'] }, users: { type: 'NONE' } }],
  view_roles: only('alice', 'roles', ['dev']),
  view_flags: [{ principals: { values: ['alice'] }, flags: { type: 'NONE' } }],
};
const basic = (user: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
});
const ALICE = basic('alice', 'a');
const BOB = basic('bob', 'b');
const CHALLENGE = `Basic realm="${READONLY_REALM}"`;
const AGENT_RESOURCES = 'cpus:4;mem:4096;disk:4096;cpus(prod):1';

interface Scenario {
  readonly r: RunningCluster;
  /** Framework ids by letter. */
  readonly ids: { readonly A: string; readonly B: string; readonly C: string };
  readonly clients: { readonly A: SchedulerClient; readonly B: SchedulerClient };
}

const opened: RunningCluster[] = [];
async function start(options: StartClusterOptions): Promise<RunningCluster> {
  const r = await startCluster({
    port: 0,
    agents: 2,
    time: 'virtual',
    seed: 5,
    agentResources: AGENT_RESOURCES,
    weights: 'dev=2,prod=3',
    ...options,
  });
  opened.push(r);
  return r;
}
afterAll(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

async function subscribed(r: RunningCluster, headers: Record<string, string>, info: Json): Promise<SchedulerClient> {
  const client = new SchedulerClient(r.masterUrl, 'json', headers);
  expect((await client.subscribe(info)).status).toBe(200);
  await client.next('SUBSCRIBED');
  return client;
}

/** The next offers, letting virtual time run allocations until some come. */
async function offers(r: RunningCluster, client: SchedulerClient): Promise<Json[]> {
  await eventually(r, () => client.pending.some((e) => e.type === 'OFFERS'));
  return (await client.next('OFFERS', 100)).offers.offers as Json[];
}

const cpusMem = (cpus: number, role: string) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus }, allocation_info: { role } },
  { name: 'mem', type: 'SCALAR', scalar: { value: 32 }, allocation_info: { role } },
];

/** Lets virtual time run, a second at a time, until the condition holds. */
async function eventually(r: RunningCluster, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 30 && !condition(); i++) {
    r.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Launches the tasks on the first offer, declines the rest, and acknowledges until each runs. */
async function launch(r: RunningCluster, client: SchedulerClient, role: string, tasks: Json[]): Promise<void> {
  const [offer, ...rest] = await offers(r, client);
  const infos = tasks.map((t) => ({
    name: t.id,
    task_id: { value: t.id },
    agent_id: offer!.agent_id,
    resources: cpusMem(0.25, role),
    ...t.body,
  }));
  const operations = [{ type: 'LAUNCH', launch: { task_infos: infos } }];
  expect((await client.call({ type: 'ACCEPT', accept: { offer_ids: [offer!.id], operations } })).status).toBe(202);
  if (rest.length > 0)
    await client.call({
      type: 'DECLINE',
      decline: { offer_ids: rest.map((o) => o.id), filters: { refuse_seconds: 0 } },
    });
  const waiting = new Set(tasks.map((t) => t.id as string));
  while (waiting.size > 0) {
    const { status } = (await client.next((e) => e.type === 'UPDATE' && waiting.has(e.update.status.task_id.value)))
      .update;
    if (status.uuid !== undefined) {
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    }
    if (status.state === 'TASK_RUNNING') waiting.delete(status.task_id.value);
  }
}

async function scenario(options: StartClusterOptions = {}): Promise<Scenario> {
  const r = await start({ credentials: CREDENTIALS, acls: ACLS, authenticateHttpReadonly: true, ...options });
  const B = await subscribed(r, BOB, { user: 'bob-user', name: 'b', role: 'prod', principal: 'bob' });
  await launch(r, B, 'prod', [{ id: 'b-plain', body: { command: { value: 'sleep 3600' } } }]);
  const A = await subscribed(r, ALICE, { user: 'alice-user', name: 'a', role: 'dev', principal: 'alice' });
  await launch(r, A, 'dev', [
    { id: 'a-plain', body: { command: { value: 'sleep 3600' } } },
    { id: 'a-hidden', body: { command: { value: 'sleep 3600', user: 'hidden-user' } } },
    {
      id: 'a-exec',
      body: {
        executor: {
          executor_id: { value: 'exec-1' },
          command: { value: 'run-executor' },
          resources: cpusMem(0.1, 'dev'),
        },
      },
    },
  ]);
  const C = await subscribed(r, basic('carol', 'c'), { user: 'carol-user', name: 'c', principal: 'carol' });
  expect((await C.call({ type: 'TEARDOWN' })).status).toBe(202);
  return { r, ids: { A: A.frameworkId!, B: B.frameworkId!, C: C.frameworkId! }, clients: { A, B } };
}

async function getJson(r: RunningCluster, path: string, headers: Record<string, string> = {}): Promise<Json> {
  const res = await fetch(new URL(path, r.masterUrl), { headers });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Json;
}

const ids = (list: Json[]) => list.map((x) => x.id as string).sort();

describe('authenticateHttpReadonly', () => {
  it('asks for credentials on the read-only endpoints and /metrics/snapshot, in the realm mesos-master-readonly', async () => {
    const r = await start({ credentials: CREDENTIALS, authenticateHttpReadonly: true });
    const guarded = ['/state', '/state.json', '/state-summary', '/slaves', '/frameworks', '/tasks', '/roles', '/flags'];
    for (const path of [...guarded, ...guarded.map((p) => `/master${p}`), '/metrics/snapshot', '/master/tasks/']) {
      for (const headers of [{}, basic('alice', 'wrong')]) {
        const res = await fetch(new URL(path, r.masterUrl), { headers });
        expect([path, res.status, await res.text(), res.headers.get('www-authenticate')]).toEqual([
          path,
          401,
          '401 Unauthorized.',
          CHALLENGE,
        ]);
      }
      expect([path, (await fetch(new URL(path, r.masterUrl), { headers: ALICE })).status]).toEqual([path, 200]);
    }
    for (const path of ['/health', '/version', '/master/health'])
      expect((await fetch(new URL(path, r.masterUrl))).status).toBe(200);
    expect((await fetch(new URL('/redirect', r.masterUrl), { redirect: 'manual' })).status).toBe(307);
  });

  it('is off by default: with credentials alone the read endpoints stay open', async () => {
    const r = await start({ credentials: CREDENTIALS });
    for (const path of ['/state', '/flags', '/metrics/snapshot'])
      expect((await fetch(new URL(path, r.masterUrl))).status).toBe(200);
  });

  it('refuses to start without credentials, as upstream', async () => {
    await expect(start({ authenticateHttpReadonly: true })).rejects.toThrow(StartError);
    await expect(start({ authenticateHttpReadonly: true })).rejects.toThrow(
      /^authenticateHttpReadonly: needs credentials/,
    );
  });
});

describe('view ACLs on the legacy endpoints', () => {
  let s: Scenario;
  beforeAll(async () => {
    s = await scenario();
  });

  it('/state: a reader no rule names sees what the master shows without ACLs', async () => {
    const bob = await getJson(s.r, '/state', BOB);
    const everything = JSON.parse(toV0Json(renderState(s.r.cluster.view))) as Json;
    expect(bob).toEqual(everything);
    expect(ids(bob.frameworks)).toEqual([s.ids.A, s.ids.B].sort());
    expect(ids(bob.completed_frameworks)).toEqual([s.ids.C]);
    expect(bob.flags.weights).toBe('dev=2,prod=3');
    expect(bob.slaves.some((a: Json) => 'prod' in a.reserved_resources)).toBe(true);
  });

  it('/state: alice sees her framework with the tasks and no executor she may view, no flags, no reservation of prod', async () => {
    const state = await getJson(s.r, '/master/state', ALICE);
    expect(ids(state.frameworks)).toEqual([s.ids.A]);
    expect(state.completed_frameworks).toEqual([]);
    const [a] = state.frameworks as Json[];
    expect(ids(a!.tasks)).toEqual(['a-exec', 'a-plain']);
    // Upstream writes an executor the reader may not view as an empty object.
    expect(a!.executors).toEqual([{}]);
    expect('flags' in state).toBe(false);
    expect(state.slaves).toHaveLength(2);
    for (const agent of state.slaves as Json[]) expect(Object.keys(agent.reserved_resources)).toEqual([]);
  });

  it('/frameworks, /tasks and /state-summary leave out what alice may not view', async () => {
    const frameworks = await getJson(s.r, '/frameworks', ALICE);
    expect([ids(frameworks.frameworks), frameworks.completed_frameworks]).toEqual([[s.ids.A], []]);
    expect(ids((await getJson(s.r, `/frameworks?framework_id=${s.ids.B}`, BOB)).frameworks)).toEqual([s.ids.B]);
    expect((await getJson(s.r, `/frameworks?framework_id=${s.ids.B}`, ALICE)).frameworks).toEqual([]);
    expect(ids((await getJson(s.r, '/tasks', ALICE)).tasks)).toEqual(['a-exec', 'a-plain']);
    expect(ids((await getJson(s.r, '/tasks', BOB)).tasks)).toEqual(['a-exec', 'a-hidden', 'a-plain', 'b-plain']);
    expect((await getJson(s.r, '/tasks?task_id=a-hidden', ALICE)).tasks).toEqual([]);
    const summary = await getJson(s.r, '/state-summary', ALICE);
    expect(ids(summary.frameworks)).toEqual([s.ids.A]);
    expect(ids((await getJson(s.r, '/state-summary', BOB)).frameworks)).toEqual([s.ids.A, s.ids.B].sort());
  });

  it('/roles and /slaves show alice the role dev only', async () => {
    const names = (body: Json) => (body.roles as Json[]).map((role) => role.name as string);
    expect(names(await getJson(s.r, '/roles', ALICE))).toEqual(['dev']);
    expect(names(await getJson(s.r, '/roles', BOB))).toEqual(expect.arrayContaining(['dev', 'prod']));
    const roleOf = (res: Json) => res.allocation_info?.role ?? res.reservations?.at(-1)?.role ?? '*';
    for (const [reader, allowed] of [
      [ALICE, ['*', 'dev']],
      [BOB, ['*', 'dev', 'prod']],
    ] as const) {
      const slaves = (await getJson(s.r, '/slaves', reader)).slaves as Json[];
      const full = slaves.flatMap((a) => [
        ...a.used_resources_full,
        ...a.unreserved_resources_full,
        ...Object.values(a.reserved_resources_full).flat(),
      ]);
      expect([...new Set(full.map(roleOf))].sort()).toEqual(allowed);
    }
  });

  it('/flags: 403 to alice, 405 to a method other than GET, the flags to bob', async () => {
    const forbidden = await fetch(new URL('/flags', s.r.masterUrl), { headers: ALICE });
    expect([forbidden.status, await forbidden.text()]).toEqual([
      403,
      "Principal 'alice' is not authorized to view the flags",
    ]);
    const post = await fetch(new URL('/master/flags', s.r.masterUrl), { method: 'POST', headers: BOB });
    expect([post.status, post.headers.get('allow'), await post.text()]).toEqual([
      405,
      'GET',
      "405 Method Not Allowed. Expecting one of { 'GET' }, but received 'POST'.",
    ]);
    expect((await getJson(s.r, '/flags', BOB)).flags.allocation_interval).toBe('1secs');
  });
});

describe('view ACLs without authentication of the read endpoints', () => {
  it('ask as no principal (ANY): only rules for any principal decide', async () => {
    const r = await start({
      acls: {
        view_frameworks: [
          { principals: { type: 'ANY' }, users: { values: ['bob-user'] } },
          { principals: { type: 'ANY' }, users: { type: 'NONE' } },
        ],
      },
    });
    const client = await subscribed(r, {}, { user: 'alice-user', name: 'a' });
    expect((await getJson(r, '/frameworks')).frameworks).toEqual([]);
    // Credentials on an open endpoint are not looked at.
    expect((await getJson(r, '/frameworks', BOB)).frameworks).toEqual([]);
    const open = await start({});
    await subscribed(open, {}, { user: 'alice-user', name: 'a' });
    expect((await getJson(open, '/frameworks')).frameworks).toHaveLength(1);
    expect((await getJson(open, '/flags')).flags).toBeDefined();
    client.disconnect();
  });
});

describe.each<Encoding>(['json', 'protobuf'])('view ACLs on the operator reads in %s', (encoding) => {
  let s: Scenario;
  beforeAll(async () => {
    s = await scenario();
  });
  const call = async (headers: Record<string, string>, type: string) => {
    const answer = await operatorCall(s.r.masterUrl, { type }, encoding, '/api/v1', headers);
    return answer.response?.[type.toLowerCase()] as Json;
  };
  const frameworkIds = (list: Json[]) => list.map((f) => f.framework_info.id.value as string).sort();
  const taskIds = (list: Json[]) => list.map((t) => t.task_id.value as string).sort();

  it('GET_FRAMEWORKS, GET_TASKS and GET_EXECUTORS', async () => {
    const alice = await call(ALICE, 'GET_FRAMEWORKS');
    expect([frameworkIds(alice.frameworks), alice.completed_frameworks ?? []]).toEqual([[s.ids.A], []]);
    const bob = await call(BOB, 'GET_FRAMEWORKS');
    expect([frameworkIds(bob.frameworks), frameworkIds(bob.completed_frameworks)]).toEqual([
      [s.ids.A, s.ids.B].sort(),
      [s.ids.C],
    ]);
    expect(taskIds((await call(ALICE, 'GET_TASKS')).tasks)).toEqual(['a-exec', 'a-plain']);
    expect(taskIds((await call(BOB, 'GET_TASKS')).tasks)).toEqual(['a-exec', 'a-hidden', 'a-plain', 'b-plain']);
    expect((await call(ALICE, 'GET_EXECUTORS')).executors ?? []).toEqual([]);
    expect(
      ((await call(BOB, 'GET_EXECUTORS')).executors as Json[]).map((e) => e.executor_info.executor_id.value),
    ).toEqual(['exec-1']);
  });

  it('GET_STATE and GET_AGENTS: alice sees no resource of the role prod', async () => {
    const state = await call(ALICE, 'GET_STATE');
    expect(frameworkIds(state.get_frameworks.frameworks)).toEqual([s.ids.A]);
    expect(taskIds(state.get_tasks.tasks)).toEqual(['a-exec', 'a-plain']);
    expect(state.get_executors.executors ?? []).toEqual([]);
    const roles = (agents: Json[]) =>
      new Set(
        agents
          .flatMap((a) => [...a.agent_info.resources, ...a.total_resources, ...(a.allocated_resources ?? [])])
          .map((x: Json) => x.allocation_info?.role ?? x.reservations?.at(-1)?.role ?? '*'),
      );
    expect([...roles(state.get_agents.agents)].sort()).toEqual(['*', 'dev']);
    expect([...roles((await call(ALICE, 'GET_AGENTS')).agents)].sort()).toEqual(['*', 'dev']);
    expect([...roles((await call(BOB, 'GET_AGENTS')).agents)].sort()).toEqual(['*', 'dev', 'prod']);
  });

  it('GET_ROLES and GET_WEIGHTS show alice the role dev only', async () => {
    expect(((await call(ALICE, 'GET_ROLES')).roles as Json[]).map((r) => r.name)).toEqual(['dev']);
    expect(((await call(BOB, 'GET_ROLES')).roles as Json[]).map((r) => r.name)).toEqual(
      expect.arrayContaining(['dev', 'prod']),
    );
    expect((await call(ALICE, 'GET_WEIGHTS')).weight_infos).toEqual([{ role: 'dev', weight: 2 }]);
    expect((await call(BOB, 'GET_WEIGHTS')).weight_infos).toEqual([
      { role: 'dev', weight: 2 },
      { role: 'prod', weight: 3 },
    ]);
  });

  it('GET_OPERATIONS shows alice the operations whose consumed resources she may view', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS, agents: 1 });
    const reserve = async (headers: Record<string, string>, principal: string, role: string) => {
      const client = await subscribed(r, headers, { user: `${principal}-user`, name: role, role, principal });
      const [offer] = await offers(r, client);
      const cpus = { name: 'cpus', type: 'SCALAR', scalar: { value: 1 }, allocation_info: { role } };
      const op = {
        type: 'RESERVE',
        id: { value: `op-${role}` },
        reserve: { resources: [{ ...cpus, reservations: [{ type: 'DYNAMIC', role, principal }] }] },
      };
      expect(
        (
          await client.call({
            type: 'ACCEPT',
            accept: { offer_ids: [offer!.id], operations: [op], filters: { refuse_seconds: 3600 } },
          })
        ).status,
      ).toBe(202);
      await client.next('UPDATE_OPERATION_STATUS');
    };
    await reserve(BOB, 'bob', 'prod');
    await reserve(ALICE, 'alice', 'dev');
    const listed = async (headers: Record<string, string>) => {
      const answer = await operatorCall(r.masterUrl, { type: 'GET_OPERATIONS' }, encoding, '/api/v1', headers);
      return ((answer.response!.get_operations.operations ?? []) as Json[])
        .map((o) => o.info.id.value as string)
        .sort();
    };
    expect(await listed(ALICE)).toEqual(['op-dev']);
    expect(await listed(BOB)).toEqual(['op-dev', 'op-prod']);
  });

  it('GET_FLAGS: 403 to alice, the flags to bob', async () => {
    const refused = await operatorCall(s.r.masterUrl, { type: 'GET_FLAGS' }, encoding, '/api/v1', ALICE);
    expect([refused.status, refused.body]).toEqual([403, "Principal 'alice' is not authorized to view the flags"]);
    expect((await call(BOB, 'GET_FLAGS')).flags).toContainEqual({ name: 'allocation_interval', value: '1secs' });
  });
});

describe.each<Encoding>(['json', 'protobuf'])('view ACLs on the operator event stream in %s', (encoding) => {
  let streams: OperatorStream[] = [];
  afterEach(() => {
    for (const stream of streams) stream.close();
    streams = [];
  });
  const open = async (r: RunningCluster, headers: Record<string, string>) => {
    const stream = new OperatorStream(r.masterUrl, encoding, headers);
    streams.push(stream);
    await stream.open();
    return stream;
  };

  it('SUBSCRIBED holds what alice may view, and the events she may not view never reach her', async () => {
    const s = await scenario();
    const [alice, bob] = [await open(s.r, ALICE), await open(s.r, BOB)];
    const state = (await alice.next('SUBSCRIBED')).subscribed.get_state;
    expect(state.get_frameworks.frameworks.map((f: Json) => f.framework_info.id.value)).toEqual([s.ids.A]);
    expect(state.get_tasks.tasks.map((t: Json) => t.task_id.value).sort()).toEqual(['a-exec', 'a-plain']);
    expect((await bob.next('SUBSCRIBED')).subscribed.get_state.get_tasks.tasks).toHaveLength(4);

    const kill = (client: SchedulerClient, taskId: string) =>
      client.call({ type: 'KILL', kill: { task_id: { value: taskId } } });
    await kill(s.clients.B, 'b-plain');
    await kill(s.clients.A, 'a-hidden');
    await kill(s.clients.A, 'a-plain');
    const killedTask = (e: Json) => e.type === 'TASK_UPDATED' && e.task_updated.status.task_id.value;
    const killed = (stream: OperatorStream) => new Set(stream.events.map(killedTask).filter(Boolean));
    await eventually(s.r, () => killed(bob).size === 3);
    expect(killed(bob)).toEqual(new Set(['b-plain', 'a-hidden', 'a-plain']));
    const late = parseResources('cpus(prod):1;cpus:1;mem:128') as Resources;
    s.r.driver.input((c) =>
      c.addAgent({ hostname: 'late', ip: '127.0.0.1', port: 1, resources: late, attributes: [] }),
    );
    const D = await subscribed(s.r, BOB, { user: 'bob-user', name: 'd', principal: 'bob' });
    await D.call({ type: 'TEARDOWN' });
    const E = await subscribed(s.r, ALICE, { user: 'alice-user', name: 'e', principal: 'alice' });

    // Events go out in order: by E's FRAMEWORK_ADDED, each earlier one has arrived.
    const addedE = (e: Json) =>
      e.type === 'FRAMEWORK_ADDED' && e.framework_added.framework.framework_info.id.value === E.frameworkId;
    await alice.next(addedE);
    await bob.next(addedE);
    expect(killed(alice)).toEqual(new Set(['a-plain']));
    // Upstream filters the new agent's total resources by role for each subscriber.
    const lateTotal = (e: Json | undefined) =>
      (e?.agent_added.agent.total_resources as Json[]).map((x) => x.reservations?.at(-1)?.role ?? x.role ?? '*');
    expect(lateTotal(alice.events.find((e) => e.type === 'AGENT_ADDED'))).toEqual(['*', '*']);
    expect(lateTotal(bob.events.find((e) => e.type === 'AGENT_ADDED')).sort()).toEqual(['*', '*', 'prod']);
    for (const e of alice.events) {
      expect(['b-plain', 'a-hidden']).not.toContain(killedTask(e));
      expect(JSON.stringify(e)).not.toContain(D.frameworkId!);
      expect(JSON.stringify(e)).not.toContain(s.ids.B);
    }
    expect(
      bob.events.some(
        (e) => e.type === 'FRAMEWORK_REMOVED' && e.framework_removed.framework_info.id.value === D.frameworkId,
      ),
    ).toBe(true);
    E.disconnect();
  });
});
