/**
 * A failed core stops the cluster loudly instead of serving a broken
 * state: one fatal log line with the seed and the last trace entries,
 * every listener closed, every later input refused, and `close()`
 * rejecting with the failure.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { ClusterFailure } from '../../src/runtime/driver.js';
import { startCluster } from '../../src/start/cluster.js';

describe('a failure of the core', () => {
  it('stops every listener, refuses later inputs and is reported once with the seed', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()),
    });
    const failures: ClusterFailure[] = [];
    const running = await startCluster({
      port: 0,
      agents: 1,
      time: 'virtual',
      seed: 'fail-1',
      logger: pino({ level: 'info' }, sink),
      onFailure: (f) => failures.push(f),
    });
    const client = new SchedulerClient(running.masterUrl);
    await client.subscribe({ user: 'u', name: 'n' });
    await client.next('OFFERS');
    const closed = client.next(() => false, 10_000).catch((error: Error) => error.message);

    expect(() =>
      running.driver.input(() => {
        throw new Error("invariant: agent 'x' allocator holds {cpus:1}, master accounts {}");
      }),
    ).toThrow(ClusterFailure);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.seed).toBe('fail-1');
    expect(failures[0]!.lastEntries.some((line) => line.includes('framework:subscribed'))).toBe(true);
    const fatal = lines.find((l) => l['level'] === 60);
    expect(fatal?.['msg']).toMatch(/^cluster stopped \(seed 'fail-1'\): invariant: agent 'x'/);

    expect(await closed).toBe('event stream closed');
    expect(() => running.driver.input((c) => c.advance(1))).toThrow(ClusterFailure);
    await expect(fetch(`${running.masterUrl}/health`)).rejects.toThrow();
    await expect(running.close()).rejects.toBeInstanceOf(ClusterFailure);
    expect(failures).toHaveLength(1);
  });
});
