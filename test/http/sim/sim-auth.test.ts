/**
 * The control API (`/sim/v1/`) behind the cluster's authentication, over
 * real sockets: open while no authentication is on; with `credentials`
 * every route asks for HTTP Basic (the reads in the realm
 * mesos-master-readonly, the changes in mesos-master-readwrite), the
 * changes need the ACL action `control_simulation` (refused: 403 and
 * nothing changed), and the trace, the events and the misuse report show
 * each reader only what its `view_*` rules let it see.
 *
 * The cluster of the reads: alice's framework (user `alice-user`, a label
 * `alice-secret-label`) runs `a-task`; bob's (user `bob-user`) runs
 * `b-task`. bob may view `bob-user`'s frameworks, tasks and executors only;
 * alice is named by no view rule and, the ACLs being permissive, sees all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { READONLY_REALM, READWRITE_REALM } from '../../../src/http/auth.js';
import { simReaderOf } from '../../../src/wire/sim/view.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';
import type { Json } from '../operator-harness.js';

const CREDENTIALS = {
  credentials: [
    { principal: 'alice', secret: 'a' },
    { principal: 'bob', secret: 'b' },
    { principal: 'ops', secret: 'o' },
  ],
};
const basic = (user: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
});
const ALICE = basic('alice', 'a');
const BOB = basic('bob', 'b');
const OPS = basic('ops', 'o');

/** Every route of the control API, with a body it takes. */
const READS = ['/sim/v1/clock', '/sim/v1/trace', '/sim/v1/events', '/sim/v1/misuse', '/sim/v1/agents'];
const CHANGES: [string, Json][] = [
  ['/sim/v1/advance', { ms: 1000 }],
  ['/sim/v1/faults', { type: 'crash_master' }],
  ['/sim/v1/run_until_idle', { max_ms: 1000 }],
  ['/sim/v1/run_until', { condition: { agents: { state: 'active', min: 5 } }, max_ms: 1000 }],
  ['/sim/v1/reset', { seed: 9 }],
  ['/sim/v1/snapshot', {}],
  ['/sim/v1/restore', { snapshot_id: 'snapshot-1' }],
];

const opened: RunningCluster[] = [];
async function start(options: StartClusterOptions): Promise<RunningCluster> {
  const r = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 3, ...options });
  opened.push(r);
  return r;
}
afterAll(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly challenge: string | null;
}

/** A request's status, its body (a stream's first bytes only) and its challenge. */
async function request(r: RunningCluster, path: string, headers: Record<string, string>, body?: Json): Promise<Answer> {
  const controller = new AbortController();
  const init =
    body === undefined
      ? { headers }
      : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(new URL(path, r.masterUrl), { ...init, signal: controller.signal });
  const streaming = res.status === 200 && (path === '/sim/v1/trace' || path === '/sim/v1/events');
  const text = streaming ? new TextDecoder().decode((await res.body!.getReader().read()).value) : await res.text();
  controller.abort();
  return { status: res.status, body: text, challenge: res.headers.get('www-authenticate') };
}

const clockMs = async (r: RunningCluster): Promise<number> =>
  JSON.parse((await request(r, '/sim/v1/clock', OPS)).body).time_ms as number;

describe('the control API without authentication', () => {
  it('serves every route to anyone, as before', async () => {
    const r = await start({});
    for (const path of READS) expect((await request(r, path, {})).status, path).toBe(200);
    for (const [path, body] of CHANGES.filter(([p]) => p !== '/sim/v1/faults'))
      expect((await request(r, path, {}, body)).status, path).toBe(200);
  });
});

describe('the control API with credentials', () => {
  it('asks every route for credentials: the reads in the read-only realm, the changes in the read-write one', async () => {
    const r = await start({ credentials: CREDENTIALS });
    for (const headers of [{}, basic('bob', 'wrong'), basic('mallory', 'b')]) {
      for (const path of READS) {
        expect([path, await request(r, path, headers)]).toEqual([
          path,
          { status: 401, body: '401 Unauthorized.', challenge: `Basic realm="${READONLY_REALM}"` },
        ]);
      }
      for (const [path, body] of CHANGES) {
        expect([path, await request(r, path, headers, body)]).toEqual([
          path,
          { status: 401, body: '401 Unauthorized.', challenge: `Basic realm="${READWRITE_REALM}"` },
        ]);
      }
    }
    // Nothing was done: no time passed, the master leads, no snapshot was taken.
    expect(r.now()).toBe(0);
    expect(r.driver.read((view) => view.leaderIndex())).toBe(0);
    expect((await request(r, '/sim/v1/restore', BOB, { snapshot_id: 'snapshot-1' })).status).toBe(404);
  });

  it('serves a principal with credentials when the ACLs do not refuse it (none given, or permissive with no rule)', async () => {
    for (const acls of [undefined, { permissive: true }]) {
      const r = await start({ credentials: CREDENTIALS, ...(acls === undefined ? {} : { acls }) });
      for (const path of READS) expect((await request(r, path, BOB)).status, path).toBe(200);
      expect(JSON.parse((await request(r, '/sim/v1/advance', BOB, { ms: 1500 })).body)).toMatchObject({
        time_ms: 1500,
      });
      expect(JSON.parse((await request(r, '/sim/v1/reset', BOB, { seed: 8 })).body)).toEqual({ seed: '8', time_ms: 0 });
    }
  });

  it('asks with executor authentication alone too, and then nobody has credentials', async () => {
    const r = await start({ authenticateHttpExecutors: true });
    expect(await request(r, '/sim/v1/clock', {})).toEqual({
      status: 401,
      body: '401 Unauthorized.',
      challenge: `Basic realm="${READONLY_REALM}"`,
    });
    expect((await request(r, '/sim/v1/advance', OPS, { ms: 1000 })).status).toBe(401);
    expect(r.now()).toBe(0);
  });
});

describe('control_simulation', () => {
  const ACLS = {
    permissive: false,
    register_frameworks: [{ principals: { type: 'ANY' }, roles: { type: 'ANY' } }],
    view_frameworks: [{ principals: { type: 'ANY' }, users: { type: 'ANY' } }],
    view_tasks: [{ principals: { type: 'ANY' }, users: { type: 'ANY' } }],
    view_executors: [{ principals: { type: 'ANY' }, users: { type: 'ANY' } }],
    control_simulation: [{ principals: { values: ['ops'] }, objects: { type: 'ANY' } }],
  };
  const FORBIDDEN = "Not authorized to control the simulation: the ACLs' control_simulation refuses it";

  it('refuses every change to a principal it does not allow, with 403 and one line, and nothing changes', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS });
    const before = r.cluster;
    for (const [path, body] of CHANGES)
      expect([path, await request(r, path, BOB, body)]).toEqual([
        path,
        { status: 403, body: FORBIDDEN, challenge: null },
      ]);
    expect(r.cluster).toBe(before);
    expect(await clockMs(r)).toBe(0);
    expect(r.driver.read((view) => view.leaderIndex())).toBe(0);
    // The reads need no grant.
    for (const path of READS) expect((await request(r, path, BOB)).status, path).toBe(200);
  });

  it('lets the principal it allows make them', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS });
    expect(JSON.parse((await request(r, '/sim/v1/advance', OPS, { ms: 2000 })).body)).toMatchObject({ time_ms: 2000 });
    expect(JSON.parse((await request(r, '/sim/v1/snapshot', OPS, {})).body)).toEqual({
      snapshot_id: 'snapshot-1',
      time_ms: 2000,
    });
    expect(JSON.parse((await request(r, '/sim/v1/faults', OPS, { type: 'crash_master' })).body)).toMatchObject({
      type: 'crash_master',
      master: 0,
    });
    expect(JSON.parse((await request(r, '/sim/v1/reset', OPS, { seed: 4 })).body)).toEqual({ seed: '4', time_ms: 0 });
  });

  it('is asked about no principal (ANY) when authentication is off', async () => {
    const r = await start({
      acls: { ...ACLS, control_simulation: [{ principals: { type: 'ANY' }, objects: { type: 'NONE' } }] },
    });
    expect(await request(r, '/sim/v1/advance', {}, { ms: 1000 })).toEqual({
      status: 403,
      body: FORBIDDEN,
      challenge: null,
    });
    expect((await request(r, '/sim/v1/clock', {})).status).toBe(200);
    expect(r.now()).toBe(0);
  });
});

describe('the reads, by the view ACLs', () => {
  const only = (key: string) => [
    { principals: { values: ['bob'] }, [key]: { values: ['bob-user'] } },
    { principals: { values: ['bob'] }, [key]: { type: 'NONE' } },
  ];
  const ACLS = {
    permissive: true,
    view_frameworks: only('users'),
    view_tasks: only('users'),
    view_executors: only('users'),
  };

  async function subscribed(r: RunningCluster, headers: Record<string, string>, info: Json): Promise<SchedulerClient> {
    const client = new SchedulerClient(r.masterUrl, 'json', headers);
    expect((await client.subscribe(info)).status).toBe(200);
    await client.next('SUBSCRIBED');
    return client;
  }

  /** Launches `taskId` on the framework's first offer, running it until TASK_RUNNING. */
  async function launch(r: RunningCluster, client: SchedulerClient, taskId: string): Promise<void> {
    while (!client.pending.some((e) => e.type === 'OFFERS')) {
      r.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [offer] = (await client.next('OFFERS')).offers.offers as Json[];
    const task = {
      name: taskId,
      task_id: { value: taskId },
      agent_id: offer!.agent_id,
      resources: [{ name: 'cpus', type: 'SCALAR', scalar: { value: 0.1 } }],
      command: { value: 'sleep 3600' },
    };
    const accept = {
      offer_ids: [offer!.id],
      operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }],
      filters: { refuse_seconds: 0 },
    };
    expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
    for (;;) {
      const { status } = (await client.next('UPDATE')).update;
      if (status.uuid !== undefined)
        await client.call({
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
        });
      if (status.state === 'TASK_RUNNING') return;
    }
  }

  async function cluster(): Promise<{ r: RunningCluster; alice: SchedulerClient; bob: SchedulerClient }> {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS, agentResources: 'cpus:4;mem:4096' });
    const alice = await subscribed(r, ALICE, {
      user: 'alice-user',
      name: 'a',
      labels: { labels: [{ key: 'k', value: 'alice-secret-label' }] },
    });
    await launch(r, alice, 'a-task');
    // A misuse of alice's: a call on a stream that is not hers.
    expect((await alice.call({ type: 'REVIVE' }, { 'mesos-stream-id': 'alice-stale-stream' })).status).toBe(400);
    const bob = await subscribed(r, BOB, { user: 'bob-user', name: 'b' });
    await launch(r, bob, 'b-task');
    expect((await bob.call({ type: 'REVIVE' }, { 'mesos-stream-id': 'bob-stale-stream' })).status).toBe(400);
    return { r, alice, bob };
  }

  /**
   * What a reader of `path` is given: the entries kept, then those of one
   * more second, read up to that second's `input:advanceTo`, which every
   * reader is shown.
   */
  async function streamText(r: RunningCluster, path: string, headers: Record<string, string>): Promise<string> {
    const controller = new AbortController();
    const res = await fetch(new URL(path, r.masterUrl), { headers, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    r.advance(1000);
    const mark = `input:advanceTo [${r.now()}]`;
    while (!text.includes(mark)) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    return text;
  }
  const traceText = (r: RunningCluster, headers: Record<string, string>) => streamText(r, '/sim/v1/trace', headers);
  const eventsText = (r: RunningCluster, headers: Record<string, string>) => streamText(r, '/sim/v1/events', headers);

  it("leaves out of bob's trace and events every entry of alice's framework, and shows him his own", async () => {
    const { r, alice, bob } = await cluster();
    for (const text of [await traceText(r, BOB), await eventsText(r, BOB)]) {
      for (const secret of [alice.frameworkId!, alice.streamId!, 'alice-secret-label', 'alice-user', 'a-task'])
        expect(text).not.toContain(secret);
      for (const own of [bob.frameworkId!, 'b-task', 'framework:subscribed', 'event:update', 'agent:add'])
        expect(text).toContain(own);
      // A call as received names no framework: shown only to who may view every user's.
      expect(text).not.toContain('call:accept');
    }
    // alice is named by no rule: she sees all, bob's included.
    for (const text of [await traceText(r, ALICE), await eventsText(r, ALICE)]) {
      for (const seen of [
        alice.frameworkId!,
        alice.streamId!,
        'alice-secret-label',
        bob.frameworkId!,
        'b-task',
        'call:accept',
      ])
        expect(text).toContain(seen);
    }
  });

  it('shows a restricted reader an entry by what it names (wire/sim/view.ts)', async () => {
    const { r, alice, bob } = await cluster();
    const reader = simReaderOf(r.cluster.view, 'bob')!;
    const shown = (kind: string, text: string) => reader.entry({ seq: 1, timeMs: 7, kind, line: `7 ${kind} ${text}` });
    const fw = (id: string) => JSON.stringify({ frameworkId: id });
    expect([
      shown('framework:remove', fw(bob.frameworkId!)),
      shown('framework:remove', fw(alice.frameworkId!)),
      shown('framework:remove', fw('forgotten')),
    ]).toEqual([true, false, false]);
    expect(shown('task:status', JSON.stringify({ frameworkId: bob.frameworkId, taskId: 'b-task' }))).toBe(true);
    // A task id bob's framework does not know, as an event names it or an entry does.
    expect(shown('task:status', JSON.stringify({ frameworkId: bob.frameworkId, taskId: 'other' }))).toBe(false);
    // b-task's command executor is the task's; an executor nobody knows is not shown.
    const executor = (id: string) =>
      JSON.stringify({ agentId: 'a1', frameworkId: bob.frameworkId, executorId: id, kind: 'command' });
    expect([shown('executor:launch', executor('b-task')), shown('executor:launch', executor('other'))]).toEqual([
      true,
      false,
    ]);
    expect([
      shown('event:update', `${bob.frameworkId} b-task TASK_RUNNING`),
      shown('event:update', `${bob.frameworkId} other TASK_RUNNING`),
    ]).toEqual([true, false]);
    expect([
      shown('event:heartbeat', `${bob.frameworkId} `),
      shown('event:heartbeat', `${alice.frameworkId} `),
    ]).toEqual([true, false]);
    // The cluster's own entries, unless they name what belongs to a framework.
    expect([
      shown('agent:add', '{"agentId":"a1"}'),
      shown('fault:fail_task', '{"taskId":"b-task"}'),
      shown('offer:use', '{"offerId":"o1"}'),
    ]).toEqual([true, false, false]);
    expect([
      shown('input:advanceTo', '[1000]'),
      shown('input:subscribe', '["c1",{}]'),
      shown('call:accept', '{}'),
      shown('new:kind', '{}'),
    ]).toEqual([true, false, false, false]);
    // A string JSON cannot read names nothing known.
    expect(shown('framework:remove', '{"frameworkId":"\\x"}')).toBe(false);
    // alice is refused no user: nothing is asked for her.
    expect(simReaderOf(r.cluster.view, 'alice')).toBeUndefined();
  });

  it('asks the view rules about no principal (ANY) when authentication is off', async () => {
    const r = await start({ acls: { view_frameworks: [{ principals: { type: 'ANY' }, users: { type: 'NONE' } }] } });
    const client = await subscribed(r, {}, { user: 'someone', name: 'x' });
    const text = await traceText(r, {});
    expect(text).toContain('agent:add');
    expect(text).not.toContain(client.frameworkId!);
    expect(text).not.toContain(client.streamId!);
  });

  it("leaves alice's framework out of bob's misuse report", async () => {
    const { r, alice, bob } = await cluster();
    const report = async (headers: Record<string, string>) =>
      JSON.parse((await request(r, '/sim/v1/misuse', headers)).body) as { frameworks: { framework_id: string }[] };
    expect((await report(BOB)).frameworks.map((f) => f.framework_id)).toEqual([bob.frameworkId]);
    expect((await report(ALICE)).frameworks.map((f) => f.framework_id).sort()).toEqual(
      [alice.frameworkId, bob.frameworkId].sort(),
    );
  });
});
