/**
 * Quiet pings (master/agent-health.ts): once a PING and its PONG went
 * through at once, the master's rounds skip their messages until something
 * on the link changes. What either side sees must stay as with messages: the
 * agent hears a ping every 15 s, and a partition, a rule or a crash that
 * comes later is noticed on the same schedule as a loud ping's.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_PING_TIMEOUT_MS, MAX_AGENT_PING_TIMEOUTS } from '../../../src/core/master/agent-health.js';
import { MASTER_PING_TIMEOUT_MS } from '../../../src/core/agent/flags.js';
import { PingWatch } from '../../../src/core/agent/ping-watch.js';
import { EventLoop } from '../../../src/core/kernel/event-loop.js';
import { Network } from '../../../src/core/network/network.js';
import { Rng } from '../../../src/core/kernel/rng.js';
import { Trace } from '../../../src/core/kernel/trace.js';
import { makeCluster } from '../helpers.js';

const QUIET_MS = 30 * 60_000;
/** Five missed pings take 75 s to 90 s from the last answer. */
const UNREACHABLE_AFTER_MS = AGENT_PING_TIMEOUT_MS * MAX_AGENT_PING_TIMEOUTS;

/** One agent, registered at 0 and so pinged at every multiple of 15 s, after half an hour of quiet pings. */
function quietCluster() {
  const cluster = makeCluster({ agents: 1 });
  const agentId = [...cluster.view.agents()][0]!.id;
  cluster.advance(QUIET_MS);
  return { cluster, agentId };
}

function timesOf(cluster: ReturnType<typeof makeCluster>, kind: string): number[] {
  return cluster.trace
    .entries()
    .filter((e) => e.kind === kind)
    .map((e) => e.timeMs);
}

describe('quiet pings', () => {
  it('the agent counts them as pings: it never takes its master for lost while they go on', () => {
    const { cluster } = quietCluster();
    expect(timesOf(cluster, 'agent:master-lost')).toEqual([]);
    expect(timesOf(cluster, 'agent:unreachable')).toEqual([]);
  });

  it('after a partition, the agent takes its master for lost 75 s after the last round, and the master marks it unreachable 75 to 90 s after', () => {
    const { cluster, agentId } = quietCluster();
    const partitionMs = cluster.now() + 7_000;
    cluster.advanceTo(partitionMs);
    cluster.partition(agentId, 'master');
    cluster.advance(2 * UNREACHABLE_AFTER_MS);
    const lastRoundMs = Math.floor(partitionMs / AGENT_PING_TIMEOUT_MS) * AGENT_PING_TIMEOUT_MS;
    expect(timesOf(cluster, 'agent:master-lost')[0]).toBe(lastRoundMs + MASTER_PING_TIMEOUT_MS);
    const [unreachableMs] = timesOf(cluster, 'agent:unreachable');
    expect(unreachableMs! - lastRoundMs).toBeGreaterThanOrEqual(UNREACHABLE_AFTER_MS);
    expect(unreachableMs! - lastRoundMs).toBeLessThanOrEqual(UNREACHABLE_AFTER_MS + AGENT_PING_TIMEOUT_MS);
  });

  it('a rule that drops the pings, added while they are quiet, is applied to the next one', () => {
    const { cluster, agentId } = quietCluster();
    const addedMs = cluster.now() + 3_000;
    cluster.advanceTo(addedMs);
    cluster.addNetworkRule({ from: 'master', to: agentId, types: ['PING'], action: 'drop' });
    cluster.advance(2 * UNREACHABLE_AFTER_MS);
    const drops = timesOf(cluster, 'net:drop');
    expect(drops[0]).toBe(Math.ceil(addedMs / AGENT_PING_TIMEOUT_MS) * AGENT_PING_TIMEOUT_MS);
    expect(timesOf(cluster, 'agent:unreachable')).toHaveLength(1);
  });

  it('a crashed agent misses the next round: the master marks it unreachable when it does not come back', () => {
    const { cluster, agentId } = quietCluster();
    cluster.crashAgent(agentId);
    const crashMs = cluster.now();
    cluster.advance(2 * UNREACHABLE_AFTER_MS);
    const [unreachableMs] = timesOf(cluster, 'agent:unreachable');
    expect(unreachableMs! - crashMs).toBeLessThanOrEqual(UNREACHABLE_AFTER_MS + AGENT_PING_TIMEOUT_MS);
    expect(timesOf(cluster, 'net:lost').length).toBeGreaterThanOrEqual(MAX_AGENT_PING_TIMEOUTS);
  });
});

describe('the ping watch', () => {
  /** A watch heard at 0, then pinged quietly by a master that reports its last quiet ping. */
  function watched() {
    const loop = new EventLoop();
    const network = new Network(loop, new Trace(loop), new Rng(1).fork('network'));
    let lastQuietMs: number | undefined;
    network.reportQuietPings({
      lastPingMs: () => lastQuietMs,
      goOn: () => lastQuietMs !== undefined,
      linkChanged: () => {},
    });
    const lost: number[] = [];
    const watch = new PingWatch(loop, network, 'agent-1', MASTER_PING_TIMEOUT_MS, () => lost.push(loop.now()));
    watch.heard();
    const quietUntil = (ms: number) => {
      for (let t = AGENT_PING_TIMEOUT_MS; t <= ms; t += AGENT_PING_TIMEOUT_MS) {
        loop.runUntil(t);
        lastQuietMs = t;
      }
    };
    return { loop, network, lost, quietUntil, end: () => (lastQuietMs = undefined) };
  }

  it('sleeps while the pings are quiet and, woken when they end, counts the silence from the last of them', () => {
    const { loop, network, lost, quietUntil, end } = watched();
    quietUntil(600_000);
    const lastMs = loop.now();
    loop.runUntil(lastMs + 5_000);
    network.quietPingsEnded('agent-1');
    end();
    loop.runUntil(lastMs + 10 * MASTER_PING_TIMEOUT_MS);
    expect(lost).toEqual([lastMs + MASTER_PING_TIMEOUT_MS]);
  });

  it('keeps the last quiet ping of a master that another replaced', () => {
    const { loop, network, lost, quietUntil } = watched();
    quietUntil(300_000);
    const lastMs = loop.now();
    loop.runUntil(lastMs + 5_000);
    network.reportQuietPings({ lastPingMs: () => undefined, goOn: () => false, linkChanged: () => {} });
    loop.runUntil(lastMs + 10 * MASTER_PING_TIMEOUT_MS);
    expect(lost).toEqual([lastMs + MASTER_PING_TIMEOUT_MS]);
  });

  it('keeps it too when the master is replaced before the watch first slept', () => {
    const { loop, network, lost, quietUntil } = watched();
    quietUntil(30_000);
    network.reportQuietPings({ lastPingMs: () => undefined, goOn: () => false, linkChanged: () => {} });
    loop.runUntil(10 * MASTER_PING_TIMEOUT_MS);
    expect(lost).toEqual([30_000 + MASTER_PING_TIMEOUT_MS]);
  });
});
