/**
 * A real third-party scheduler library, `mesos-framework` from npm, unchanged,
 * against `clustersim up` over real HTTP in real time: it subscribes, gets
 * offers, launches `sleep 1` and a long task from its own task list, and
 * acknowledges every update itself; the test then kills the long task,
 * reconciles (explicitly and implicitly) and tears the framework down, all
 * through the library's methods, and checks the master's view over the read
 * endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUp, type UpProcess } from './cli-process.js';
import { createHarness, errorText, shellCommand, type Harness, type LibraryStatus } from './mesos-framework-harness.js';

const NAME = 'mesos-framework-e2e';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let up: UpProcess;
let harness: Harness | undefined;

beforeAll(async () => {
  up = await startUp(['--agents', '2', '--log-level', 'warn']);
});
afterAll(async () => {
  harness?.dispose();
  expect(await up.stop()).toBe(0);
});

interface FrameworkJson {
  id: string;
  name: string;
  user: string;
  failover_timeout: number;
  tasks: { id: string; state: string }[];
  completed_tasks: { id: string; state: string }[];
}

async function frameworks(): Promise<{ frameworks: FrameworkJson[]; completed_frameworks: FrameworkJson[] }> {
  const res = await fetch(new URL('/frameworks', up.masterUrl));
  expect(res.status).toBe(200);
  return (await res.json()) as { frameworks: FrameworkJson[]; completed_frameworks: FrameworkJson[] };
}

/** Polls `read` every 20 ms until it returns something. */
async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const statusOf = (data: unknown): LibraryStatus => (data as { status: LibraryStatus }).status;
const isTask = (kind: string) => (id: string) => id.startsWith(`${NAME}.${kind}-1.`);
const update = (match: (s: LibraryStatus) => boolean) => (data: unknown) => match(statusOf(data));

describe('mesos-framework (npm) against clustersim up', () => {
  it('subscribes, runs and acknowledges tasks, kills, reconciles and tears down through the library', async () => {
    const resources = { cpus: 0.5, mem: 64, disk: 0, ports: 0 };
    const h = (harness = createHarness(up.masterUrl, {
      frameworkName: NAME,
      tasks: {
        short: { priority: 1, commandInfo: shellCommand('sleep 1'), resources },
        long: { priority: 2, commandInfo: shellCommand('sleep 3600'), resources },
      },
      // The library's default stream timeout (10 s without a byte) is kept:
      // clustersim's streams carry a HEARTBEAT after 5 s of silence.
      // Re-subscription after the stream ends: 50 ms instead of 1 s.
      exponentialBackoffMinimum: 0.05,
    }));
    const s = h.scheduler;
    await h.waitFor('ready');
    s.subscribe();

    // SUBSCRIBED, with the stream id taken from the Mesos-Stream-Id header; a HEARTBEAT right after it.
    const subscribed = (await h.waitFor('subscribed')).data as { frameworkId: string; mesosStreamId: string };
    expect(subscribed.frameworkId).toMatch(/-0000$/);
    expect(subscribed.mesosStreamId).toMatch(UUID);
    await h.waitFor('heartbeat');
    const offers = (await h.waitFor('offers')).data as {
      offers: { agent_id: { value: string }; url: { address: { ip: string } } }[];
    };
    expect(offers.offers).toHaveLength(2);
    for (const offer of offers.offers) expect(offer.url.address.ip).toBe('127.0.0.1');
    const registered = await until('the framework in /frameworks', async () =>
      (await frameworks()).frameworks.find((f) => f.id === subscribed.frameworkId),
    );
    expect(registered).toMatchObject({ name: NAME, user: 'root', failover_timeout: 604800 });

    // The library launches both tasks and acknowledges each update; the next
    // update of a task comes only once the previous one is acknowledged.
    const isShort = isTask('short');
    const isLong = isTask('long');
    const finished = statusOf(
      (
        await h.waitFor(
          'update',
          update((st) => isShort(st.task_id.value) && st.state === 'TASK_FINISHED'),
          { timeoutMs: 10_000 },
        )
      ).data,
    );
    const shortUpdates = h.updates().filter((st) => isShort(st.task_id.value));
    expect(shortUpdates.map((st) => st.state)).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    for (const st of shortUpdates) {
      expect(st.source).toBe('SOURCE_EXECUTOR');
      expect(Buffer.from(st.uuid ?? '', 'base64')).toHaveLength(16);
    }
    const shortId = finished.task_id.value;
    // The terminal acknowledgement reached the master: the task is completed.
    await until('the finished task among completed_tasks', async () => {
      const fw = (await frameworks()).frameworks.find((f) => f.id === subscribed.frameworkId);
      return fw?.completed_tasks.find((t) => t.id === shortId && t.state === 'TASK_FINISHED');
    });

    const running = statusOf(
      (
        await h.waitFor(
          'update',
          update((st) => isLong(st.task_id.value) && st.state === 'TASK_RUNNING'),
        )
      ).data,
    );
    const longId = running.task_id.value;
    const longAgent = running.agent_id!.value;
    expect(
      h
        .updates()
        .filter((st) => st.task_id.value === longId)
        .map((st) => st.state),
    ).toEqual(['TASK_STARTING', 'TASK_RUNNING']);

    // Explicit reconciliation of a known task: its latest state from the master, no uuid.
    let from = h.events.length;
    s.reconcile(longId, longAgent);
    const explicit = statusOf(
      (
        await h.waitFor(
          'update',
          update((st) => st.reason === 'REASON_RECONCILIATION'),
          { from },
        )
      ).data,
    );
    expect(explicit).toMatchObject({
      task_id: { value: longId },
      state: 'TASK_RUNNING',
      source: 'SOURCE_MASTER',
      agent_id: { value: longAgent },
    });
    expect(explicit.uuid).toBeUndefined();

    // Explicit reconciliation of a task the master does not know: TASK_LOST.
    from = h.events.length;
    s.reconcile('no-such-task', longAgent);
    const unknown = statusOf(
      (
        await h.waitFor(
          'update',
          update((st) => st.reason === 'REASON_RECONCILIATION'),
          { from },
        )
      ).data,
    );
    expect(unknown).toMatchObject({ task_id: { value: 'no-such-task' }, state: 'TASK_LOST', source: 'SOURCE_MASTER' });
    expect(unknown.uuid).toBeUndefined();

    // Implicit reconciliation: every task the master knows, here only the long one.
    from = h.events.length;
    s.reconcile();
    await h.waitFor('sent_reconcile', undefined, { from });
    const implicit = statusOf(
      (
        await h.waitFor(
          'update',
          update((st) => st.reason === 'REASON_RECONCILIATION'),
          { from },
        )
      ).data,
    );
    expect(implicit).toMatchObject({ task_id: { value: longId }, state: 'TASK_RUNNING', source: 'SOURCE_MASTER' });

    // Kill through the library: TASK_KILLED from the executor, acknowledged, then completed.
    from = h.events.length;
    s.kill(longId, longAgent);
    await h.waitFor('sent_kill', undefined, { from });
    const killedEvent = await h.waitFor(
      'update',
      update((st) => st.task_id.value === longId && st.state === 'TASK_KILLED'),
      { from },
    );
    const killed = statusOf(killedEvent.data);
    expect(killed.source).toBe('SOURCE_EXECUTOR');
    expect(Buffer.from(killed.uuid ?? '', 'base64')).toHaveLength(16);
    const done = await until('the killed task among completed_tasks', async () => {
      const fw = (await frameworks()).frameworks.find((f) => f.id === subscribed.frameworkId);
      return fw?.completed_tasks.some((t) => t.id === longId && t.state === 'TASK_KILLED') ? fw : undefined;
    });
    expect(done.tasks).toEqual([]);
    // Neither task is to be restarted, and nothing the library did was refused.
    expect(s.launchedTasks).toEqual([]);
    expect(s.pendingTasks).toEqual([]);
    expect(h.errorMessages()).toEqual([]);
    // Six acknowledgements (three updates per task); none for the reconciliation updates, which carry no uuid.
    await h.waitFor('sent_acknowledge', undefined, { from: killedEvent.index });
    expect(h.events.filter((e) => e.name === 'sent_acknowledge')).toHaveLength(6);

    // Teardown through the library: the master closes the stream; the library
    // then re-subscribes with its framework id, and the master refuses a
    // removed framework with an ERROR event.
    from = h.events.length;
    s.teardown();
    await h.waitFor('sent_teardown', undefined, { from });
    const refused = await h.waitFor('error', (e) => errorText(e).startsWith('Error received from Mesos master'), {
      from,
    });
    h.dispose();
    expect(errorText(refused.data)).toMatch(/^Error received from Mesos master: Framework has been removed$/);
    expect(h.errorMessages(from)).toContain('Long-running connection was closed!');
    const after = await until('the framework among completed_frameworks', async () => {
      const all = await frameworks();
      return all.frameworks.some((f) => f.id === subscribed.frameworkId) ? undefined : all;
    });
    const completed = after.completed_frameworks.find((f) => f.id === subscribed.frameworkId);
    expect(completed?.completed_tasks.map((t) => [t.id, t.state]).sort()).toEqual(
      [
        [longId, 'TASK_KILLED'],
        [shortId, 'TASK_FINISHED'],
      ].sort(),
    );
    // Every update acknowledged with its uuid, none of the master's, offers answered: no protocol misuse.
    const misuse = (await (await fetch(new URL('/sim/v1/misuse', up.masterUrl))).json()) as { frameworks: unknown[] };
    expect(misuse.frameworks).toEqual([]);
  });
});
