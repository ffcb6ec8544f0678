/**
 * A headless Chromium for the dashboard's tests: Debian's browser
 * (`apt-get install chromium`, as `.ci/run` does) driven by playwright-core,
 * which downloads no browser of its own. `CHROMIUM_PATH` names another
 * binary. Without one, `chromiumMissing` says why, and the tests print it
 * and skip.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';

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

/** A fresh headless Chromium with a profile of its own, removed on close. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'clustersim-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
