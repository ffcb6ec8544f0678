/**
 * A headless Chromium for the dashboard's tests: Debian's browser
 * (`apt-get install chromium`, as `.ci/run` does) driven by playwright-core,
 * which downloads no browser of its own. `CHROMIUM_PATH` names another
 * binary. Without one, `chromiumMissing` says why, and the tests print it
 * and skip. Also what the tests read off a page and how they wait for it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export const chromiumMissing: string | undefined = existsSync(CHROMIUM_PATH)
  ? undefined
  : `no Chromium at ${CHROMIUM_PATH} (install Debian's chromium package, or set CHROMIUM_PATH)`;

/**
 * Flags for a closed network: without the background-networking ones
 * Chromium keeps trying to reach Google's services, and such a network
 * refuses its connections.
 */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** What the browser answers an HTTP Basic challenge with, as a user would in its dialog. */
  readonly httpCredentials?: { readonly username: string; readonly password: string };
}

/** A fresh headless Chromium with a profile of its own, removed on close. */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'clustersim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    ...(options.httpCredentials === undefined ? {} : { httpCredentials: { ...options.httpCredentials } }),
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits (up to 10 s of wall time) for what the page shows to match: the page reads the cluster when events arrive. */
export const eventually = <T>(read: () => Promise<T>): ReturnType<typeof expect.poll<T>> =>
  expect.poll(read, { timeout: 10_000, interval: 50 });

/**
 * Collects what goes wrong in the page: its uncaught exceptions, its console
 * errors, the requests that fail and the answers with an error status, each
 * with the path it concerns (`response: 403 POST /sim/v1/advance`). A load
 * the page itself gives up (`net::ERR_ABORTED`: an event stream it closes
 * after a reset, one Chromium drops as it reads a refusal) is not counted.
 */
export function watchErrors(page: Page, errors: string[]): void {
  const path = (url: string) => new URL(url).pathname;
  page.on('pageerror', (error) => errors.push(`exception: ${error.message}`));
  page.on('console', (message) => {
    const { url } = message.location();
    if (message.type() === 'error') errors.push(`console: ${message.text()}${url === '' ? '' : ` [${path(url)}]`}`);
  });
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? '';
    if (reason !== 'net::ERR_ABORTED') errors.push(`failed: ${request.method()} ${path(request.url())} ${reason}`);
  });
  page.on('response', (response) => {
    const status = response.status();
    if (status >= 400) errors.push(`response: ${status} ${response.request().method()} ${path(response.url())}`);
  });
}

/** The cluster time the page's clock shows, in ms. */
export const shownMs = async (page: Page): Promise<number> =>
  Number(await page.locator('cs-clock .clock-time').getAttribute('data-time-ms'));

export const text = async (locator: Locator): Promise<string> => (await locator.textContent({ timeout: 2_000 })) ?? '';

/** The cluster the dashboard's tests show: two agents on loopback, virtual time, seed 3, quiet; `more` adds to it. */
export function dashboardCluster(more: StartClusterOptions = {}): Promise<RunningCluster> {
  return startCluster({ host: '127.0.0.1', port: 0, agents: 2, time: 'virtual', seed: 3, logLevel: 'silent', ...more });
}
