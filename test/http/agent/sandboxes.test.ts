/**
 * Executors' sandboxes: upstream's path in the agent's `/state`, what a
 * simulated task writes kept in memory under the bounds, and their
 * release once the gc delay is over, in virtual time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_GC_DELAY_MS } from '../../../src/core/agent/sandboxes.js';
import type { Json } from '../operator-harness.js';
import { startSandboxHarness, type SandboxHarness } from './sandbox-harness.js';

let h: SandboxHarness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function agentState(harness: SandboxHarness): Promise<Json> {
  const res = await fetch(new URL('/state', harness.agentUrl));
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}

/** The sandbox of the executor of `taskId` (a command task's executor has its id), as the core holds it. */
function sandboxOf(harness: SandboxHarness, executorId: string) {
  return harness.r.driver.read((view) => {
    const node = view.agentNode(harness.agentId)!;
    const executor = [...node.executors(), ...node.completedExecutors()].find((e) => e.executorId === executorId);
    return executor!.sandbox;
  });
}

describe('sandboxes', () => {
  it("are at upstream's path under the work dir, in /state for live and completed executors, with what the task wrote", async () => {
    h = await startSandboxHarness();
    await h.launch('hello', 'echo hello', 'TASK_FINISHED');
    await h.launch('sleeper', 'sleep 3600');
    const state = await agentState(h);
    const fw = state.frameworks[0];
    const base = `/var/lib/mesos/slaves/${h.agentId}/frameworks/${h.frameworkId}/executors`;
    const live = fw.executors.find((e: Json) => e.id === 'sleeper');
    expect(live.directory).toBe(`${base}/sleeper/runs/${live.container}`);
    const done = fw.completed_executors.find((e: Json) => e.id === 'hello');
    expect(done.directory).toBe(`${base}/hello/runs/${done.container}`);
    // The key sits where upstream's agent writes it: after `container`.
    expect(Object.keys(live).slice(3, 5)).toEqual(['container', 'directory']);
    expect(state.flags.gc_delay).toBe('1weeks');
    expect(state.flags.work_dir).toBe('/var/lib/mesos');
    const sandbox = sandboxOf(h, 'hello');
    expect(sandbox.read('stdout')).toBe('hello\n');
    expect(sandbox.read('stderr')).toBe('');
    expect(sandbox.stat('stdout')?.mtimeMs).toBeGreaterThan(1_600_000_000_000);
  });

  it('are released once the gc delay is over after their executor exits, in cluster time', async () => {
    h = await startSandboxHarness();
    await h.launch('hello', 'echo hello', 'TASK_FINISHED');
    await h.launch('sleeper', 'sleep 3600');
    const done = sandboxOf(h, 'hello');
    const live = sandboxOf(h, 'sleeper');
    h.r.advance(DEFAULT_GC_DELAY_MS - 60_000);
    expect(done.released).toBe(false);
    expect(done.read('stdout')).toBe('hello\n');
    h.r.advance(120_000);
    expect(done.released).toBe(true);
    expect(done.read('stdout')).toBeUndefined();
    // The sleeper ended after an hour: its own delay runs from then.
    expect(live.released).toBe(false);
  });

  it('hold at most the sandbox limit each, keeping what fits', async () => {
    h = await startSandboxHarness({ sandboxLimitMiB: 8 / (1024 * 1024) });
    await h.launch('long', 'echo 0123456789', 'TASK_FINISHED');
    const sandbox = sandboxOf(h, 'long');
    expect(sandbox.read('stdout')).toBe('01234567');
    expect(sandbox.bytes).toBe(8);
  });

  it('share the cluster budget: past it, a write keeps what fits', async () => {
    h = await startSandboxHarness({ sandboxBudgetMiB: 10 / (1024 * 1024) });
    await h.launch('first', 'echo abcdefgh', 'TASK_FINISHED');
    await h.launch('second', 'echo ijklmnop', 'TASK_FINISHED');
    expect(sandboxOf(h, 'first').read('stdout')).toBe('abcdefgh\n');
    expect(sandboxOf(h, 'second').read('stdout')).toBe('i');
  });
});
