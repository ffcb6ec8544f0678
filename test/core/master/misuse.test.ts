/**
 * The protocol-misuse report: one test per kind, each showing the misuse
 * counted with its ids and the cluster's answer left as it was, and a
 * well-behaved framework whose report stays empty.
 */
import { describe, expect, it } from 'vitest';
import type { SimContext } from '../../../src/core/network/context.js';
import { EventLoop } from '../../../src/core/kernel/event-loop.js';
import type { Offer } from '../../../src/core/model/records.js';
import { MisuseLog } from '../../../src/core/master/misuse.js';
import {
  formatMisuse,
  MAX_EXAMPLES,
  type MisuseEntry,
  type MisuseKind,
} from '../../../src/core/master/misuse-report.js';
import { commandTask, connect, makeCluster, type TestCluster, type TestScheduler } from '../helpers.js';

function entries(cluster: TestCluster, frameworkId: string): readonly MisuseEntry[] {
  return cluster.view.misuse().frameworks.find((f) => f.frameworkId === frameworkId)?.misuses ?? [];
}

function entry(cluster: TestCluster, frameworkId: string, kind: MisuseKind): MisuseEntry | undefined {
  return entries(cluster, frameworkId).find((e) => e.kind === kind);
}

/** Launches one long task on the first offer, then suppresses further offers. */
function launch(s: TestScheduler, taskId = 't1'): string {
  const offer = s.firstOffer();
  expect(s.accept(offer.id, [commandTask(taskId, offer.agentId, 'sleep 100000')]).ok).toBe(true);
  expect(s.call({ type: 'SUPPRESS', roles: [] }).ok).toBe(true);
  return offer.agentId;
}

/** Declines every outstanding offer for an hour and suppresses more (a re-subscription revives them). */
function declineAll(s: TestScheduler): void {
  s.decline(
    s.offers().map((o) => o.id),
    3_600_000,
  );
  s.call({ type: 'SUPPRESS', roles: [] });
}

describe('unacknowledged updates', () => {
  it('count once the agent re-sends an update 30 s after its first delivery, not before', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const agentId = launch(s);
    const first = s.sink.updates()[0]!;
    expect(first.uuid).toBeDefined();
    cluster.advance(29_000);
    expect(entry(cluster, s.frameworkId, 'unacknowledged_update')).toBeUndefined();
    cluster.advance(2_000);
    const e = entry(cluster, s.frameworkId, 'unacknowledged_update')!;
    expect(e).toMatchObject({ count: 1, firstTimeMs: 30_000, lastTimeMs: 30_000 });
    expect(e.examples[0]!.ids).toEqual({ taskId: 't1', agentId, uuid: first.uuid });
    // Later retries of the same update are the same misuse.
    cluster.advance(200_000);
    expect(entry(cluster, s.frameworkId, 'unacknowledged_update')!.count).toBe(1);
  });

  it('do not count when each update is acknowledged, even late within the 30 s', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    launch(s);
    cluster.advance(25_000);
    s.acknowledgeAll();
    cluster.advance(25_000);
    s.acknowledgeAll();
    cluster.advance(120_000);
    expect(entries(cluster, s.frameworkId)).toEqual([]);
  });
});

describe('acknowledgements', () => {
  it('without a uuid are counted when the HTTP layer reports its refusal, for frameworks the master knows', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    cluster.acknowledgeRefused(s.frameworkId, 't1', 'a1');
    cluster.acknowledgeRefused('no-such-framework', 't1');
    const e = entry(cluster, s.frameworkId, 'acknowledge_without_uuid')!;
    expect(e.count).toBe(1);
    expect(e.examples[0]!.ids).toEqual({ taskId: 't1', agentId: 'a1' });
    expect(cluster.view.misuse().frameworks.map((f) => f.frameworkId)).toEqual([s.frameworkId]);
  });

  it('of an update never sent count; repeating an acknowledgement does not', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const agentId = launch(s);
    const update = s.sink.updates()[0]!;
    const ack = (uuid: string) => s.call({ type: 'ACKNOWLEDGE', agentId, taskId: 't1', uuid });
    expect(ack(update.uuid!).ok).toBe(true);
    expect(ack(update.uuid!).ok).toBe(true);
    expect(entries(cluster, s.frameworkId)).toEqual([]);
    const made = '0123456789abcdef0123456789abcdef';
    // The answer stays what it was: accepted, and forwarded to the agent for nothing.
    expect(ack(made).ok).toBe(true);
    const e = entry(cluster, s.frameworkId, 'acknowledge_unknown_update')!;
    expect(e.count).toBe(1);
    expect(e.examples[0]!.ids).toEqual({ taskId: 't1', agentId, uuid: made });
  });
});

describe('accepting an offer no longer valid', () => {
  it('counts a declined offer accepted, and the task still comes back TASK_LOST', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    expect(s.decline([offer.id], 3_600_000).ok).toBe(true);
    expect(s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 10')]).ok).toBe(true);
    expect(s.sink.updates().map((u) => [u.taskId, u.state])).toEqual([['t1', 'TASK_LOST']]);
    const e = entry(cluster, s.frameworkId, 'accept_invalid_offer')!;
    expect(e.count).toBe(1);
    expect(e.examples[0]!.ids).toEqual({ offerId: offer.id });
    expect(e.examples[0]!.detail).toContain('declined');
  });

  it('counts a rescinded offer accepted, and an offer used twice', () => {
    const cluster = makeCluster({ offerTimeoutMs: 5_000 });
    const s = connect(cluster);
    const stale = s.firstOffer();
    cluster.advance(5_000);
    expect(s.sink.of('RESCIND').map((r) => r.offerId)).toContain(stale.id);
    s.accept(stale.id, []);
    cluster.advance(1_000);
    const fresh = s.firstOffer();
    s.accept(fresh.id, [commandTask('t1', fresh.agentId, 'sleep 10', 'cpus:0.5;mem:32')]);
    s.accept(fresh.id, [commandTask('t2', fresh.agentId, 'sleep 10', 'cpus:0.5;mem:32')]);
    const e = entry(cluster, s.frameworkId, 'accept_invalid_offer')!;
    expect(e.count).toBe(2);
    expect(e.examples.map((x) => x.detail)).toEqual([
      expect.stringContaining('rescinded at 5.000 s'),
      expect.stringContaining('accepted at 6.000 s'),
    ]);
  });
});

describe('declining in a tight loop', () => {
  it('counts five short declines of one agent within a minute, once per burst', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    for (let i = 0; i < 4; i++) {
      expect(s.decline([s.firstOffer().id], 5_000).ok).toBe(true);
      cluster.advance(6_000);
    }
    expect(entry(cluster, s.frameworkId, 'decline_loop')).toBeUndefined();
    s.decline([s.firstOffer().id], 5_000);
    const e = entry(cluster, s.frameworkId, 'decline_loop')!;
    expect(e).toMatchObject({ count: 1, firstTimeMs: 24_000 });
    expect(e.examples[0]!.ids).toEqual({ agentId: cluster.agents[0]!.id });
  });

  it('counts an ACCEPT that launches no task as the decline it is', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    for (let i = 0; i < 5; i++) {
      const offer = s.firstOffer();
      const empty = { type: 'LAUNCH' as const, tasks: [] };
      const accept = {
        type: 'ACCEPT' as const,
        offerIds: [offer.id],
        operations: [empty],
        filters: { refuseMs: 5_000 },
      };
      expect(s.call(accept).ok).toBe(true);
      cluster.advance(6_000);
    }
    expect(entry(cluster, s.frameworkId, 'decline_loop')).toMatchObject({ count: 1 });
  });

  it('does not count declines with a long filter, nor short ones spread over more than a minute', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    for (let i = 0; i < 6; i++) {
      s.decline([s.firstOffer().id], 5_000);
      cluster.advance(16_000);
    }
    const slow = connect(cluster, { name: 'slow' });
    slow.decline(
      slow.offers().map((o) => o.id),
      20_000,
    );
    expect(cluster.view.misuse().frameworks).toEqual([]);
  });
});

describe('reconciliation after a re-subscription', () => {
  it('counts a framework with tasks that does not reconcile within a minute, at the minute', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 600_000 });
    launch(s);
    s.acknowledgeAll();
    cluster.advance(1_000);
    s.acknowledgeAll();
    s.disconnect();
    s.resubscribe();
    cluster.advance(59_000);
    s.acknowledgeAll();
    expect(entry(cluster, s.frameworkId, 'no_reconcile_after_resubscribe')).toBeUndefined();
    cluster.advance(2_000);
    // Overdue now: the report shows it before the framework does anything more.
    expect(entry(cluster, s.frameworkId, 'no_reconcile_after_resubscribe')).toMatchObject({
      count: 1,
      firstTimeMs: 61_000,
    });
    // A late RECONCILE is the same instance, now recorded.
    expect(s.call({ type: 'RECONCILE', tasks: [] }).ok).toBe(true);
    s.acknowledgeAll();
    expect(entry(cluster, s.frameworkId, 'no_reconcile_after_resubscribe')).toMatchObject({
      count: 1,
      firstTimeMs: 61_000,
    });
  });

  it('does not count a framework that reconciles, nor one without tasks', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { failoverTimeoutMs: 600_000 });
    launch(s);
    s.acknowledgeAll();
    cluster.advance(1_000);
    s.acknowledgeAll();
    s.resubscribe();
    expect(s.call({ type: 'RECONCILE', tasks: [] }).ok).toBe(true);
    declineAll(s);
    const idle = connect(cluster, { name: 'idle', failoverTimeoutMs: 600_000 });
    declineAll(idle);
    idle.resubscribe();
    declineAll(idle);
    cluster.advance(120_000);
    s.acknowledgeAll();
    expect(cluster.view.misuse().frameworks).toEqual([]);
  });
});

describe('calls on a stale stream id', () => {
  it('are refused as before and counted, with the stream named', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 600_000 });
    const old = s.streamId;
    s.resubscribe();
    const refused = cluster.call(s.frameworkId, old, { type: 'REVIVE', roles: [] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'STREAM_ID' } });
    expect(cluster.call(s.frameworkId, undefined, { type: 'REVIVE', roles: [] })).toMatchObject({
      ok: false,
      error: { code: 'STREAM_ID' },
    });
    const e = entry(cluster, s.frameworkId, 'stale_stream_id')!;
    expect(e.count).toBe(2);
    expect(e.examples.map((x) => x.ids)).toEqual([{ streamId: old }, {}]);
  });
});

describe('offers held past a minute', () => {
  it('show while outstanding and stay one instance once answered', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    cluster.advance(60_000);
    expect(entry(cluster, s.frameworkId, 'offer_held')).toBeUndefined();
    cluster.advance(1_000);
    const live = entry(cluster, s.frameworkId, 'offer_held')!;
    expect(live).toMatchObject({ count: 1, firstTimeMs: 60_000 });
    expect(live.examples[0]!.ids).toEqual({ offerId: offer.id, agentId: offer.agentId });
    s.decline([offer.id], 3_600_000);
    expect(entry(cluster, s.frameworkId, 'offer_held')).toMatchObject({ count: 1, firstTimeMs: 60_000 });
    expect(entry(cluster, s.frameworkId, 'offer_held')!.examples[0]!.detail).toContain('then declined');
  });
});

describe('a well-behaved framework', () => {
  it('subscribes, accepts, acknowledges every update, reconciles after failover: an empty report', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { failoverTimeoutMs: 600_000 });
    const [first, second] = s.offers();
    s.accept(first!.id, [commandTask('t1', first!.agentId, 'sleep 30')]);
    s.decline([second!.id], 3_600_000);
    s.call({ type: 'SUPPRESS', roles: [] });
    for (let i = 0; i < 10; i++) {
      cluster.advance(5_000);
      s.acknowledgeAll();
    }
    const before = s.sink;
    s.disconnect();
    cluster.advance(10_000);
    s.resubscribe();
    s.call({ type: 'RECONCILE', tasks: [] });
    s.call({ type: 'REVIVE', roles: [] });
    const [offer, ...rest] = s.offers();
    s.accept(offer!.id, [commandTask('t2', offer!.agentId, 'sleep 100000')], 3_600_000);
    declineAll(s);
    expect(rest).not.toEqual([]);
    for (let i = 0; i < 40; i++) {
      cluster.advance(5_000);
      s.acknowledgeAll();
    }
    expect(
      before
        .updates()
        .filter((u) => u.taskId === 't1')
        .map((u) => u.state),
    ).toContain('TASK_FINISHED');
    expect(s.states('t2')).toContain('TASK_RUNNING');
    const report = cluster.view.misuse();
    expect(report.frameworks).toEqual([]);
    expect(formatMisuse(report)).toEqual(['protocol misuse: none']);
  });
});

describe('the report as text', () => {
  it('names the framework, the kind, the count and times, an example and why', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { name: 'sloppy' });
    s.firstOffer();
    cluster.advance(61_000);
    const lines = formatMisuse(cluster.view.misuse());
    expect(lines[0]).toBe('protocol misuse (at 61.000 s):');
    expect(lines[1]).toBe(`  framework '${s.frameworkId}' (sloppy): offer_held x1, at 60.000 s`);
    expect(lines[2]).toMatch(
      /^ {4}e\.g\. at 60\.000 s: offer outstanding for 61\.000 s, not answered \[agent '.+', offer '.+'\]$/,
    );
    expect(lines[3]).toMatch(/^ {4}why: An outstanding offer keeps its resources/);
  });
});

describe('the log itself', () => {
  it('keeps a count and the first few examples, not every instance', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 600_000 });
    const old = s.streamId;
    s.resubscribe();
    for (let i = 0; i < 10; i++) {
      cluster.advance(1_000);
      cluster.call(s.frameworkId, old, { type: 'REVIVE', roles: [] });
    }
    const e = entry(cluster, s.frameworkId, 'stale_stream_id')!;
    expect(e).toMatchObject({ count: 10, firstTimeMs: 1_000, lastTimeMs: 10_000 });
    expect(e.examples).toHaveLength(MAX_EXAMPLES);
  });

  it('gives the same report for the same seed and inputs', () => {
    const run = () => {
      const cluster = makeCluster({ seed: 7, agents: 2 });
      const s = connect(cluster);
      for (let i = 0; i < 6; i++) {
        s.decline(
          s.offers().map((o) => o.id),
          1_000,
        );
        cluster.advance(2_000);
      }
      cluster.advance(70_000);
      return JSON.stringify(cluster.view.misuse());
    };
    const first = run();
    expect(first).toContain('decline_loop');
    expect(run()).toBe(first);
  });

  it('forgets the offers of a master that no longer leads', () => {
    const loop = new EventLoop();
    const log = new MisuseLog({ loop } as unknown as SimContext);
    const offer = { id: 'o1', frameworkId: 'f1', agentId: 'a1', role: '*', resources: [] } satisfies Offer;
    log.offerMade(offer);
    loop.runUntil(61_000);
    expect(log.report(() => undefined).frameworks.map((f) => f.misuses.map((m) => m.kind))).toEqual([['offer_held']]);
    log.masterChanged();
    expect(log.report(() => undefined).frameworks).toEqual([]);
  });
});
