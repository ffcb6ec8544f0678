/**
 * `clustersim run --seeds`: a file swept over a list of seeds on several
 * workers, reported in seed order, each run the one `--seed` makes.
 */
import { describe, expect, it } from 'vitest';
import { seedList } from '../../src/cli/run-seeds.js';
import { runCli } from '../e2e/cli-process.js';

describe('seedList', () => {
  it('reads ranges and lists, and refuses what is neither', () => {
    expect(seedList('1-3')).toEqual(['1', '2', '3']);
    expect(seedList('1-2,9,12-13')).toEqual(['1', '2', '9', '12', '13']);
    expect(seedList('5-1')).toContain('is not a list of seeds');
    expect(seedList('a')).toContain('is not a list of seeds');
    expect(seedList('1-1000000000')).toContain('names more than');
  });
});

describe('clustersim run --seeds', () => {
  it(
    'runs every seed on two workers and reports them in seed order, JUnit on stdout',
    { timeout: 120_000 },
    async () => {
      const run = await runCli([
        'run',
        'scenarios/steady-state.yaml',
        '--seeds',
        '1-3',
        '--workers',
        '2',
        '--reporter',
        'junit',
      ]).output;
      expect(run.code).toBe(0);
      expect(run.stdout.match(/<testsuite /g)).toHaveLength(3);
      const reported = [...run.stderr.matchAll(/^scenario steady-state \(.*\), seed (\d+): PASS$/gm)].map((m) => m[1]);
      expect(reported).toEqual(['1', '2', '3']);
      // Seed 1 is the file's own: the same trace as its golden run.
      expect(run.stderr).toMatch(/seed 1: PASS\n.*hash 068e203f2782bb38/);
      expect(run.stderr).toContain('scenarios/steady-state.yaml: 3 seeds: 3 passed, 0 failed');
    },
  );

  it('refuses --seeds with --seed, and a list that is not one, in one line', async () => {
    const bad = await runCli(['run', 'scenarios/steady-state.yaml', '--seeds', '9-1']).output;
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--seeds');
    const both = await runCli(['run', 'scenarios/steady-state.yaml', '--seeds', '1-2', '--seed', '3']).output;
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('clustersim run: Arguments seeds and seed are mutually exclusive\n');
  });
});
