import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

const FRAMEWORK = { user: 'root', name: 'http-test' };

let running: RunningCluster;
let url: URL;

beforeEach(async () => {
  running = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7 });
  url = new URL('/api/v1/scheduler', running.masterUrl);
});
afterEach(async () => {
  await running.close();
});

const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }, path = url) =>
  postRaw(path, body, headers);

async function subscribed(): Promise<SchedulerClient> {
  const client = new SchedulerClient(running.masterUrl);
  const res = await client.subscribe(FRAMEWORK);
  expect(res.status).toBe(200);
  await client.next('SUBSCRIBED');
  return client;
}

describe('POST /api/v1/scheduler: SUBSCRIBE', () => {
  it('answers 200 with a chunked RecordIO stream, both stream id headers, SUBSCRIBED then HEARTBEAT then OFFERS', async () => {
    const client = new SchedulerClient(running.masterUrl);
    const res = await client.subscribe(FRAMEWORK);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const streamId = res.headers['mesos-stream-id'];
    expect(typeof streamId === 'string' && streamId.length > 0 && streamId.length <= 128).toBe(true);
    expect(res.headers['cluster-stream-id']).toBe(streamId);
    const subscribedEvent = await client.next();
    expect(subscribedEvent.type).toBe('SUBSCRIBED');
    expect(subscribedEvent.subscribed.heartbeat_interval_seconds).toBe(15);
    expect((await client.next()).type).toBe('HEARTBEAT');
    const offers = await client.next();
    expect(offers.type).toBe('OFFERS');
    const offer = offers.offers.offers[0];
    expect(offer.url.address.port).toBe(running.agents[0]!.port);
    expect(offer.agent_id.value).toBe(running.agents[0]!.id);
    client.disconnect();
  });

  it('sends a HEARTBEAT every interval of virtual time', async () => {
    const client = await subscribed();
    await client.next('HEARTBEAT');
    running.advance(15_000);
    await client.next('HEARTBEAT');
    running.advance(15_000);
    await client.next('HEARTBEAT');
    client.disconnect();
  });

  it('re-SUBSCRIBE with the framework id closes the old stream after an ERROR event', async () => {
    const first = await subscribed();
    const second = new SchedulerClient(running.masterUrl);
    await second.subscribe({ ...FRAMEWORK, id: { value: first.frameworkId } });
    const event = await second.next('SUBSCRIBED');
    expect(event.subscribed.framework_id.value).toBe(first.frameworkId);
    const error = await first.next('ERROR');
    expect(error.error.message).toBe('Framework failed over');
    await waitFor(() => first.closed);
    expect(second.streamId).not.toBe(first.streamId);
    second.disconnect();
  });

  it('an invalid FrameworkInfo reaches the stream as an ERROR event, then the stream closes; subscribe() rejects with its message', async () => {
    const client = new SchedulerClient(running.masterUrl);
    await expect(client.subscribe({ ...FRAMEWORK, roles: ['a'] })).rejects.toThrow(
      expect.objectContaining({ name: 'SubscribeError', message: expect.stringMatching(/MULTI_ROLE/) }),
    );
    const error = await client.next('ERROR');
    expect(error.error.message).toMatch(/MULTI_ROLE/);
    await expect(client.next(undefined, 2000)).rejects.toThrow(/closed/);
    expect([...running.cluster.view.frameworks()].length).toBe(0);
  });
});

describe('POST /api/v1/scheduler: the error table', () => {
  const subscribeBody = JSON.stringify({ type: 'SUBSCRIBE', subscribe: { framework_info: FRAMEWORK } });

  it.each([
    ['no Content-Type', subscribeBody, {}, 400, "Expecting 'Content-Type' to be present"],
    [
      'Content-Type with parameters',
      subscribeBody,
      { 'content-type': 'application/json; charset=utf-8' },
      415,
      'Expecting',
    ],
    ['Content-Type text/plain', subscribeBody, { 'content-type': 'text/plain' }, 415, 'Expecting'],
    ['malformed JSON', '{"type":', { 'content-type': 'application/json' }, 400, 'Failed to parse body into JSON'],
    ['a JSON array', '[]', { 'content-type': 'application/json' }, 400, 'Failed to convert JSON into Call protobuf'],
    [
      'no type',
      '{}',
      { 'content-type': 'application/json' },
      400,
      "Failed to validate scheduler::Call: Expecting 'type' to be present",
    ],
    [
      'an unknown type name',
      '{"type":"FLY"}',
      { 'content-type': 'application/json' },
      400,
      "Expecting 'type' to be present",
    ],
    [
      'an enum as a number',
      '{"type":1}',
      { 'content-type': 'application/json' },
      400,
      "Not expecting a JSON number for field 'type'",
    ],
    [
      'SUBSCRIBE without subscribe',
      '{"type":"SUBSCRIBE"}',
      { 'content-type': 'application/json' },
      400,
      "Expecting 'subscribe' to be present",
    ],
    [
      'SUBSCRIBE without user',
      '{"type":"SUBSCRIBE","subscribe":{"framework_info":{"name":"x"}}}',
      { 'content-type': 'application/json' },
      400,
      'Missing required fields: subscribe.framework_info.user',
    ],
    [
      'SUBSCRIBE, framework_id differs',
      '{"type":"SUBSCRIBE","framework_id":{"value":"a"},"subscribe":{"framework_info":{"user":"u","name":"n"}}}',
      { 'content-type': 'application/json' },
      400,
      "'framework_id' differs",
    ],
    [
      'SUBSCRIBE, Accept not satisfiable',
      subscribeBody,
      { 'content-type': 'application/json', accept: 'text/html' },
      406,
      "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'",
    ],
    [
      'SUBSCRIBE, Accept q=0',
      subscribeBody,
      { 'content-type': 'application/json', accept: 'application/json;q=0' },
      406,
      "Expecting 'Accept' to allow",
    ],
    [
      'SUBSCRIBE with a stream id',
      subscribeBody,
      { 'content-type': 'application/json', 'mesos-stream-id': 'x' },
      400,
      "Subscribe calls should not include the 'Mesos-Stream-Id' header",
    ],
    [
      'a call without framework_id',
      '{"type":"REVIVE"}',
      { 'content-type': 'application/json' },
      400,
      "Expecting 'framework_id' to be present",
    ],
    [
      'an unknown framework',
      '{"type":"REVIVE","framework_id":{"value":"nope"}}',
      { 'content-type': 'application/json', 'mesos-stream-id': 'x' },
      403,
      'Framework cannot be found',
    ],
    [
      'DECLINE without decline',
      '{"type":"DECLINE","framework_id":{"value":"f"}}',
      { 'content-type': 'application/json' },
      400,
      "Expecting 'decline' to be present",
    ],
    [
      'ACKNOWLEDGE with a short uuid',
      '{"type":"ACKNOWLEDGE","framework_id":{"value":"f"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"},"uuid":"AAAA"}}',
      { 'content-type': 'application/json' },
      400,
      "'uuid' must be a 16-byte UUID",
    ],
    [
      'bytes that are not base64',
      '{"type":"MESSAGE","framework_id":{"value":"f"},"message":{"agent_id":{"value":"a"},"executor_id":{"value":"e"},"data":"%%%"}}',
      { 'content-type': 'application/json' },
      400,
      "Failed to base64 decode bytes field 'data'",
    ],
  ])('%s', async (_name, body, headers, status, text) => {
    const res = await post(body, headers as Record<string, string>);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toContain(text);
    expect(res.body).not.toContain('\n');
    expect([...running.cluster.view.frameworks()].length).toBe(0);
  });

  it('405 for other methods, with Allow: POST', async () => {
    const res = await fetch(url);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.text()).toBe("405 Method Not Allowed. Expecting one of { 'POST' }, but received 'GET'.");
  });

  it('413 for an oversized body, and the server keeps serving', async () => {
    const res = await post(`{"type":"SUBSCRIBE","pad":"${'x'.repeat(17 * 1024 * 1024)}"}`);
    expect(res.status).toBe(413);
    expect((await fetch(new URL('/health', running.masterUrl))).status).toBe(200);
  });

  it('404 for an unknown path', async () => {
    const res = await fetch(new URL('/api/v2/scheduler', running.masterUrl), { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('404 Not Found.');
  });

  it('checks the stream id of calls: missing 400, wrong 400, right 202; UNKNOWN is 501', async () => {
    const client = await subscribed();
    const revive = { type: 'REVIVE' };
    const missing = await client.call(revive, { 'mesos-stream-id': '' });
    expect(missing.status).toBe(400);
    const noHeader = await post(JSON.stringify({ ...revive, framework_id: { value: client.frameworkId } }));
    expect(noHeader.status).toBe(400);
    expect(noHeader.body).toBe("All non-subscribe calls should include the 'Mesos-Stream-Id' header");
    const wrong = await client.call(revive, { 'mesos-stream-id': 'not-it' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain("The stream ID 'not-it' included in this request didn't match");
    const upstreamName = await client.call(revive);
    expect(upstreamName).toMatchObject({ status: 202, body: '' });
    expect(upstreamName.headers['content-type']).toBeUndefined();
    const ourName = await postRaw(url, JSON.stringify({ ...revive, framework_id: { value: client.frameworkId } }), {
      'content-type': 'application/json',
      'Cluster-Stream-Id': client.streamId!,
    });
    expect(ourName.status).toBe(202);
    const unknown = await client.call({ type: 'UNKNOWN' });
    expect(unknown).toMatchObject({ status: 501, body: '501 Not Implemented.' });
    client.disconnect();
  });

  it('a broken subscription starts the failover timeout: calls get 403, before and after it expires', async () => {
    const client = new SchedulerClient(running.masterUrl);
    await client.subscribe({ ...FRAMEWORK, failover_timeout: 60 });
    await client.next('SUBSCRIBED');
    const { frameworkId, streamId } = client;
    client.disconnect();
    await waitFor(() => running.cluster.view.framework(frameworkId!)?.state === 'disconnected');
    const body = JSON.stringify({ type: 'REVIVE', framework_id: { value: frameworkId } });
    const during = await post(body, { 'content-type': 'application/json', 'mesos-stream-id': streamId! });
    expect(during).toMatchObject({ status: 403, body: 'Framework is not subscribed' });
    running.advance(60_000);
    const after = await post(body, { 'content-type': 'application/json', 'mesos-stream-id': streamId! });
    expect(after).toMatchObject({ status: 403, body: 'Framework cannot be found' });
  });

  it('ignores query strings on POST', async () => {
    const client = new SchedulerClient(new URL('/?x=1', running.masterUrl).toString());
    const res = await postRaw(
      new URL('/api/v1/scheduler?foo=bar', running.masterUrl),
      '{"type":"REVIVE","framework_id":{"value":"f"}}',
      {
        'content-type': 'application/json',
        'mesos-stream-id': 'x',
      },
    );
    expect(res.body).toBe('Framework cannot be found');
    void client;
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the spec's own message shapes, read beside upstream's", () => {
  it('ERROR carries its message at the top level too; REVIVE takes a single role; REQUEST takes top-level requests; an operation id may be a plain string', async () => {
    const first = await subscribed();
    const second = new SchedulerClient(running.masterUrl);
    await second.subscribe({ ...FRAMEWORK, id: { value: first.frameworkId } });
    await second.next('SUBSCRIBED');
    const error = await first.next('ERROR');
    expect(error).toMatchObject({
      type: 'ERROR',
      error: { message: 'Framework failed over' },
      message: 'Framework failed over',
    });

    expect((await second.call({ type: 'REVIVE', revive: { role: '*' } })).status).toBe(202);
    const request = await second.call({ type: 'REQUEST', requests: [{ agent_id: { value: running.agents[0]!.id } }] });
    expect(request.status).toBe(202);
    const ack = await second.call({
      type: 'ACKNOWLEDGE_OPERATION_STATUS',
      acknowledge_operation_status: {
        agent_id: { value: running.agents[0]!.id },
        operation_id: 'op-1',
        uuid: Buffer.alloc(16).toString('base64'),
      },
    });
    expect(ack.status).toBe(202);
    const noPayload = await second.call({ type: 'REQUEST' });
    expect(noPayload).toMatchObject({
      status: 400,
      body: "Failed to validate scheduler::Call: Expecting 'request' to be present",
    });
    second.disconnect();
  });
});

describe('allocation interval', () => {
  it('declined resources come back after --allocation-interval, which /state reports', async () => {
    const fast = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, allocationIntervalSeconds: 0.05 });
    try {
      const client = new SchedulerClient(fast.masterUrl);
      await client.subscribe(FRAMEWORK);
      const subscribedEvent = await client.next('SUBSCRIBED');
      const offers = await client.next('OFFERS');
      const frameworkId = subscribedEvent.subscribed.framework_id;
      const decline = {
        framework_id: frameworkId,
        type: 'DECLINE',
        decline: { offer_ids: [offers.offers.offers[0].id], filters: { refuse_seconds: 0 } },
      };
      expect((await client.call(decline)).status).toBe(202);
      const held = () => fast.cluster.view.framework(frameworkId.value)!.offers.size;
      fast.advance(49);
      expect(held()).toBe(0);
      fast.advance(1);
      expect(held()).toBe(1);
      expect((await client.next('OFFERS')).offers.offers).toHaveLength(1);
      const state = (await (await fetch(`${fast.masterUrl}/state`)).json()) as { flags: Record<string, string> };
      expect(state.flags['allocation_interval']).toBe('50ms');
      client.disconnect();
    } finally {
      await fast.close();
    }
  });
});
