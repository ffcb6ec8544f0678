/**
 * `clustersim chaos` over a file with an external framework: the user's
 * own scheduler (test/fixtures/scheduler.mjs, a real child process) under
 * random schedules in real time, on two workers; a shrunk failure written
 * elsewhere still finds the scheduler where the file did; and a file that
 * attaches to a framework is refused, since chaos starts it once a run.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scenarioWithSchedule } from '../../src/scenario/chaos.js';
import { parseScenario } from '../../src/scenario/load.js';
import { runCli } from '../e2e/cli-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function externalFile(dir: string, framework: string, expect = '  - invariants: true\n'): string {
  const file = path.join(dir, 'ext.yaml');
  writeFileSync(
    file,
    `name: ext
duration: 3s
cluster:
  agents:
    - count: 2
      resources: "cpus:2;mem:2048"
frameworks:
${framework}
expect:
${expect}`,
  );
  return file;
}

const SCHEDULER = `  - name: mine
    command: node ${path.join(ROOT, 'test/fixtures/scheduler.mjs')}
    env: { FRAMEWORK_NAME: mine-fw, TASKS: 1 }
    match: { name: mine-fw }
    subscribe_timeout: 60s`;

describe('clustersim chaos in real time', () => {
  it('runs an external framework under random schedules on two workers, and says what a replay is worth', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-realtime-'));
    const file = externalFile(dir, SCHEDULER);
    const { code, stdout, stderr } = await runCli([
      'chaos',
      file,
      '--runs',
      '2',
      '--workers',
      '2',
      '--seed',
      '4',
      '--out',
      path.join(dir, 'found.yaml'),
    ]).output;
    expect([code, stdout.split('\n')[0]], stderr).toEqual([
      0,
      `${file}: 2 runs under random faults (seed 4): 2 passed, 0 failed, 0 stopped`,
    ]);
    expect(stdout).toContain('in real time (an external framework): each run took the file');
    expect(stderr).toMatch(/^run 1: .*: pass$/m);
    expect(stderr).toMatch(/^run 2: .*: pass$/m);
  }, 180_000);

  it('refuses a file that attaches to a framework, in one line', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-realtime-'));
    const file = externalFile(dir, '  - name: mine\n    attach: true');
    const { code, stderr } = await runCli(['chaos', file, '--runs', '1']).output;
    expect([code, stderr.trim()]).toEqual([
      2,
      `clustersim: ${file}: framework 'mine' (line 8) is attached: chaos starts the file once a run, so each of its frameworks needs a command to start it by`,
    ]);
  }, 60_000);

  it('writes a found schedule elsewhere with the external command still run where the file ran it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-realtime-'));
    const file = externalFile(dir, `${SCHEDULER}\n    cwd: work`);
    const scenario = parseScenario(file, readFileSync(file, 'utf8'));
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'chaos-found-'));
    const found = path.join(elsewhere, 'found.yaml');
    const schedule = [{ at: 1000, fault: { type: 'crash_agent', agent: 0 }, line: 0 }];
    const written = scenarioWithSchedule(scenario, schedule, 4, elsewhere);
    const again = parseScenario(found, written);
    expect(again.externals[0]!.cwd).toBe(path.join(dir, 'work'));
    expect(again.timeline.map((e) => e.fault)).toEqual([{ type: 'crash_agent', agent: 0 }]);
  });
});
