/**
 * The dashboard in a real headless Chromium when the cluster asks for
 * credentials (`credentials`, `authenticateHttpReadonly`, `acls`): the
 * browser answers the master's HTTP Basic challenges with one principal's,
 * as a user does in its dialog, and the page shows what that principal may
 * see and do.
 *
 * The cluster: alice's framework `alice-batch` (user `alice-user`) and bob's
 * `bob-web` (user `bob-user`), subscribed in that order. `ops` may control
 * the simulation and is named by no view rule (it sees all, the ACLs being
 * permissive); bob may not control it, and may view `bob-user`'s
 * frameworks, tasks and executors only. A browser with wrong credentials
 * is refused every read, and follows the cluster once it has right ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import {
  chromiumMissing,
  eventually,
  launchChromium,
  shownMs,
  text,
  watchErrors,
  dashboardCluster,
} from './browser.js';

if (chromiumMissing !== undefined) console.warn(`dashboard browser tests skipped: ${chromiumMissing}`);

const USERS = { ops: 'ops-secret', bob: 'bob-secret', alice: 'alice-secret' } as const;
type Principal = keyof typeof USERS;

const CREDENTIALS = { credentials: Object.entries(USERS).map(([principal, secret]) => ({ principal, secret })) };
const onlyBobUser = (key: string) => [
  { principals: { values: ['bob'] }, [key]: { values: ['bob-user'] } },
  { principals: { values: ['bob'] }, [key]: { type: 'NONE' } },
];
const ACLS = {
  permissive: true,
  control_simulation: [
    { principals: { values: ['ops'] }, objects: { type: 'ANY' } },
    { principals: { type: 'ANY' }, objects: { type: 'NONE' } },
  ],
  view_frameworks: onlyBobUser('users'),
  view_tasks: onlyBobUser('users'),
  view_executors: onlyBobUser('users'),
};
const FORBIDDEN = "Not authorized to control the simulation: the ACLs' control_simulation refuses it";

/** How the page shows a generated id (format.js `shortId`): its last part. */
const shown = (id: string) => `…${id.slice(id.lastIndexOf('-'))}`;

/** The timeline's entries, of one kind or all (those the page hides, `input:*`, included). */
const entries = (page: Page, kind?: string) =>
  page.locator(kind === undefined ? 'cs-timeline li' : `cs-timeline li[data-kind="${kind}"]`);
const frameworkNames = (page: Page) => page.locator('cs-frameworks tbody td[data-column="Name"]').allTextContents();
const live = (page: Page) => page.locator('cs-summary [data-live]').getAttribute('data-live');
/** What the page logs for an answer with an error status. */
const loadFailed = (status: string, path: string) =>
  `console: Failed to load resource: the server responded with a status of ${status} [${path}]`;

// Four browsers, one after the other: generous bounds on a loaded machine, never a wait on them when all is well.
const withChromium = describe.skipIf(chromiumMissing !== undefined);

withChromium('the dashboard in Chromium, with credentials', { timeout: 60_000 }, () => {
  let running: RunningCluster;
  let alice: SchedulerClient;
  let bob: SchedulerClient;

  beforeAll(async () => {
    running = await dashboardCluster({ credentials: CREDENTIALS, authenticateHttpReadonly: true, acls: ACLS });
    alice = await subscribed(running, 'alice', { user: 'alice-user', name: 'alice-batch' });
    bob = await subscribed(running, 'bob', { user: 'bob-user', name: 'bob-web' });
  }, 60_000);
  afterAll(async () => {
    alice?.disconnect();
    bob?.disconnect();
    await running?.close();
  });

  /** Opens the page in a browser that answers the master's challenges with these credentials; runs `check` on it. */
  async function withPage(username: string, password: string, check: (page: Page, errors: string[]) => Promise<void>) {
    const browser = await launchChromium({ httpCredentials: { username, password } });
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      watchErrors(page, errors);
      await page.goto(running.masterUrl);
      await check(page, errors);
    } finally {
      await browser.close();
    }
  }
  const asUser = (principal: Principal, check: (page: Page, errors: string[]) => Promise<void>) =>
    withPage(principal, USERS[principal], check);

  it('shows a principal who may do all the agents, both frameworks, the clock and the timeline', async () => {
    await asUser('ops', async (page, errors) => {
      await eventually(() => page.locator('cs-agents tbody tr').count()).toBe(2);
      await eventually(() => text(page.locator('cs-clock .clock-mode'))).toBe('virtual time');
      await eventually(() => live(page)).toBe('live');
      await eventually(() => frameworkNames(page)).toEqual(expect.arrayContaining(['alice-batch', 'bob-web']));
      await eventually(() => entries(page, 'cluster:start').count()).toBe(1);
      await eventually(() => entries(page, 'framework:subscribed').allTextContents()).toEqual([
        expect.stringContaining(shown(bob.streamId!)),
        expect.stringContaining(shown(alice.streamId!)),
      ]);

      await eventually(() => text(page.locator('cs-clock .clock-time'))).toBe('0.000 s');
      await page.locator('cs-clock select[name="step"]').selectOption('5000');
      await page.locator('cs-clock button[name="advance"]').click();
      await eventually(() => text(page.locator('cs-clock .clock-result'))).toBe('advanced to 5.000 s');
      expect(running.now()).toBe(5000);
      await eventually(() => shownMs(page)).toBe(5000);
      // The timeline goes on live: the advance is in it.
      const advanced = entries(page, 'input:advanceTo');
      await eventually(() => advanced.allTextContents()).toEqual([expect.stringContaining('[5000]')]);
      expect(errors).toEqual([]);
    });
  });

  it('shows a principal whose ACLs refuse control_simulation the cluster, and why its advance is refused', async () => {
    await asUser('bob', async (page, errors) => {
      await eventually(() => page.locator('cs-agents tbody tr').count()).toBe(2);
      await eventually(() => live(page)).toBe('live');
      const before = running.now();
      await eventually(() => shownMs(page)).toBe(before);
      await page.locator('cs-clock button[name="advance"]').click();
      const result = page.locator('cs-clock .clock-result');
      await eventually(() => text(result)).toBe(FORBIDDEN);
      expect(await result.getAttribute('class')).toContain('error');
      expect(await result.isVisible()).toBe(true);
      // Nothing moved, and the buttons are back for another try.
      await eventually(() => page.locator('cs-clock button[name="advance"]').isEnabled()).toBe(true);
      expect(running.now()).toBe(before);
      expect(await shownMs(page)).toBe(before);
      // The refusal is the only request that failed.
      const refusal = [loadFailed('403 (Forbidden)', '/sim/v1/advance'), 'response: 403 POST /sim/v1/advance'];
      await eventually(async () => [...errors].sort()).toEqual(refusal);
    });
  });

  it("leaves out of the timeline of a principal whose view ACLs hide alice's framework every entry of it", async () => {
    await asUser('bob', async (page, errors) => {
      await eventually(() => frameworkNames(page)).toEqual(['bob-web']);
      // The stream sends the entries in order: once this advance is in, every entry of alice's before it was sent.
      running.advance(1000);
      const advanced = [expect.stringContaining(`[${running.now()}]`)];
      const advances = entries(page, 'input:advanceTo');
      await eventually(() => advances.allTextContents()).toEqual(expect.arrayContaining(advanced));
      const seen = await entries(page).allTextContents();
      const bobs = [expect.stringContaining(shown(bob.streamId!)), expect.stringContaining('agent:add')];
      expect(seen).toEqual(expect.arrayContaining(bobs));
      const alices = new RegExp(`${shown(alice.frameworkId!)}\\b|${shown(alice.streamId!)}|alice`);
      expect(seen.filter((entry) => alices.test(entry))).toEqual([]);
      expect(errors).toEqual([]);
    });
  });

  it('says so when the browser has wrong credentials, and follows the cluster once it has the right ones', async () => {
    await withPage('bob', 'not-bob-secret', async (page, errors) => {
      const reason =
        /^Cannot read the cluster: \/(master\/(state|roles)|sim\/v1\/(clock|agents)|api\/v1 GET_TASKS): 401 Unauthorized\.$/;
      await eventually(() => text(page.locator('.banner'))).toMatch(reason);
      expect(await page.locator('cs-summary [data-live]').count()).toBe(0);
      expect(await entries(page).count()).toBe(0);
      // The page's reads and its event stream are refused, again at each try; nothing else fails.
      const refused = ['/master/state', '/master/roles', '/sim/v1/clock', '/sim/v1/agents', '/sim/v1/events'];
      const expected = refused.flatMap((path) => [`response: 401 GET ${path}`, loadFailed('401 (Unauthorized)', path)]);
      expected.push('response: 401 POST /api/v1', loadFailed('401 (Unauthorized)', '/api/v1'));
      expected.sort();
      const refusals = async () => [...new Set(errors)].sort();
      await eventually(refusals).toEqual(expected);

      // As a user who types them in at last: the next reads get in, and the refused event stream is opened again.
      await page.context().setHTTPCredentials({ username: 'ops', password: USERS.ops });
      await eventually(() => page.locator('.banner').isHidden()).toBe(true);
      await eventually(() => live(page)).toBe('live');
      await eventually(() => entries(page, 'cluster:start').count()).toBe(1);
      await eventually(() => frameworkNames(page)).toEqual(expect.arrayContaining(['alice-batch', 'bob-web']));
      // Nothing failed but the refusals of before.
      expect(await refusals()).toEqual(expected);
    });
  });
});

/** A framework of `principal`'s, subscribed with its credentials. */
async function subscribed(r: RunningCluster, principal: Principal, info: { user: string; name: string }) {
  const authorization = `Basic ${Buffer.from(`${principal}:${USERS[principal]}`).toString('base64')}`;
  const client = new SchedulerClient(r.masterUrl, 'json', { authorization });
  expect((await client.subscribe({ ...info, principal })).status).toBe(200);
  await client.next('SUBSCRIBED');
  return client;
}
