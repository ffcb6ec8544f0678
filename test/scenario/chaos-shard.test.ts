/**
 * `clustersim chaos` across workers and shards: the schedules drawn from a
 * seed are one list, `--shard I/N` runs slice I of it, and the JSON lines
 * of the shards together are those of one unsharded run, in schedule order
 * whatever order the runs ended in.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/cli-process.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-chaos-'));
const scenario = path.join(dir, 'small.yaml');
writeFileSync(
  scenario,
  `name: small
duration: 2m
cluster:
  agents:
    - count: 2
frameworks:
  - name: web
    tasks: { keep_running: 2 }
expect:
  - tasks: { framework: web, state: TASK_RUNNING, min: 1 }
`,
);

async function chaos(name: string, ...flags: string[]): Promise<{ code: number | null; lines: string[] }> {
  const json = path.join(dir, `${name}.jsonl`);
  const out = path.join(dir, `${name}.yaml`);
  const run = await runCli(['chaos', scenario, '--runs', '5', '--seed', '7', '--json', json, '--out', out, ...flags])
    .output;
  return { code: run.code, lines: readFileSync(json, 'utf8').trim().split('\n') };
}

const runs = (lines: readonly string[]) =>
  lines.map((l) => JSON.parse(l) as { kind: string; schedule: number }).filter((r) => r.kind === 'run');

describe('clustersim chaos --shard and --workers', () => {
  it('shards 1/2 and 2/2 together run what one unsharded run does', { timeout: 240_000 }, async () => {
    const [whole, first, second] = await Promise.all([
      chaos('whole', '--workers', '2'),
      chaos('first', '--shard', '1/2', '--workers', '1'),
      chaos('second', '--shard', '2/2', '--workers', '2'),
    ]);
    expect(whole.code).not.toBe(2);
    // In schedule order, whatever order the workers finished in.
    expect(runs(whole.lines).map((r) => r.schedule)).toEqual([1, 2, 3, 4, 5]);
    expect(runs(first.lines).map((r) => r.schedule)).toEqual([1, 3, 5]);
    expect(runs(second.lines).map((r) => r.schedule)).toEqual([2, 4]);
    const joined = [...runs(first.lines), ...runs(second.lines)].sort((a, b) => a.schedule - b.schedule);
    expect(joined).toEqual(runs(whole.lines));
    expect(JSON.parse(first.lines.at(-1)!)).toMatchObject({ kind: 'shard', shard: '1/2', runs: 5, seed: 7 });
    const { passed, failed, stopped } = JSON.parse(whole.lines.at(-1)!) as Record<string, number>;
    const merged = await runCli(['chaos-merge', path.join(dir, 'second.jsonl'), path.join(dir, 'first.jsonl')]).output;
    expect(merged.code).toBe(whole.code);
    expect(merged.stdout).toContain(
      `5 runs under random faults (seed 7, 2 shards): ${passed} passed, ${failed} failed, ${stopped} stopped`,
    );
    const refused = await runCli(['chaos-merge', path.join(dir, 'first.jsonl'), path.join(dir, 'whole.jsonl')]).output;
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('runs one schedule again with the replay command of its line', { timeout: 120_000 }, async () => {
    const whole = await chaos('again-whole', '--workers', '1');
    const third = runs(whole.lines)[2] as unknown as { replay: string };
    expect(third.replay).toBe(`clustersim chaos ${scenario} --seed 7 --schedule 3`);
    const again = await chaos('again', '--schedule', '3');
    expect(runs(again.lines)).toEqual([third]);
  });

  it('refuses a shard that is not a slice I/N, in one line', async () => {
    const run = await runCli(['chaos', scenario, '--shard', '3/2']).output;
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('--shard');
  });
});
