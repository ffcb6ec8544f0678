/**
 * A spawned executor's sandbox is a real directory at upstream's path
 * under the work directory (`slaves/<agent>/frameworks/...`), with
 * `runs/latest` linking to it, named in the agent's `/state` and in the
 * executor's environment; once the gc delay of cluster time is over after
 * the executor exits, the directory is gone.
 */
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_GC_DELAY_MS } from '../../src/core/agent/sandboxes.js';
import { sandboxPath, startHarness, tick, type Harness } from '../http/agent/executor-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Json = Record<string, any>;

async function completedExecutor(harness: Harness, executorId: string): Promise<Json> {
  for (let waited = 0; waited < 15_000; waited += 20) {
    const state = (await (await fetch(new URL('/state', harness.agentUrl))).json()) as Json;
    // A framework none of whose executors runs any more is listed among the completed ones, as upstream's agent lists it.
    const frameworks: Json[] = [...state.frameworks, ...state.completed_frameworks];
    const done = frameworks.flatMap((f) => f.completed_executors).find((e: Json) => e.id === executorId);
    if (done !== undefined) return done;
    await tick(20);
  }
  throw new Error(`executor '${executorId}' did not exit`);
}

describe('a spawned executor', () => {
  it("runs in upstream's sandbox path, linked from runs/latest, removed after the gc delay", async () => {
    h = await startHarness({ customExecutors: 'spawn' });
    const script =
      'echo "$MESOS_DIRECTORY" > env.txt; echo "$MESOS_SANDBOX" >> env.txt; echo "$CLUSTER_DIRECTORY" >> env.txt';
    await h.launch('t1', 'e1', { value: script });
    const done = await completedExecutor(h, 'e1');
    const directory = sandboxPath(h, 'e1', done.container);
    expect(done.directory).toBe(directory);
    expect(readFileSync(path.join(directory, 'env.txt'), 'utf8')).toBe(`${directory}\n`.repeat(3));
    expect(readlinkSync(path.join(path.dirname(directory), 'latest'))).toBe(done.container);
    h.cluster.advance(DEFAULT_GC_DELAY_MS - 1_000);
    expect(existsSync(directory)).toBe(true);
    h.cluster.advance(2_000);
    expect(existsSync(directory)).toBe(false);
    expect(existsSync(path.join(path.dirname(directory), 'latest'))).toBe(false);
  }, 60_000);

  it('serves its sandbox from the disk through /files, refusing links that lead out of it', async () => {
    h = await startHarness({ customExecutors: 'spawn' });
    const script = 'echo spawned; ln -s /etc escape; ln -s .. up; ln -s stdout inside';
    await h.launch('t1', 'e1', { value: script });
    await completedExecutor(h, 'e1');
    const latest = `/frameworks/${h.frameworkId}/executors/e1/runs/latest`;
    const get = async (base: string, query: string) => {
      const res = await fetch(new URL(`/files/${query}`, base));
      return { status: res.status, text: await res.text() };
    };
    const read = (base: string, p: string) => get(base, `read?path=${encodeURIComponent(p)}&offset=0`);
    for (const base of [h.agentUrl, h.cluster.masterUrl]) {
      expect(JSON.parse((await read(base, `${latest}/stdout`)).text)).toEqual({ data: 'spawned\n', offset: 0 });
      expect(JSON.parse((await read(base, `${latest}/inside`)).text)).toEqual({ data: 'spawned\n', offset: 0 });
      expect((await read(base, `${latest}/escape/passwd`)).status).toBe(400);
      expect((await get(base, `browse?path=${encodeURIComponent(`${latest}/escape`)}`)).status).toBe(400);
      expect((await get(base, `browse?path=${encodeURIComponent(`${latest}/up`)}`)).status).toBe(400);
      expect((await read(base, `${latest}/missing`)).status).toBe(404);
    }
    const listing = JSON.parse((await get(h.agentUrl, `browse?path=${encodeURIComponent(latest)}`)).text) as Json[];
    expect(listing.map((f) => f.path.slice(latest.length + 1))).toEqual(
      expect.arrayContaining(['stdout', 'stderr', 'inside']),
    );
    const stdout = listing.find((f) => f.path.endsWith('/stdout'))!;
    expect(stdout).toMatchObject({ size: 8, nlink: 1 });
    expect(stdout.mode).toMatch(/^-r/);
  }, 60_000);
});
