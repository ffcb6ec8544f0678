/**
 * The scenario commands as a user runs them: `run` with its reports and
 * exit codes, `check-determinism`, and `chaos` finding, shrinking and
 * writing out a failing schedule that `run` then replays.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/cli-process.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-scenario-'));

const FAILING = `name: failing
duration: 1m
cluster:
  agents:
    - count: 1
frameworks:
  - name: web
    tasks: { keep_running: 2 }
expect:
  - tasks: { framework: web, state: TASK_RUNNING, count: 2 }
  - tasks: { framework: web, state: TASK_RUNNING, count: 3 }
`;

describe('clustersim run', () => {
  it(
    'prints each expectation, a summary and the replay command; writes the trace, which clustersim replay re-runs; exit 0 when all pass',
    { timeout: 60_000 },
    async () => {
      const trace = path.join(dir, 'steady.jsonl');
      const { code, stdout } = await runCli(['run', 'scenarios/steady-state.yaml', '--trace', trace]).output;
      expect(code).toBe(0);
      expect(stdout).toMatch(/^scenario steady-state \(scenarios\/steady-state\.yaml\), seed 1$/m);
      expect(stdout).toMatch(/^ {2}PASS {2}line \d+, at 30s: exactly 5 TASK_RUNNING tasks of web \(found 5\)$/m);
      expect(stdout).toContain('replay: clustersim run scenarios/steady-state.yaml --seed 1');
      expect(stdout).toMatch(/^1 scenario: 1 passed, 0 failed$/m);
      const first = JSON.parse(readFileSync(trace, 'utf8').split('\n')[0]!) as { seq: number; kind: string };
      expect(first).toMatchObject({ seq: 1, kind: 'cluster:start' });
      const hash = /hash ([0-9a-f]{16})/.exec(stdout)![1];
      const replayed = await runCli(['replay', trace]).output;
      expect(replayed.code).toBe(0);
      expect(replayed.stdout).toMatch(new RegExp(`^replay: \\d+ entries, no divergence \\(hash ${hash}\\)$`, 'm'));
    },
  );

  it('exits 1 when an expectation fails, and writes JUnit XML for CI', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'failing.yaml');
    writeFileSync(file, FAILING);
    const { code, stdout, stderr } = await runCli(['run', file, '--reporter', 'junit', '--seed', '9']).output;
    expect(code).toBe(1);
    expect(stderr).toMatch(/FAIL {2}line 11, at 1m: exactly 3 TASK_RUNNING tasks of web \(found 2\)/);
    expect(stdout).toMatch(/^<\?xml/);
    expect(stdout).toContain('<testsuite name="failing" tests="2" failures="1" errors="0"');
    expect(stdout).toContain('<failure message="found 2"/>');
    expect(stdout).toContain(`<property name="replay" value="clustersim run ${file} --seed 9"/>`);
  });

  it(
    'writes an HTML report per scenario with --report, NAME before .html when several run',
    { timeout: 60_000 },
    async () => {
      const report = path.join(dir, 'run.html');
      const files = ['scenarios/agent-lost.yaml', 'scenarios/steady-state.yaml'];
      const { code } = await runCli(['run', ...files, '--report', report]).output;
      expect(code).toBe(0);
      for (const name of ['agent-lost', 'steady-state']) {
        const html = readFileSync(path.join(dir, `run.${name}.html`), 'utf8');
        expect(html).toMatch(/^<!DOCTYPE html>/);
        expect(html).toContain(`<title>clustersim run: ${name}</title>`);
        expect(html).toContain('<svg class="timeline"');
      }
      const unwritable = await runCli(['run', files[0]!, '--report', path.join(dir, 'no-such-dir', 'run.html')]).output;
      expect(unwritable.code).toBe(2);
      expect(unwritable.stderr).toMatch(/no-such-dir\/run\.html: the report cannot be written \(ENOENT\)/);
      // A run without a result (its cluster refused to start) leaves no empty page.
      const refused = path.join(dir, 'refused.yaml');
      writeFileSync(refused, FAILING.replace('- count: 1', '- count: 1\n      resources: "cpus:-1"'));
      const stopped = await runCli(['run', refused, '--report', path.join(dir, 'refused.html')]).output;
      expect(stopped.code).toBe(2);
      expect(existsSync(path.join(dir, 'refused.html'))).toBe(false);
    },
  );

  it('names the file, line and field of an invalid file, without a help dump; exit 2', async () => {
    const file = path.join(dir, 'invalid.yaml');
    writeFileSync(file, FAILING.replace('duration: 1m', 'duration: later'));
    const { code, stderr } = await runCli(['run', file]).output;
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')[0]).toBe(
      `clustersim: ${file}:2:11: duration: must be a duration of at most 30d: whole milliseconds, or 500ms, 30s, 10m, 2h, 1d`,
    );
    expect(stderr).not.toContain('Options:');
  });

  it('names a file that cannot be read in one line, exit 2, and counts only the scenarios that ran', async () => {
    const missing = path.join(dir, 'missing.yaml');
    const alone = await runCli(['run', missing]).output;
    expect([alone.code, alone.stdout, alone.stderr]).toEqual([
      2,
      '',
      `clustersim: ${missing}: cannot be read (ENOENT)\n`,
    ]);
    const twice = await runCli(['check-determinism', missing]).output;
    expect([twice.code, twice.stdout, twice.stderr]).toEqual([
      2,
      '',
      `clustersim: ${missing}: cannot be read (ENOENT)\n`,
    ]);
    const mixed = await runCli(['run', missing, 'scenarios/agent-lost.yaml']).output;
    expect(mixed.code).toBe(2);
    expect(mixed.stdout.trim().split('\n').at(-1)).toBe('1 scenario: 1 passed, 0 failed; 1 file not run');
  }, 60_000);

  it('check-determinism runs a scenario twice and finds the same trace', { timeout: 60_000 }, async () => {
    const { code, stdout } = await runCli(['check-determinism', 'scenarios/agent-crash-reconnect.yaml']).output;
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /agent-crash-reconnect\.yaml: seed 2, two runs, the same trace \(\d+ entries, hash [0-9a-f]{16}\)/,
    );
  });
});

describe('clustersim chaos', () => {
  it('finds a failing schedule, shrinks it, and writes a scenario that run replays', { timeout: 180_000 }, async () => {
    const out = path.join(dir, 'found.yaml');
    const chaos = await runCli(['chaos', 'scenarios/steady-state.yaml', '--runs', '5', '--seed', '3', '--out', out])
      .output;
    expect(chaos.code).toBe(1);
    expect(chaos.stderr).toMatch(/^run 1: .*: (pass|FAIL)$/m);
    // The schedules add agents like the file's, and remove agents it has.
    expect(chaos.stderr).toMatch(/^run \d: .*add_agent \(resources cpus:2;mem:4096;disk:8192;ports:\[31000-32000\]\)/m);
    expect(chaos.stderr).toMatch(/^run \d: .*remove_agent \(agent [0-2]\)/m);
    expect(chaos.stdout).toContain(`written to ${out}`);
    const written = readFileSync(out, 'utf8');
    expect(written).toContain('name: steady-state-chaos-3');
    // Shrunk: a partition of an agent and its heal are enough to break "exactly 5 TASK_RUNNING tasks".
    expect(written.match(/type: /g)?.length).toBe(2);
    const replay = await runCli(['run', out]).output;
    expect(replay.code).toBe(1);
    expect(replay.stdout).toMatch(/FAIL .*exactly 5 TASK_RUNNING tasks of web/);
    // Its report beside it: the page run --report writes of the file written, FAILED with the failures.
    const report = out.replace(/\.yaml$/, '.html');
    expect(chaos.stdout).toContain(`written to ${out}\nreplay: clustersim run ${out}\nreport: ${report}\n`);
    const page = readFileSync(report, 'utf8');
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain('clustersim run: steady-state-chaos-3');
    expect(page).toContain('FAILED');
    expect(page).toContain('exactly 5 TASK_RUNNING tasks of web');
    expect(page).toContain(`<code>clustersim run ${out} --seed 1</code>`);
  });
});
