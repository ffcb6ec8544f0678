/**
 * The typed scheduler client against a cluster in virtual time, in both
 * encodings: the event stream as an async iterable of typed events
 * (heartbeats hidden unless asked for), the stream id kept, a task
 * launched from an offer with the launch helper, its updates acknowledged
 * by their uuid, and the helpers' refusals as CallErrors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  CallError,
  DEFAULT_WAIT_MS,
  WaitTimeoutError,
  SchedulerClient,
  type Encoding,
  type SchedulerEvent,
  type SchedulerEventOf,
  type TaskState,
} from '../../src/client/index.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

let r: RunningCluster | undefined;
const clients: SchedulerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await r?.close();
  r = undefined;
});

/** Over HTTP, or through the cluster's in-process transport (no sockets). */
type Via = 'http' | 'in-process';

async function subscribed(
  encoding: Encoding,
  heartbeats?: boolean,
  via: Via = 'http',
): Promise<{ client: SchedulerClient; stream: AsyncGenerator<SchedulerEvent, void> }> {
  r = await startCluster({ agents: 1, time: 'virtual', seed: 3 });
  const client = new SchedulerClient(r.masterUrl, {
    encoding,
    ...(heartbeats === undefined ? {} : { heartbeats }),
    ...(via === 'in-process' ? { transport: r.inProcess } : {}),
  });
  clients.push(client);
  const answer = await client.subscribe({ user: 'root', name: 'typed', checkpoint: true });
  expect(answer.status).toBe(200);
  return { client, stream: client.events() };
}

/** The next event of the stream, by the iterator. */
async function take(stream: AsyncGenerator<SchedulerEvent, void>): Promise<SchedulerEvent> {
  const next = await stream.next();
  if (next.done === true) throw new Error('the stream ended');
  return next.value;
}

const WAYS: [Encoding, Via][] = [
  ['json', 'http'],
  ['protobuf', 'http'],
  ['json', 'in-process'],
  ['protobuf', 'in-process'],
];

describe.each(WAYS)('SchedulerClient in %s over %s', (encoding, via) => {
  it('hands out typed events, launches from an offer, and acknowledges each update by its uuid', async () => {
    const { client, stream } = await subscribed(encoding, undefined, via);
    const first = await take(stream);
    expect(first.type).toBe('SUBSCRIBED');
    if (first.type !== 'SUBSCRIBED') return;
    expect(first.subscribed.framework_id.value).toBe(client.frameworkId);
    expect(first.subscribed.heartbeat_interval_seconds).toBe(15);
    expect(client.streamId).toMatch(/^[0-9a-f-]{36}$/);
    // The HEARTBEAT sent after SUBSCRIBED is hidden: OFFERS come next.
    const offers = await take(stream);
    expect(offers.type).toBe('OFFERS');
    if (offers.type !== 'OFFERS') return;
    const offer = offers.offers.offers![0]!;
    const [task] = await client.launch(offer, { taskId: 'one', command: 'sleep 2', resources: { cpus: 0.5, mem: 64 } });
    expect(task!.agent_id.value).toBe(r!.agents[0]!.id);
    expect(task!.resources!.map((res) => [res.name, res.scalar?.value])).toEqual([
      ['cpus', 0.5],
      ['mem', 64],
    ]);

    const states: TaskState[] = [];
    for await (const event of stream) {
      if (event.type !== 'UPDATE') continue;
      const status = event.update.status;
      expect(typeof status.uuid).toBe('string');
      states.push(status.state);
      expect(await client.acknowledge(event)).toBe(true);
      if (status.state === 'TASK_RUNNING') r!.advance(2_000);
      if (status.state === 'TASK_FINISHED') break;
    }
    expect(states).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    // Acknowledged: no update is sent again, however long the cluster runs.
    r!.advance(60_000);
    await client.reconcile([{ taskId: 'one' }]);
    const reconciled = await client.waitForUpdate('one');
    // A task the master no longer holds (ended and acknowledged) is answered as upstream does.
    expect(reconciled.update.status.state).toBe('TASK_LOST');
    expect(reconciled.update.status.reason).toBe('REASON_RECONCILIATION');
    // An update without a uuid asks for no acknowledgement.
    expect(reconciled.update.status.uuid).toBeUndefined();
    expect(await client.acknowledge(reconciled)).toBe(false);
    expect(client.pending.filter((e) => e.type === 'UPDATE' && e.update.status.state !== 'TASK_FINISHED')).toEqual([]);
  });

  it('surfaces heartbeats when asked to', async () => {
    const { client } = await subscribed(encoding, true, via);
    const seen: string[] = [];
    for await (const event of client.events()) {
      seen.push(event.type);
      if (seen.filter((t) => t === 'HEARTBEAT').length === 2) break;
      if (event.type === 'OFFERS') r!.advance(15_000);
    }
    expect(seen).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'OFFERS', 'HEARTBEAT']);
  });
});

describe('SchedulerClient helpers', () => {
  it('declines, revives, suppresses, kills and tears down, and ends the iteration when the stream closes', async () => {
    const { client } = await subscribed('json');
    const offers = await client.waitFor('OFFERS');
    const offer = offers.offers.offers![0]!;
    await client.decline(offer, { refuse_seconds: 3600 });
    await client.suppress();
    await client.revive();
    const again = await client.waitFor('OFFERS', {
      where: (e) => e.offers.offers![0]!.agent_id.value === offer.agent_id.value,
    });
    await client.launch(again.offers.offers![0]!, { taskId: 'long', command: 'sleep 3600' });
    const running = await client.waitForUpdate('long', { state: 'TASK_STARTING' });
    await client.acknowledge(running);
    await client.acknowledge(await client.waitForUpdate('long', { state: 'TASK_RUNNING' }));
    await client.kill('long');
    const killed = await client.waitForUpdate('long', { state: 'TASK_KILLED' });
    expect(killed.update.status.source).toBe('SOURCE_EXECUTOR');
    await client.teardown();
    const rest: SchedulerEvent['type'][] = [];
    for await (const event of client.events()) rest.push(event.type);
    expect(client.closed).toBe(true);
    expect(rest.every((t) => t !== 'HEARTBEAT')).toBe(true);
  });

  it('throws a CallError naming the call when the master refuses it', async () => {
    const { client } = await subscribed('json');
    await client.waitFor('SUBSCRIBED');
    const stranger = new SchedulerClient(r!.masterUrl);
    clients.push(stranger);
    const refusal = await stranger.revive().catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(CallError);
    expect((refusal as CallError).status).toBe(400);
    expect((refusal as CallError).message).toMatch(/^REVIVE: 400 /);
  });

  it('refuses to launch more than an offer holds, naming the resource', async () => {
    const { client } = await subscribed('json');
    const offers: SchedulerEventOf<'OFFERS'> = await client.waitFor('OFFERS');
    const offer = offers.offers.offers![0]!;
    await expect(client.launch(offer, { taskId: 'big', resources: { cpus: 100 } })).rejects.toThrow(
      new RangeError(`task 'big': offer ${offer.id.value} has 4 cpus, the task needs 100`),
    );
  });
});

describe('the pitfalls a typed client spares its user', () => {
  it.each([
    'json',
    'protobuf',
  ] as const)('subscribe() rejects with the ERROR a refused framework gets (%s)', async (encoding) => {
    r = await startCluster({ agents: 1, time: 'virtual', seed: 3 });
    const client = new SchedulerClient(r.masterUrl, { encoding });
    clients.push(client);
    // Roles without the MULTI_ROLE capability: the master takes the connection, then refuses the framework.
    const refused = client.subscribe({ user: 'root', name: 'typed', roles: ['batch'] });
    await expect(refused).rejects.toThrow(expect.objectContaining({ name: 'SubscribeError' }));
    await expect(refused).rejects.toThrow(/MULTI_ROLE/);
  });

  it('a wait that times out names the event awaited, what came instead, and that the virtual clock never moved', async () => {
    const { client } = await subscribed('json', undefined, 'in-process');
    await client.waitFor('SUBSCRIBED');
    const waited = client.waitFor('UPDATE', { timeoutMs: 50 });
    await expect(waited).rejects.toThrow(WaitTimeoutError);
    await expect(waited).rejects.toThrow(
      /^timed out after 50 ms waiting for UPDATE: events came but none matched \(HEARTBEAT, OFFERS\)\. The cluster runs in virtual time and its clock has not moved since the wait began \(still at 0 ms\): move it \(cluster\.advance\(ms\)/,
    );
  });

  it('over HTTP the client cannot read the clock, and says how virtual time moves', async () => {
    const { client } = await subscribed('json');
    await client.waitFor('SUBSCRIBED');
    await client.waitFor('OFFERS');
    await expect(client.waitFor('UPDATE', { timeoutMs: 20 })).rejects.toThrow(
      /waiting for UPDATE: events came but none matched \(HEARTBEAT\)\. If the cluster runs in virtual time, its clock moves only when the test moves it/,
    );
  });

  it('waits by default well under a test runner’s own 5 s', () => {
    expect(DEFAULT_WAIT_MS).toBeLessThanOrEqual(3_000);
  });
});
