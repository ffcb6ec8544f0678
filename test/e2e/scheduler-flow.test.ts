/**
 * A scheduler written against the spec, talking to `clustersim up` over real
 * HTTP in real time: subscribe, offers, launch `sleep 1`, RUNNING, FINISHED,
 * acknowledge, kill, reconcile, teardown, and the error table on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient, type Encoding, type JsonEvent } from '../../src/client/scheduler-client.js';
import { startUp, type UpProcess } from './cli-process.js';

let up: UpProcess;

beforeAll(async () => {
  up = await startUp(['--agents', '2', '--agent-attributes', 'rack:r1', '--log-level', 'warn', '--seed', 'e2e']);
});
afterAll(async () => {
  const code = await up.stop();
  expect(code).toBe(0);
});

function task(id: string, offer: JsonEvent, command: string) {
  return {
    name: id,
    task_id: { value: id },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 64 } },
    ],
    command: { shell: true, value: command },
  };
}

async function acknowledge(client: SchedulerClient, update: JsonEvent): Promise<void> {
  const status = update.update.status;
  const res = await client.call({
    type: 'ACKNOWLEDGE',
    acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
  });
  expect(res.status).toBe(202);
}

describe.each<Encoding>(['json', 'protobuf'])('a scheduler speaking %s against clustersim up', (encoding) => {
  it('runs the whole lifecycle', async () => {
    const health = await fetch(new URL('/health', up.masterUrl));
    expect(health.status).toBe(200);

    const client = new SchedulerClient(up.masterUrl, encoding);
    const sub = await client.subscribe({
      user: 'root',
      name: `e2e-${encoding}`,
      capabilities: [{ type: 'TASK_KILLING_STATE' }],
    });
    expect(sub.status).toBe(200);
    expect(sub.headers['content-type']).toBe(encoding === 'json' ? 'application/json' : 'application/x-protobuf');
    const subscribed = await client.next('SUBSCRIBED');
    expect(subscribed.subscribed.framework_id.value).toMatch(/-\d{4}$/);
    const offers = (await client.next('OFFERS')).offers.offers as JsonEvent[];
    expect(offers).toHaveLength(2);
    expect(offers[0]!.attributes).toEqual([{ name: 'rack', type: 'TEXT', text: { value: 'r1' } }]);

    // Launch sleep 1 and a long-running task on the first offer.
    const [offer, other] = offers;
    const accept = await client.call({
      type: 'ACCEPT',
      accept: {
        offer_ids: [offer!.id],
        operations: [
          {
            type: 'LAUNCH',
            launch: { task_infos: [task('short', offer!, 'sleep 1'), task('long', offer!, 'sleep 3600')] },
          },
        ],
        filters: { refuse_seconds: 0 },
      },
    });
    expect(accept).toMatchObject({ status: 202, body: '' });
    const declined = await client.call({
      type: 'DECLINE',
      decline: { offer_ids: [other!.id], filters: { refuse_seconds: 3600 } },
    });
    expect(declined.status).toBe(202);

    const states: string[] = [];
    for (const expected of ['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']) {
      const update = await client.nextUpdate('short');
      const status = update.update.status;
      expect(status.state).toBe(expected);
      expect(status.source).toBe('SOURCE_EXECUTOR');
      expect(status.agent_id.value).toBe(offer!.agent_id.value);
      expect(Buffer.from(status.uuid, 'base64')).toHaveLength(16);
      states.push(status.state);
      await acknowledge(client, update);
    }
    expect(states).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);

    // The long task runs until killed; with TASK_KILLING_STATE it passes through TASK_KILLING.
    for (const expected of ['TASK_STARTING', 'TASK_RUNNING']) {
      const update = await client.nextUpdate('long');
      expect(update.update.status.state).toBe(expected);
      await acknowledge(client, update);
    }
    expect(
      (await client.call({ type: 'KILL', kill: { task_id: { value: 'long' }, agent_id: offer!.agent_id } })).status,
    ).toBe(202);
    for (const expected of ['TASK_KILLING', 'TASK_KILLED']) {
      const update = await client.nextUpdate('long');
      expect(update.update.status.state).toBe(expected);
      await acknowledge(client, update);
    }

    // Killing a task the master does not know yields TASK_LOST.
    expect((await client.call({ type: 'KILL', kill: { task_id: { value: 'ghost' } } })).status).toBe(202);
    expect((await client.nextUpdate('ghost')).update.status.state).toBe('TASK_LOST');

    // Explicit reconciliation: unknown -> TASK_LOST; implicit: nothing is left running.
    const reconcile = await client.call({ type: 'RECONCILE', reconcile: { tasks: [{ task_id: { value: 'nope' } }] } });
    expect(reconcile.status).toBe(202);
    const lost = (await client.nextUpdate('nope')).update.status;
    expect(lost).toMatchObject({ state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_RECONCILIATION' });
    expect(lost.uuid).toBeUndefined();

    const tasks = (await (await fetch(new URL('/master/tasks?order=asc', up.masterUrl))).json()) as any;
    const byId = Object.fromEntries(tasks.tasks.map((t: { id: string; state: string }) => [t.id, t.state]));
    expect(byId).toEqual({ short: 'TASK_FINISHED', long: 'TASK_KILLED' });

    // Teardown closes the stream and removes the framework.
    expect((await client.call({ type: 'TEARDOWN' })).status).toBe(202);
    await waitFor(() => client.closed);
    const frameworks = (await (await fetch(new URL('/frameworks', up.masterUrl))).json()) as any;
    expect(frameworks.frameworks).toEqual([]);
    expect(frameworks.completed_frameworks.map((f: { id: string }) => f.id)).toContain(client.frameworkId);
    const after = await client.call({ type: 'REVIVE' });
    expect(after).toMatchObject({ status: 403, body: 'Framework cannot be found' });
  }, 20_000);

  it('answers the error table over real HTTP and keeps running', async () => {
    const url = new URL('/api/v1/scheduler', up.masterUrl);
    const json = { 'content-type': 'application/json' };
    const cases: [string, Record<string, string>, number][] = [
      ['{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}', {}, 400],
      [
        '{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}',
        { 'content-type': 'text/xml' },
        415,
      ],
      ['not json', json, 400],
      ['{"type":"ACCEPT","framework_id":{"value":"x"}}', json, 400],
      [
        '{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}',
        { ...json, accept: 'application/xml' },
        406,
      ],
      ['{"type":"REVIVE","framework_id":{"value":"unknown"}}', { ...json, 'mesos-stream-id': 's' }, 403],
    ];
    for (const [body, headers, status] of cases) {
      const res = await postRaw(url, body, headers);
      expect(res.status, body).toBe(status);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body).not.toContain('\n');
    }
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(new URL('/version', up.masterUrl))).status).toBe(200);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
