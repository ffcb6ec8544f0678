/**
 * The dashboard's files at `GET /` and `/ui/<file>`, their packing, and the
 * trace as server-sent events at `GET /sim/v1/events` (what the page's
 * timeline reads), over real sockets. The page itself runs in Chromium in
 * test/e2e/dashboard.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import type { TraceEntry } from '../../src/core/kernel/trace.js';
import { DASHBOARD_DIR } from '../../src/http/master/dashboard.js';
import { backlog, BACKLOG_ENTRIES } from '../../src/http/sim/events.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const get = (path: string, init?: RequestInit) => fetch(new URL(path, r!.masterUrl), init);

describe('GET / and /ui/', () => {
  it('serves the page, and every file it loads and every module those import, from the package', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    const loaded = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
    expect(loaded).toEqual(expect.arrayContaining(['/ui/dashboard.js', '/ui/dashboard.css']));
    const seen = new Set<string>();
    for (let path = loaded.shift(); path !== undefined; path = loaded.shift()) {
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await get(path);
      expect(res.status, path).toBe(200);
      const text = await res.text();
      if (!path.endsWith('.js')) continue;
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      for (const m of text.matchAll(/from '\.\/([\w-]+\.js)'/g)) loaded.push(`/ui/${m[1]}`);
    }
    expect([...seen].sort()).toEqual(
      readdirSync(DASHBOARD_DIR)
        .filter((f) => f !== 'index.html')
        .map((f) => `/ui/${f}`)
        .sort(),
    );
  });

  it('answers a repeated load 304 by its ETag, an unknown file 404, a method other than GET or HEAD 405', async () => {
    r = await startCluster({ port: 0, agents: 0, time: 'virtual' });
    const first = await get('/ui/dashboard.js');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect((await get('/ui/dashboard.js', { headers: { 'if-none-match': etag } })).status).toBe(304);
    const missing = await get('/ui/missing.js');
    expect([missing.status, await missing.text()]).toEqual([404, '404 Not Found.']);
    expect((await get('/ui/%2e%2e/package.json')).status).toBe(404);
    const posted = await get('/', { method: 'POST' });
    expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await get('/', { method: 'HEAD' })).status).toBe(200);
  });

  it('is on a standby master a redirect to the leader, as the other endpoints of a master are', async () => {
    r = await startCluster({ port: 0, agents: 0, masters: 2, time: 'virtual' });
    const leader = r.leaderUrl()!;
    const standby = r.masterUrls.find((url) => url !== leader)!;
    const res = await fetch(new URL('/', standby), { redirect: 'manual' });
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(`//${new URL(leader).host}/`);
  });

  it('is in the packed package', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const name of readdirSync(DASHBOARD_DIR)) expect(files).toContain(`ui/${name}`);
  });
});

/** Reads an event stream until `done` holds for what has arrived; the text so far. */
async function readUntil(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

const ids = (text: string): number[] => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

describe('GET /sim/v1/events', () => {
  it('sends the trace kept, then each new entry, as server-sent events with their seq as id', async () => {
    r = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const controller = new AbortController();
    const res = await get('/sim/v1/events', { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const kept = [...r.trace()];
    const first = await readUntil(res, (text) => ids(text).at(-1) === kept.at(-1)!.seq);
    expect(first.startsWith('retry: 1000\n\n')).toBe(true);
    expect(ids(first)).toEqual(kept.map((e) => e.seq));
    const block = first.split('\n\n').find((b) => b.startsWith(`id: ${kept[0]!.seq}\n`))!;
    expect(block.split('\n')).toEqual([
      `id: ${kept[0]!.seq}`,
      'event: trace',
      `data: ${JSON.stringify({ seq: kept[0]!.seq, time_ms: 0, kind: kept[0]!.kind, line: kept[0]!.line })}`,
    ]);
    const client = new SchedulerClient(r.masterUrl);
    await client.subscribe({ user: 'root', name: 'events-test' });
    await client.next('OFFERS');
    const later = r.trace().filter((e) => e.seq > kept.at(-1)!.seq);
    expect(later.length).toBeGreaterThan(0);
    expect(ids(await readUntil(res, (text) => ids(text).at(-1) === later.at(-1)!.seq))).toEqual(
      later.map((e) => e.seq),
    );
    controller.abort();
    client.disconnect();
  });

  it('resumes after Last-Event-ID, and ends with event: replaced when a reset swaps the cluster', async () => {
    r = await startCluster({ port: 0, agents: 2, time: 'virtual' });
    const kept = [...r.trace()];
    const after = kept[2]!.seq;
    const res = await get('/sim/v1/events', { headers: { 'last-event-id': String(after) } });
    const text = await readUntil(res, (t) => ids(t).at(-1) === kept.at(-1)!.seq);
    expect(ids(text)).toEqual(kept.filter((e) => e.seq > after).map((e) => e.seq));
    const rest = readUntil(res, () => false);
    r.reset();
    expect((await rest).endsWith('event: replaced\ndata: {}\n\n')).toBe(true);
  });

  it('gives a new reader the last entries kept, those after the id it saw, all of them for an id of a cluster since swapped', () => {
    const entries: TraceEntry[] = Array.from({ length: BACKLOG_ENTRIES + 20 }, (_, i) => ({
      seq: i + 1,
      timeMs: 0,
      kind: 'k',
      line: `0 k ${i}`,
    }));
    const seqs = (list: readonly TraceEntry[]) => list.map((e) => e.seq);
    expect(seqs(backlog(entries, undefined))).toEqual(seqs(entries.slice(20)));
    expect(seqs(backlog(entries, BACKLOG_ENTRIES + 15))).toEqual([
      BACKLOG_ENTRIES + 16,
      BACKLOG_ENTRIES + 17,
      BACKLOG_ENTRIES + 18,
      BACKLOG_ENTRIES + 19,
      BACKLOG_ENTRIES + 20,
    ]);
    expect(backlog(entries, BACKLOG_ENTRIES + 20)).toEqual([]);
    expect(seqs(backlog(entries, BACKLOG_ENTRIES + 21))).toEqual(seqs(entries.slice(20)));
  });
});
