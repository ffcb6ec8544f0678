/**
 * Masters with a leader over real sockets: every master but the leader
 * answers the APIs with upstream's 307 to the leader (both encodings), the
 * leader's crash closes the framework's stream, the master elected next
 * serves, and a framework re-subscribing with its id there finds its
 * running tasks.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../src/client/scheduler-client.js';
import type { JsonEvent } from '../../src/client/event-queue.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { decodeJson } from '../../src/wire/json.js';
import { runCli } from '../e2e/cli-process.js';
import { encodeProto } from '../../src/wire/proto-codec.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const portOf = (url: string) => new URL(url).port;

/** A request as it is, redirects not followed. */
function request(
  url: string,
  method: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; location: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function protobuf(type: string, json: object): Buffer {
  const decoded = decodeJson<object>(type, JSON.stringify(json));
  if (!decoded.ok) throw new Error(decoded.error);
  return Buffer.from(encodeProto(type, decoded.value));
}

const post = (url: string, path: string, body: unknown) =>
  postRaw(new URL(path, url), JSON.stringify(body), { 'content-type': 'application/json' });

async function until(client: SchedulerClient, type: string, r: RunningCluster): Promise<JsonEvent> {
  for (let i = 0; i < 30 && !client.pending.some((e) => e.type === type); i++) {
    r.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return client.next(type, 1_000);
}

describe('masters with a leader', () => {
  it('a standby answers 307 to the leader for scheduler, operator and read calls, in JSON and protobuf', async () => {
    r = await startCluster({ port: 0, agents: 1, masters: 3, time: 'virtual' });
    expect(r.masterUrls).toHaveLength(3);
    const [leader, standby] = r.masterUrls as [string, string, string];
    const to = (path: string) => `//127.0.0.1:${portOf(leader)}${path}`;
    const subscribe = { type: 'SUBSCRIBE', subscribe: { framework_info: { user: 'u', name: 'redirected' } } };
    const json = { 'content-type': 'application/json', accept: 'application/json' };
    const proto = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };
    const cases: [string, string, string | Buffer | undefined, Record<string, string>, string][] = [
      ['POST', '/api/v1/scheduler', JSON.stringify(subscribe), json, '/api/v1/scheduler'],
      ['POST', '/api/v1/scheduler', protobuf('mesos.v1.scheduler.Call', subscribe), proto, '/api/v1/scheduler'],
      ['POST', '/master/api/v1/scheduler', JSON.stringify(subscribe), json, '/master/api/v1/scheduler'],
      ['POST', '/api/v1', JSON.stringify({ type: 'GET_STATE' }), json, '/api/v1'],
      ['POST', '/api/v1', protobuf('mesos.v1.master.Call', { type: 'GET_STATE' }), proto, '/api/v1'],
      ['GET', '/state', undefined, {}, '/state'],
      ['GET', '/master/state?jsonp=cb', undefined, {}, '/master/state?jsonp=cb'],
      ['GET', '/slaves', undefined, {}, '/slaves'],
      ['GET', '/master/frameworks', undefined, {}, '/master/frameworks'],
    ];
    for (const [method, path, body, headers, location] of cases) {
      const answer = await request(`${standby}${path}`, method, body, headers);
      expect([path, answer.status, answer.location]).toEqual([path, 307, to(location)]);
    }
    // The leader serves; /redirect names it on every master.
    expect((await request(`${leader}/state`, 'GET')).status).toBe(200);
    for (const url of r.masterUrls)
      expect(await request(`${url}/master/redirect`, 'GET')).toMatchObject({
        status: 307,
        location: `//127.0.0.1:${portOf(leader)}`,
      });
    // The simulator's own API and the process endpoints answer on every master.
    expect((await request(`${standby}/sim/v1/clock`, 'GET')).status).toBe(200);
    expect((await request(`${standby}/health`, 'GET')).status).toBe(200);
    expect(await request(`${standby}/metrics/snapshot`, 'GET')).toMatchObject({
      status: 200,
      body: '{"master/elected":0.0}',
    });
    expect(JSON.parse((await request(`${leader}/metrics/snapshot`, 'GET')).body)['master/elected']).toBe(1);
    expect((await request(`${standby}/master/redirect/x`, 'GET')).status).toBe(404);
    const state = JSON.parse((await request(`${leader}/state`, 'GET')).body) as {
      leader: string;
      leader_info: { port: number };
    };
    expect(state.leader_info.port).toBe(Number(portOf(leader)));
  });

  it('after crash_master the stream closes, the next master leads, and a re-subscription with the framework id sees its running task', async () => {
    r = await startCluster({ port: 0, agents: 1, masters: 3, time: 'virtual', seed: 3 });
    const [first, second, third] = r.masterUrls as [string, string, string];
    const client = new SchedulerClient(first);
    await client.subscribe({
      user: 'u',
      name: 'survivor',
      failover_timeout: 3600,
      capabilities: [{ type: 'PARTITION_AWARE' }],
    });
    const frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value as string;
    const offer = (await until(client, 'OFFERS', r)).offers.offers[0];
    const task = {
      name: 'nap',
      task_id: { value: 'nap' },
      agent_id: offer.agent_id,
      resources: [{ name: 'cpus', type: 'SCALAR', scalar: { value: 1 } }],
      command: { value: 'sleep 3600' },
    };
    expect(
      (
        await client.call({
          type: 'ACCEPT',
          accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
        })
      ).status,
    ).toBe(202);
    for (;;) {
      const { status } = (await client.next('UPDATE')).update;
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
      if (status.state === 'TASK_RUNNING') break;
    }

    const crashed = await post(second, '/sim/v1/faults', { type: 'crash_master' });
    expect(JSON.parse(crashed.body)).toEqual({ type: 'crash_master', master: 0, leader: null });
    for (let i = 0; i < 100 && !client.closed; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(client.closed).toBe(true);
    // The dead master answers nothing; the others have no leader to name yet.
    await expect(request(`${first}/state`, 'GET')).rejects.toThrow();
    expect(await request(`${second}/state`, 'GET')).toMatchObject({ status: 503, body: 'No leader elected' });
    expect(await request(`${third}/master/redirect`, 'GET')).toMatchObject({ status: 503, body: 'No leader elected' });

    expect(r.leaderUrl()).toBeUndefined();
    await post(second, '/sim/v1/advance', { ms: 10_000 });
    expect(r.leaderUrl()).toBe(second);
    expect(
      await request(`${third}/api/v1/scheduler`, 'POST', '{}', { 'content-type': 'application/json' }),
    ).toMatchObject({ status: 307, location: `//127.0.0.1:${portOf(second)}/api/v1/scheduler` });
    const state = JSON.parse((await request(`${second}/master/state`, 'GET')).body) as {
      frameworks: { id: string; active: boolean; recovered: boolean; tasks: { id: string; state: string }[] }[];
    };
    expect(state.frameworks.map((f) => [f.id, f.active, f.recovered, f.tasks.map((t) => [t.id, t.state])])).toEqual([
      [frameworkId, false, true, [['nap', 'TASK_RUNNING']]],
    ]);

    const again = new SchedulerClient(second);
    await again.subscribe({
      id: { value: frameworkId },
      user: 'u',
      name: 'survivor',
      failover_timeout: 3600,
      capabilities: [{ type: 'PARTITION_AWARE' }],
    });
    const subscribed = (await again.next('SUBSCRIBED')).subscribed;
    expect(subscribed.framework_id.value).toBe(frameworkId);
    expect(subscribed.master_info.port).toBe(Number(portOf(second)));
    expect((await again.call({ type: 'RECONCILE', reconcile: { tasks: [] } })).status).toBe(202);
    const reconciled = (await again.next('UPDATE')).update.status;
    expect([reconciled.task_id.value, reconciled.state]).toEqual(['nap', 'TASK_RUNNING']);
    const tasks = JSON.parse((await request(`${second}/tasks`, 'GET')).body) as {
      tasks: { id: string; state: string }[];
    };
    expect(tasks.tasks.map((t) => [t.id, t.state])).toEqual([['nap', 'TASK_RUNNING']]);
    again.disconnect();
  });

  it('clustersim up --masters 2 prints the leader and its standby, which redirects', async () => {
    const { child, output } = runCli(['up', '--port', '0', '--masters', '2', '--agents', '1', '--log-level', 'warn']);
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let stdout = '';
        child.stdout!.on('data', (c: Buffer) => {
          stdout += c.toString();
          if (stdout.includes('\n')) resolve(stdout);
        });
        void output.then(({ stderr }) => reject(new Error(stderr)));
      });
      const m =
        /^clustersim: master at (http:\/\/\S+) \(leader; standby masters at (http:\/\/\S+)\) with 1 agent\n$/.exec(
          line,
        );
      expect(m, line).not.toBeNull();
      const [, leader, standby] = m!;
      expect(await request(`${standby}/state`, 'GET')).toMatchObject({
        status: 307,
        location: `//127.0.0.1:${portOf(leader!)}/state`,
      });
    } finally {
      child.kill('SIGTERM');
      expect((await output).code).toBe(0);
    }
  });
});
