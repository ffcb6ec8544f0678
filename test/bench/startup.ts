/**
 * Time to first offer: from just before `startCluster()` until a scheduler
 * that subscribes as soon as the cluster is up receives its first OFFERS
 * event, and the part of it spent in `startCluster()` alone.
 */
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster } from '../../src/start/cluster.js';
import { progress, spreadOf, type Spread } from './stats.js';

export interface StartupResult {
  readonly runs: number;
  readonly toFirstOffersMs: Spread;
  readonly startClusterMs: Spread;
}

export async function benchStartup(runs: number): Promise<StartupResult> {
  progress(`time to first offer: ${runs} runs`);
  const total: number[] = [];
  const start: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const cluster = await startCluster({ port: 0, agents: 3, time: 'realtime' });
    const t1 = performance.now();
    const client = new SchedulerClient(cluster.masterUrl);
    try {
      const subscribed = await client.subscribe({ user: 'bench', name: 'bench' });
      if (subscribed.status !== 200) throw new Error(`SUBSCRIBE answered ${subscribed.status}: ${subscribed.body}`);
      await client.next('OFFERS');
      total.push(performance.now() - t0);
      start.push(t1 - t0);
    } finally {
      client.disconnect();
      await cluster.close();
    }
  }
  return { runs, toFirstOffersMs: spreadOf(total), startClusterMs: spreadOf(start) };
}
