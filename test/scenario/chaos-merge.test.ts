/**
 * chaos-merge: the shards of one search joined, and outputs that are not
 * its disjoint shards refused in one line.
 */
import { describe, expect, it } from 'vitest';
import { mergeShards } from '../../src/scenario/chaos-merge.js';

const run = (schedule: number, verdict: 'pass' | 'fail' | 'stopped', seed = 7) => ({
  kind: 'run',
  file: 'a.yaml',
  seed,
  schedule,
  faults: [{ at: '1s', fault: { type: 'clock_jump', ms: 1000 } }],
  verdict,
  ...(verdict === 'fail' ? { failed: ['FAIL line 3: x (found 0)'] } : {}),
  ...(verdict === 'stopped' ? { reason: 'at 1s of cluster time: stuck' } : {}),
  replay: `clustersim chaos a.yaml --seed ${seed} --schedule ${schedule}`,
});

const shard = (index: number, count: number, runs: readonly object[], extra: object = {}) => ({
  name: `shard-${index}.jsonl`,
  text: [
    ...runs,
    {
      kind: 'shard',
      file: 'a.yaml',
      seed: 7,
      runs: 4,
      shard: `${index}/${count}`,
      passed: 0,
      failed: 0,
      stopped: 0,
      ...extra,
    },
  ]
    .map((r) => JSON.stringify(r))
    .join('\n'),
});

describe('mergeShards', () => {
  it('joins the shards in schedule order: counts, failing schedules with their replay, the shrunk files', () => {
    const merged = mergeShards([
      shard(2, 2, [run(2, 'stopped'), run(4, 'pass')]),
      shard(1, 2, [run(1, 'pass'), run(3, 'fail')], {
        shrunk: {
          schedule: 3,
          out: 'a-chaos-7-1-of-2.yaml',
          replay: 'clustersim run a-chaos-7-1-of-2.yaml',
          report: 'a-chaos-7-1-of-2.html',
        },
      }),
    ]);
    expect(merged).toEqual({
      ok: true,
      failing: 2,
      lines: [
        'a.yaml: 4 runs under random faults (seed 7, 2 shards): 2 passed, 1 failed, 1 stopped',
        '  schedule 2: STOPPED at 1s of cluster time: stuck; replay: clustersim chaos a.yaml --seed 7 --schedule 2',
        '  schedule 3: FAIL line 3: x (found 0); replay: clustersim chaos a.yaml --seed 7 --schedule 3',
        '  shard 1/2: schedule 3 shrunk to a-chaos-7-1-of-2.yaml; replay: clustersim run a-chaos-7-1-of-2.yaml; report: a-chaos-7-1-of-2.html',
      ],
    });
  });

  it.each([
    ['a missing shard', [shard(1, 2, [run(1, 'pass')])], 'shard 2/2 missing'],
    ['a shard given twice', [shard(1, 2, []), shard(1, 2, [])], 'are both shard 1/2'],
    ['overlapping runs', [shard(1, 2, [run(1, 'pass')]), shard(2, 2, [run(1, 'pass')])], 'the shards overlap'],
    ['another count of shards', [shard(1, 2, []), shard(2, 3, [])], 'is of another search'],
    ['no shard line', [{ name: 'x.jsonl', text: JSON.stringify(run(1, 'pass')) }], '0 shard lines'],
    ['not JSON', [{ name: 'x.jsonl', text: 'hello' }], 'x.jsonl:1: not a JSON line'],
  ])('refuses %s in one line', (_, outputs, message) => {
    const merged = mergeShards(outputs);
    expect(merged.ok).toBe(false);
    if (!merged.ok) {
      expect(merged.error).toContain(message);
      expect(merged.error).not.toContain('\n');
    }
  });
});
