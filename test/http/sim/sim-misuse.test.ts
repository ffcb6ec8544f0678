/**
 * GET /sim/v1/misuse over a real socket: misuses made through the
 * scheduler API (acknowledgements without a uuid, in JSON and protobuf,
 * a stale stream id, an offer held past a minute) listed per framework and
 * kind, the scheduler's answers unchanged; and the library's `misuse()`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const misuse = async () => {
  const res = await fetch(new URL('/sim/v1/misuse', r!.masterUrl));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as {
    time_ms: number;
    frameworks: { framework_id: string; name?: string; misuses: Record<string, unknown>[] }[];
  };
};

describe('GET /sim/v1/misuse', () => {
  it('is empty before any framework misbehaves', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    expect(await misuse()).toEqual({ time_ms: 0, frameworks: [] });
    expect(r.misuse()).toEqual({ timeMs: 0, frameworks: [] });
  });

  it('lists what a framework did through the scheduler API, per kind, with examples and why', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const client = new SchedulerClient(r.masterUrl);
    await client.subscribe({ user: 'u', name: 'careless' });
    await client.next('SUBSCRIBED');
    const offers = await client.next('OFFERS');
    const agentId = offers.offers.offers[0].agent_id.value as string;
    const ack = (extra: Record<string, unknown>) => ({
      type: 'ACKNOWLEDGE',
      acknowledge: { agent_id: { value: agentId }, task_id: { value: 't1' }, ...extra },
    });

    // Without a uuid: the body does not decode; with an empty one: the call is invalid. Both 400, as before.
    expect((await client.call(ack({}))).status).toBe(400);
    expect(await client.call(ack({ uuid: '' }))).toMatchObject({
      status: 400,
      body: "Failed to validate scheduler::Call: 'uuid' must be a 16-byte UUID",
    });
    const binary = new SchedulerClient(r.masterUrl, 'protobuf');
    binary.frameworkId = client.frameworkId;
    binary.streamId = client.streamId;
    expect((await binary.call(ack({ uuid: '' }))).status).toBe(400);
    expect((await client.call({ type: 'REVIVE' }, { 'mesos-stream-id': 'not-my-stream' })).status).toBe(400);
    expect(
      JSON.parse(
        (await postRaw(new URL('/sim/v1/advance', r.masterUrl), '{"ms":61000}', { 'content-type': 'application/json' }))
          .body,
      ),
    ).toMatchObject({ time_ms: 61_000 });

    const report = await misuse();
    expect(report.time_ms).toBe(61_000);
    expect(report.frameworks).toHaveLength(1);
    const [fw] = report.frameworks;
    expect(fw).toMatchObject({ framework_id: client.frameworkId, name: 'careless' });
    expect(fw!.misuses.map((m) => [m['kind'], m['count']])).toEqual([
      ['acknowledge_without_uuid', 3],
      ['stale_stream_id', 1],
      ['offer_held', 1],
    ]);
    expect(fw!.misuses[0]).toMatchObject({
      first_time_ms: 0,
      last_time_ms: 0,
      explanation: expect.stringContaining('Only updates that carry a uuid may be acknowledged'),
      examples: [
        {
          time_ms: 0,
          ids: { task_id: 't1', agent_id: agentId },
          detail: "ACKNOWLEDGE of task 't1' without a 16-byte uuid",
        },
        {},
        {},
      ],
    });
    expect(fw!.misuses[1]).toMatchObject({ examples: [{ ids: { stream_id: 'not-my-stream' } }] });
    expect(fw!.misuses[2]).toMatchObject({
      first_time_ms: 60_000,
      examples: [{ ids: { offer_id: offers.offers.offers[0].id.value, agent_id: agentId } }],
    });
    // The library reads the same report.
    expect(r.misuse().frameworks.map((f) => f.misuses.map((m) => m.kind))).toEqual([
      ['acknowledge_without_uuid', 'stale_stream_id', 'offer_held'],
    ]);
    client.disconnect();
    binary.disconnect();
  });

  it('answers other methods as the rest of the control API does', async () => {
    r = await startCluster({ port: 0, agents: 0, time: 'virtual' });
    expect(
      (await postRaw(new URL('/sim/v1/misuse', r.masterUrl), '{}', { 'content-type': 'application/json' })).status,
    ).toBe(405);
  });
});
