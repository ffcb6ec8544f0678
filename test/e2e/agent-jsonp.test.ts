/**
 * What upstream's web UI does with an agent, in a real headless Chromium:
 * a page of its own origin (served here, on loopback) finds the agent's
 * address in the master's `/master/state` (its `pid`), and loads the
 * agent's `/metrics/snapshot`, `/slave(1)/monitor/statistics` and the
 * task's stdout through `/files/read` by jsonp, as `<script>` tags from
 * that address.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningCluster } from '../../src/start/cluster.js';
import { startWithOneTask } from '../http/agent/one-task.js';
import { chromiumMissing, eventually, launchChromium, watchErrors, type Browser } from './browser.js';

if (chromiumMissing !== undefined) console.warn(`agent jsonp browser test skipped: ${chromiumMissing}`);

/** The page: each load calls back into `window.loaded`, keyed by what it loaded. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>agent</title></head>
<body><script>
  window.loaded = {};
  window.load = (agent, path, name) => {
    window[name] = (data) => { window.loaded[name] = data; };
    const script = document.createElement('script');
    script.src = '//' + agent + path + (path.includes('?') ? '&' : '?') + 'jsonp=' + name;
    document.body.appendChild(script);
  };
</script></body></html>`;

describe.skipIf(chromiumMissing !== undefined)(
  'an agent read by jsonp from a page in Chromium',
  { timeout: 60_000 },
  () => {
    let r: RunningCluster;
    let frameworkId: string;
    let site: Server;
    let browser: Browser;

    beforeAll(async () => {
      ({ cluster: r, frameworkId } = await startWithOneTask(11, 'echo started; sleep 3600'));
      site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      browser = await launchChromium();
    });

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => site?.close(resolve));
      await r?.close();
    });

    it("loads its metrics, its executors statistics and a task's stdout from its own address", async () => {
      const state = (await (await fetch(new URL('/master/state', r.masterUrl))).json()) as {
        slaves: { pid: string }[];
      };
      const agent = state.slaves[0]!.pid.slice('slave(1)@'.length);
      const page = await browser.context.newPage();
      const errors: string[] = [];
      watchErrors(page, errors);
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      await page.evaluate((address) => {
        const w = globalThis as unknown as { load: (agent: string, path: string, name: string) => void };
        w.load(address, '/metrics/snapshot', 'metrics');
        w.load(address, '/slave(1)/monitor/statistics', 'statistics');
      }, agent);
      const stdout = `/files/read?path=${encodeURIComponent(`/frameworks/${frameworkId}/executors/sleeper/runs/latest/stdout`)}&offset=0`;
      await page.evaluate(
        ([address, path]) => {
          const w = globalThis as unknown as { load: (agent: string, path: string, name: string) => void };
          w.load(address!, path!, 'file');
        },
        [agent, stdout],
      );
      const loaded = () => page.evaluate(() => (globalThis as unknown as { loaded: Record<string, unknown> }).loaded);
      await eventually(async () => Object.keys(await loaded()).sort()).toEqual(['file', 'metrics', 'statistics']);
      const { metrics, statistics, file } = (await loaded()) as {
        file: { data: string; offset: number };
        metrics: Record<string, number>;
        statistics: { framework_id: string; executor_id: string; statistics: Record<string, number> }[];
      };
      expect(metrics).toMatchObject({ 'slave/registered': 1, 'slave/tasks_running': 1, 'slave/executors_running': 1 });
      expect(metrics['slave/cpus_used']).toBeCloseTo(0.6);
      expect(statistics).toHaveLength(1);
      expect(statistics[0]).toMatchObject({ framework_id: frameworkId, executor_id: 'sleeper' });
      expect(statistics[0]!.statistics.cpus_limit).toBeCloseTo(0.6);
      expect(statistics[0]!.statistics.mem_limit_bytes).toBe(96 * 1024 * 1024);
      expect(file).toEqual({ data: 'started\n', offset: 0 });
      expect(errors).toEqual([]);
    });
  },
);
