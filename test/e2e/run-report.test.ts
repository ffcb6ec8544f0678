/**
 * The HTML report of a shipped scenario in a real headless Chromium: the
 * page opens from its file, draws its timeline (a lane per agent, the task
 * bars, the fault band, the marks) and its resources chart, asks for
 * nothing outside the file, and logs no error. Its screenshot goes to a
 * temporary directory (kept, and its path printed, with
 * CLUSTERSIM_KEEP_SCREENSHOT=1).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlReport } from '../../src/scenario/html-report.js';
import { TimelineRecorder } from '../../src/scenario/report-timeline.js';
import { runScenarioFile } from '../../src/start/scenario.js';
import { chromiumMissing, launchChromium, watchErrors, type Browser } from './browser.js';

if (chromiumMissing !== undefined) console.warn(`run report browser tests skipped: ${chromiumMissing}`);

describe.skipIf(chromiumMissing !== undefined)('the run report in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser;
  let dir: string;
  const keep = process.env['CLUSTERSIM_KEEP_SCREENSHOT'] === '1';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'clustersim-report-'));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  });

  it('draws the timeline of agent-lost with no error and no request outside the file', async () => {
    const recorder = new TimelineRecorder();
    const result = await runScenarioFile('scenarios/agent-lost.yaml', { traceSink: recorder.add });
    const file = join(dir, 'agent-lost.html');
    writeFileSync(file, htmlReport(result, recorder.timeline()));

    const page = await browser.context.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    watchErrors(page, errors);
    page.on('request', (request) => requests.push(request.url()));
    await page.setViewportSize({ width: 1140, height: 800 });
    await page.goto(pathToFileURL(file).href);

    const lanes = await page
      .locator('svg.timeline g.lane')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-lane')));
    expect(lanes).toEqual(['faults', 'masters', 'frameworks', 'agent 0', 'agent 1', 'agent 2', 'expectations']);
    expect(await page.locator('svg.timeline g.task').count()).toBe(6);
    expect(await page.locator('svg.timeline rect[data-state="TASK_LOST"]').count()).toBe(2);
    expect(await page.locator('svg.timeline g.fault[data-fault="crash_agent"]').count()).toBe(1);
    expect(await page.locator('svg.timeline path.mark[data-kind="subscribed"]').count()).toBe(1);
    expect(await page.locator('svg.timeline circle.pass').count()).toBe(6);
    expect(await page.locator('svg.resources path.usage').count()).toBe(2);
    // Drawn, not only present: the picture has a size, and a running task's bar is wide.
    const box = await page.locator('svg.timeline').boundingBox();
    expect(box?.width).toBeGreaterThan(1000);
    const running = await page.locator('svg.timeline rect[data-state="TASK_RUNNING"]').first().boundingBox();
    expect(running?.width).toBeGreaterThan(100);

    const shot = join(dir, 'run-report.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (keep) console.info(`run report screenshot: ${shot}`);
    expect(errors).toEqual([]);
    expect(requests).toEqual([pathToFileURL(file).href]);
    await page.close();
  });
});
