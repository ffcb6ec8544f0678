/**
 * The dashboard says why, in a real headless Chromium, on a virtual
 * cluster on port 0: a failed task's message, reason and source; an
 * unreachable agent still listed, its state coloured; offers made and
 * declined folded into one line of the timeline; the resources and tasks
 * charts drawn from the page's samples; and, when the master goes, a
 * banner saying since when, over what the page last read, greyed.
 *
 * With `CLUSTERSIM_SCREENSHOTS` naming a directory (`docs/images`), the
 * test also writes the pictures of each there.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { SchedulerClient, type JsonEvent } from '../../src/client/scheduler-client.js';
import type { RunningCluster } from '../../src/start/cluster.js';
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

const SCREENSHOTS = process.env['CLUSTERSIM_SCREENSHOTS'];

/** Writes a picture of `what` when asked for them. */
async function picture(what: Locator | Page, name: string): Promise<void> {
  if (SCREENSHOTS !== undefined) await what.screenshot({ path: join(SCREENSHOTS, `dashboard-${name}.png`) });
}

/** The page's window as far as the tests need it (they are compiled without the DOM's types). */
type Win = { getComputedStyle(el: unknown): { color: string; filter: string } };

/** The y coordinates a chart's path passes through. */
const heights = (d: string): Set<string> => new Set([...d.matchAll(/[ML][\d.]+,([\d.]+)/g)].map((m) => m[1]!));

// A browser starts slowly on a loaded machine: generous bounds, never a wait on them when all is well.
describe.skipIf(chromiumMissing !== undefined)('the dashboard says why, in Chromium', { timeout: 60_000 }, () => {
  let running: RunningCluster;
  let closed = false;
  let browser: Browser;
  let page: Page;
  let client: SchedulerClient;
  let acking: Promise<void>;
  const errors: string[] = [];

  const post = async (path: string, body: object) => {
    const res = await fetch(new URL(path, running.masterUrl), {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    running = await dashboardCluster();
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    watchErrors(page, errors);
    client = new SchedulerClient(running.masterUrl);
    await client.subscribe({ user: 'root', name: 'why', roles: ['web'], capabilities: [{ type: 'MULTI_ROLE' }] });
    await client.next('SUBSCRIBED');
    acking = acknowledgeAll(client, []);
  }, 60_000);
  afterEach(() => {
    // An exception in the page, a refused load or a failed request is a bug (until the master is closed on purpose).
    expect(errors).toEqual([]);
  });
  afterAll(async () => {
    client?.disconnect();
    await acking;
    await browser?.close();
    if (!closed) await running?.close();
  });

  it("folds offers made and declined into one line, and shows a failed task's message, reason and source", async () => {
    await page.goto(running.masterUrl);
    await eventually(() => page.locator('cs-agents tbody tr').count()).toBe(2);
    const offers = (await client.next('OFFERS')).offers.offers as JsonEvent[];
    const [kept, declined] = [offers[0]!, offers[1]!];
    const launch = {
      offer_ids: [kept.id],
      operations: [{ type: 'LAUNCH', launch: { task_infos: [sleepTask(kept, 'sleep 600', 'doomed')] } }],
    };
    expect((await client.call({ type: 'ACCEPT', accept: launch })).status).toBe(202);
    // The other agent's offer, declined again and again: churn.
    let offer = declined;
    for (let round = 0; round < 3; round++) {
      const decline = { offer_ids: [offer.id], filters: { refuse_seconds: 1 } };
      expect((await client.call({ type: 'DECLINE', decline })).status).toBe(202);
      await post('/sim/v1/advance', { ms: 2_000 });
      offer = (await client.next('OFFERS')).offers.offers[0] as JsonEvent;
    }
    const row = page.locator('cs-tasks tbody tr[data-key$="/doomed"]');
    await eventually(() => text(row.locator('td[data-column="State"]'))).toBe('TASK_RUNNING');

    const groups = page.locator('cs-timeline ol.timeline > li.churn');
    await eventually(async () =>
      Math.max(0, ...(await groups.evaluateAll((all) => all.map((g) => Number(g.getAttribute('data-count')))))),
    ).toBeGreaterThanOrEqual(4);
    // No offer or decline stands on a line of its own; the folded ones show only when their line is opened.
    expect(
      await page
        .locator(
          'cs-timeline ol.timeline > li[data-kind="offer:create"], cs-timeline ol.timeline > li[data-kind="call:decline"]',
        )
        .count(),
    ).toBe(0);
    const group = groups.first();
    expect(await group.locator('li[data-kind="call:decline"]').count()).toBeGreaterThan(0);
    expect(await group.locator('.churn-entries').isVisible()).toBe(false);
    expect(await text(group.locator(':scope > .data'))).toMatch(/^\d+ offer and decline events/);
    await group.locator('button.churn-toggle').click();
    await eventually(() => group.locator('li[data-kind="offer:create"]').first().isVisible()).toBe(true);
    await group.locator('button.churn-toggle').click();
    expect(await group.locator('.churn-entries').isVisible()).toBe(false);
    // A filter looks inside the folded lines: a line shows while one of its entries matches.
    await page.locator('cs-timeline input[name="filter"]').fill('call:decline');
    await eventually(() => group.isVisible()).toBe(true);
    expect(await page.locator('cs-timeline ol.timeline > li[data-kind="cluster:start"]').isVisible()).toBe(false);
    await page.locator('cs-timeline input[name="filter"]').fill('');
    await eventually(() => page.locator('cs-timeline ol.timeline > li[data-kind="cluster:start"]').isVisible()).toBe(
      true,
    );

    // The task's memory rises past its container's limit: the agent kills it, and says why.
    await post('/sim/v1/faults', { type: 'memory_spike', task_id: 'doomed', mib: 512 });
    await post('/sim/v1/advance', { ms: 1_000 });
    await eventually(() => text(row.locator('td[data-column="State"]'))).toBe('TASK_FAILED');
    const why = row.locator('td[data-column="Last status"]');
    await eventually(() => text(why.locator('.status-reason'))).toBe('REASON_CONTAINER_LIMITATION_MEMORY');
    expect(await text(why.locator('.status-message'))).toMatch(/^Memory limit exceeded: /);
    expect(await text(why.locator('.status-source'))).toBe('SOURCE_AGENT');
    await picture(page.locator('cs-tasks'), 'failed-task');
  });

  it('lists an unreachable agent with its state coloured', async () => {
    const agentId = (declinedAgent: string) => page.locator(`cs-agents tbody tr[data-key="${declinedAgent}"]`);
    const ids = await page
      .locator('cs-agents tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')!));
    const taskAgent = await page
      .locator('cs-tasks tbody tr[data-key$="/doomed"] td[data-column="Agent"] span')
      .getAttribute('title');
    const other = ids.find((id) => id !== taskAgent)!;
    await post('/sim/v1/faults', { type: 'crash_agent', agent_id: other });
    await post('/sim/v1/advance', { ms: 120_000 });
    const status = agentId(other).locator('td[data-column="Status"] .agent-state');
    await eventually(() => text(status)).toBe('unreachable');
    expect(await status.getAttribute('class')).toBe('agent-state unreachable');
    // Coloured as the failed states are.
    expect(await status.evaluate((el) => (globalThis as unknown as Win).getComputedStyle(el).color)).toBe(
      'rgb(179, 38, 30)',
    );
    expect(await text(agentId(other).locator('td[data-column="Resources: used, offered, free"]'))).toBe('—');
    expect(await text(agentId(taskAgent!).locator('.agent-state'))).toBe('active');
    await eventually(() => page.locator('cs-summary span').allTextContents()).toEqual(
      expect.arrayContaining(['1 agent (1 unreachable)']),
    );
    await picture(page.locator('cs-agents'), 'unreachable-agent');
  });

  it('charts allocated, offered and free resources and the tasks by state over cluster time', async () => {
    const resources = page.locator('cs-charts .resources-chart svg');
    const tasks = page.locator('cs-charts .tasks-chart svg');
    // A small workload on the agent left: a task more every 5 s, each sleeping longer, then time for them to end.
    const agent = await page
      .locator('cs-agents .agent-state.active')
      .evaluate((el) => el.closest('tr')!.getAttribute('data-key'));
    const step = async (ms: number) => {
      const { time_ms } = await post('/sim/v1/advance', { ms });
      await eventually(() => shownMs(page)).toBe(time_ms);
    };
    // The offers still outstanding go back, to come again in OFFERS events.
    const state = (await (await fetch(new URL('/master/state', running.masterUrl))).json()) as {
      frameworks: { offers: { id: string }[] }[];
    };
    const outstanding = state.frameworks.flatMap((fw) => fw.offers.map((o) => ({ value: o.id })));
    const decline = { offer_ids: outstanding, filters: { refuse_seconds: 0 } };
    expect((await client.call({ type: 'DECLINE', decline })).status).toBe(202);
    await step(1_000);
    for (let round = 0; round < 4; round++) {
      const offers = ((await client.next('OFFERS')).offers.offers as JsonEvent[]).filter(
        (o) => o.agent_id.value === agent,
      );
      if (offers.length > 0) {
        const task = sleepTask(offers[0]!, `sleep ${10 + 5 * round}`, `worker-${round}`);
        const accept = { offer_ids: [offers[0]!.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] };
        expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
      }
      await step(5_000);
    }
    for (let round = 0; round < 3; round++) await step(10_000);
    await eventually(async () => Number(await resources.getAttribute('data-samples'))).toBeGreaterThanOrEqual(3);
    // Allocated rose while the task ran and fell when it failed; offered came and went.
    for (const series of ['allocated', 'offered']) {
      const d = (await resources.locator(`path.series-${series}`).getAttribute('d')) ?? '';
      expect(heights(d).size, series).toBeGreaterThan(1);
    }
    expect(await resources.locator('path.series-free').count()).toBe(1);
    await eventually(() =>
      tasks.locator('path[data-state]').evaluateAll((all) => all.map((p) => p.getAttribute('data-state'))),
    ).toEqual(expect.arrayContaining(['TASK_RUNNING', 'TASK_FAILED']));
    const failed = (await tasks.locator('path[data-state="TASK_FAILED"]').getAttribute('d')) ?? '';
    expect(heights(failed).size).toBe(2);
    await eventually(() => tasks.locator('path[data-state="TASK_FINISHED"]').count()).toBe(1);
    expect(await page.locator('cs-charts .tasks-chart .legend li').allTextContents()).toEqual(
      expect.arrayContaining(['TASK_RUNNING', 'TASK_FAILED']),
    );
    await picture(page.locator('cs-charts section').first(), 'resources-chart');
    await picture(page.locator('cs-charts section').last(), 'tasks-chart');
  });

  it('says since when the master is unreachable, over what it last read, greyed', async () => {
    const shown = await page.locator('cs-clock .clock-time').getAttribute('data-time-ms');
    closed = true;
    client.disconnect();
    await running.close();
    await eventually(() => text(page.locator('.banner'))).toMatch(
      new RegExp(
        `^master unreachable since \\d\\d:\\d\\d:\\d\\d \\(what is shown is as of cluster time ${(Number(shown) / 1000).toFixed(3)} s\\): `,
      ),
    );
    expect(await page.locator('main').getAttribute('class')).toBe('stale');
    expect(
      await page.locator('main').evaluate((el) => (globalThis as unknown as Win).getComputedStyle(el).filter),
    ).toBe('grayscale(1)');
    // The tables still show what the page last read.
    expect(await page.locator('cs-tasks tbody tr').count()).toBeGreaterThan(1);
    await picture(page, 'master-gone');
    // The page's reads fail from now on: that is the point here.
    errors.length = 0;
  });
});
