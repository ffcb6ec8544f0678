/**
 * The dashboard in a real headless Chromium: a virtual cluster on port 0,
 * the page at `/`, a task launched by a scheduler over the HTTP API, and
 * time moved only by the page's clock buttons until the page shows the
 * task TASK_FINISHED.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SchedulerClient, type JsonEvent } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import {
  chromiumMissing,
  eventually,
  launchChromium,
  shownMs,
  text,
  watchErrors,
  type Browser,
  dashboardCluster,
} from './browser.js';
import { acknowledgeAll, sleepTask } from './dashboard-scheduler.js';

if (chromiumMissing !== undefined) console.warn(`dashboard browser tests skipped: ${chromiumMissing}`);

// A browser starts slowly on a loaded machine: generous bounds, never a wait on them when all is well.
describe.skipIf(chromiumMissing !== undefined)('the dashboard in Chromium', { timeout: 60_000 }, () => {
  let running: RunningCluster;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    running = await dashboardCluster();
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchErrors(page, errors);
  }, 60_000);
  afterEach(() => {
    // An exception in the page, a refused load (the page's policy) or a failed request is a bug.
    expect(errors).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  const clockMs = () => shownMs(page);

  it('shows the agents, the clock at zero and the live event timeline', async () => {
    await page.goto(running.masterUrl);
    await eventually(() => page.locator('cs-agents tbody tr').count()).toBe(2);
    await eventually(() => text(page.locator('cs-clock .clock-time'))).toBe('0.000 s');
    await eventually(() => text(page.locator('cs-clock .clock-mode'))).toBe('virtual time');
    await eventually(() => page.locator('cs-summary [data-live]').getAttribute('data-live')).toBe('live');
    await eventually(() => page.locator('cs-timeline li[data-kind="cluster:start"]').count()).toBe(1);
    const cpus = page.locator('cs-agents tbody tr').first().locator('[data-resource="cpus"] .free');
    await eventually(() => text(cpus)).toBe('4');
  });

  it('follows a task to TASK_FINISHED while the clock buttons move time', async () => {
    const client = new SchedulerClient(running.masterUrl);
    await client.subscribe({
      user: 'root',
      name: 'dashboard-test',
      roles: ['web'],
      capabilities: [{ type: 'MULTI_ROLE' }],
    });
    await client.next('SUBSCRIBED');
    const offer = (await client.next('OFFERS')).offers.offers[0] as JsonEvent;
    await eventually(() => text(page.locator('cs-frameworks tbody tr td[data-column="Name"]'))).toBe('dashboard-test');
    await eventually(() => page.locator('cs-offers tbody tr').count()).toBe(2);
    await eventually(() => page.locator('cs-summary span').allTextContents()).toEqual(
      expect.arrayContaining(['2 agents', '1 framework']),
    );
    await eventually(() => text(page.locator('cs-roles tbody tr td[data-column="Role"]'))).toBe('web');

    const acked: string[] = [];
    const acking = acknowledgeAll(client, acked);
    const accepted = await client.call({
      type: 'ACCEPT',
      accept: {
        offer_ids: [offer.id],
        operations: [{ type: 'LAUNCH', launch: { task_infos: [sleepTask(offer, 'sleep 2')] } }],
      },
    });
    expect(accepted.status).toBe(202);
    const row = page.locator('cs-tasks tbody tr[data-key$="/nightly-report"]');
    await eventually(() => row.count()).toBe(1);

    // Advance by the step chosen: the clock shown moves by it.
    const before = await clockMs();
    await page.locator('cs-clock select[name="step"]').selectOption('1000');
    await page.locator('cs-clock button[name="advance"]').click();
    await eventually(() => page.locator('cs-clock .clock-time').getAttribute('data-time-ms')).toBe(
      String(before + 1000),
    );

    // Run until idle: the command ends two seconds after it started, and the clock shows where the run stopped.
    const beforeIdle = await clockMs();
    await page.locator('cs-clock button[name="run-until-idle"]').click();
    await eventually(() => text(page.locator('cs-clock .clock-result'))).toContain('idle at');
    expect(await clockMs()).toBeGreaterThan(beforeIdle);

    await eventually(() => text(row.locator('td[data-column="State"]'))).toBe('TASK_FINISHED');
    await eventually(() => row.locator('.history [data-state]').allTextContents()).toEqual([
      'TASK_STARTING',
      'TASK_RUNNING',
      'TASK_FINISHED',
    ]);
    await eventually(() => page.locator('cs-timeline li[data-kind="task:status"]').count()).toBeGreaterThan(0);
    await eventually(async () => acked).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    client.disconnect();
    await acking;
  });

  it('starts a new timeline and shows the clock at zero after a reset', async () => {
    await eventually(() => clockMs()).toBeGreaterThan(0);
    const reset = await fetch(new URL('/sim/v1/reset', running.masterUrl), {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(reset.status).toBe(200);
    await eventually(() => text(page.locator('cs-clock .clock-time'))).toBe('0.000 s');
    await eventually(() => page.locator('cs-tasks tbody tr').count()).toBe(0);
    await eventually(() => page.locator('cs-timeline li[data-kind="task:status"]').count()).toBe(0);
    await eventually(() => page.locator('cs-timeline li[data-kind="cluster:start"]').count()).toBe(1);
    await eventually(() => page.locator('cs-summary [data-live]').getAttribute('data-live')).toBe('live');
  });
});

describe.skipIf(chromiumMissing !== undefined)('the dashboard in Chromium, in real time', { timeout: 60_000 }, () => {
  it('shows the clock moving and no buttons to move it, and says so when the master is gone', async () => {
    const running = await startCluster({ host: '127.0.0.1', port: 0, agents: 1, logLevel: 'silent' });
    let closed = false;
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      watchErrors(page, errors);
      await page.goto(running.masterUrl);
      await eventually(() => text(page.locator('cs-clock .clock-mode'))).toBe('real time');
      expect(await page.locator('cs-clock .clock-controls').isHidden()).toBe(true);
      expect(await page.locator('cs-clock button[name="advance"]').isVisible()).toBe(false);
      // Nothing happens in this cluster: the page's own reads move the clock shown.
      const first = await shownMs(page);
      await eventually(() => shownMs(page)).toBeGreaterThan(first);
      expect(errors).toEqual([]);

      closed = true;
      await running.close();
      await eventually(() => page.locator('cs-summary [data-live]').getAttribute('data-live')).toBe('reconnecting');
      await eventually(() => text(page.locator('.banner'))).toMatch(
        /^master unreachable since \d\d:\d\d:\d\d \(what is shown is as of cluster time \d+\.\d{3} s\): /,
      );
      expect(await page.locator('.banner').isVisible()).toBe(true);
      // What the page showed stays, greyed: the figures are those of the last read that worked.
      expect(await page.locator('main').getAttribute('class')).toBe('stale');
      expect(await page.locator('cs-agents tbody tr').count()).toBe(1);
    } finally {
      await browser.close();
      if (!closed) await running.close();
    }
  });
});
