/**
 * External frameworks in scenario files: the user's own scheduler as a
 * process of its own (test/fixtures/scheduler.mjs, a real child process),
 * in real time. Bounds are generous and nothing here asserts on speed:
 * each run is a few seconds of wall clock.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenario/load.js';
import { textReport } from '../../src/scenario/report.js';
import { runLoadedScenario, runScenarioFile } from '../../src/start/scenario.js';
import { runCli } from '../e2e/cli-process.js';
import { error } from './scenario-text.js';
import { REALTIME_SCENARIOS, SCENARIO_DIR } from './shipped.js';

const SCHEDULER = 'node test/fixtures/scheduler.mjs';

function file(mode: string, expectations: string, extra = ''): string {
  return `name: ext
duration: 4s
cluster:
  agents:
    - count: 2
      resources: "cpus:2;mem:2048"
frameworks:
  - name: mine
    command: ${SCHEDULER}
    env: { FRAMEWORK_NAME: mine-fw, MODE: ${mode}, TASKS: 2, ECHO: "\${MASTER_URL}" }
    match: { name: mine-fw }
    subscribe_timeout: 60s
${extra}expect:
${expectations}`;
}

const verdicts = (result: Awaited<ReturnType<typeof runLoadedScenario>>): [boolean, string, string][] =>
  result.results.map((r) => [r.ok, r.what, r.found]);

const NO_MISUSE = '  - misuse: { framework: mine, count: 0 }\n';

/**
 * Runs the file for 40 s (the master counts an update never acknowledged
 * when the agent's retry comes 30 s after the first delivery) and requires
 * the run to fail on its misuse expectation, naming `unacknowledged_update`
 * first; `more` is what else the verdict may name after it.
 */
async function expectUnacknowledged(text: string, more = ''): Promise<void> {
  const result = await runLoadedScenario(parseScenario('ext.yaml', text.replace('duration: 4s', 'duration: 40s')));
  expect(result.passed).toBe(false);
  const [misuse] = verdicts(result);
  expect(misuse![0]).toBe(false);
  expect(misuse![2]).toMatch(new RegExp(`^\\d+: unacknowledged_update ×\\d+${more}$`));
  expect(textReport(result).join('\n')).toMatch(/unacknowledged_update/);
}

/** Runs the file's text: no problem, and every expectation held. */
async function expectPasses(text: string): Promise<void> {
  const result = await runLoadedScenario(parseScenario('ext.yaml', text));
  expect(result.problems).toEqual([]);
  expect(verdicts(result).filter(([ok]) => !ok)).toEqual([]);
}

describe('external frameworks', () => {
  it('runs the user’s scheduler in real time through a timeline, and the expectations see it by name', async () => {
    const text = file(
      'good',
      `  - tasks: { framework: mine, state: TASK_RUNNING, count: 2 }
  - events: { framework: mine, sequence: [SUBSCRIBED, OFFERS, UPDATE TASK_RUNNING] }
  - misuse: { framework: mine, count: 0 }
  - frameworks: { state: subscribed, count: 2 }
  - process: { framework: mine, running: true }
  - invariants: true
  - resubscribed: { framework: mine, within: 30s, min: 1 }
  - trace: { kind: "fault:heal", count: 1 }
`,
      `  - name: web
    tasks: { keep_running: 1 }
timeline:
  - when: { tasks: { framework: mine, state: TASK_RUNNING, min: 1 } }
    fault: { type: drop_framework_connection, framework: mine }
  - at: 1s
    fault: { type: partition, nodes: [master, 1] }
  - at: 2s
    fault: { type: heal, nodes: [master, 1] }
`,
      // Long enough for a loaded machine: the expectations are read when the run ends, not on speed.
    ).replace('duration: 4s', 'duration: 20s');
    const scenario = parseScenario('ext.yaml', text);
    expect(scenario.time).toBe('realtime');
    const result = await runLoadedScenario(scenario);
    expect(result.problems).toEqual([]);
    expect(verdicts(result).filter(([ok]) => !ok)).toEqual([]);
    expect(result.passed).toBe(true);
    const [process] = result.processes;
    expect(process).toMatchObject({ framework: 'mine', exitCode: null, signal: 'SIGTERM' });
    expect(process!.stdout).toMatch(/^scheduler: subscribed as /);
    expect(process!.stdout).toContain('scheduler: mine-fw-task-1 TASK_RUNNING');
    expect(process!.stderr).toContain('scheduler: subscribing again');
    expect(textReport(result).join('\n')).toMatch(/real time: the seed does not replay this run/);
  }, 90_000);

  it('runs a bundled framework beside it, in real time too', async () => {
    const text = file(
      'good',
      `  - tasks: { framework: orch, state: TASK_RUNNING, min: 1 }
  - tasks: { framework: mine, state: TASK_RUNNING, count: 2 }
  - service: { name: orch, get: /api/framework/v0/agent/scale }
`,
    )
      .replace('  agents:', '  containerizers: docker,mesos\n  agents:')
      .replace('"cpus:2;mem:2048"', '"cpus:2;mem:4096;disk:16384;ports:[31000-32000]"')
      .replace(
        'expect:',
        'services:\n  - name: orch\n    kind: orchestrator\n    config: { ORCH_AGENT_COUNT: 1 }\nexpect:',
      )
      .replace('count: 2\n      resources', 'count: 3\n      resources')
      .replace('duration: 4s', 'duration: 6s');
    await expectPasses(text);
  }, 90_000);

  it('runs its own executor for real with custom_executors: spawn, one of them crashed', async () => {
    const executor = `node ${path.resolve('test/fixtures/executor.mjs')}`;
    const text = file(
      'good',
      `  - trace: { kind: "executor:subscribe", count: 2 }
  - trace: { kind: "fault:crash_executor", count: 1 }
  - tasks: { framework: mine, state: TASK_RUNNING, count: 1 }
  - tasks: { framework: mine, state: TASK_FAILED, count: 1 }
  - misuse: { framework: mine, count: 0 }
  - invariants: true
`,
      `timeline:
  - when: { tasks: { framework: mine, state: TASK_RUNNING, count: 2 } }
    fault: { type: crash_executor, framework: mine, ordinal: 1 }
`,
    )
      .replace('cluster:\n', 'cluster:\n  custom_executors: spawn\n')
      .replace(/ECHO: "[^"]*"/, `EXECUTOR: "${executor}", FRAMEWORK_USER: ${os.userInfo().username}`)
      .replace('duration: 4s', 'duration: 10s');
    await expectPasses(text);
  }, 90_000);

  it('fails misuse count 0 on a scheduler that acknowledges updates wrongly, and names the misuse', async () => {
    const result = await runLoadedScenario(
      parseScenario('ext.yaml', file('bad-ack', '  - misuse: { framework: mine, count: 0 }\n')),
    );
    expect(result.passed).toBe(false);
    const [misuse] = verdicts(result);
    expect(misuse![0]).toBe(false);
    expect(misuse![1]).toBe('exactly 0 protocol misuses by mine');
    expect(misuse![2]).toMatch(/acknowledge_unknown_update ×\d+/);
    expect(textReport(result).join('\n')).toMatch(/acknowledge_unknown_update/);
  }, 90_000);

  it('fails misuse count 0 on a scheduler that never acknowledges, once the agent retried for 30 s', async () => {
    await expectUnacknowledged(file('no-ack', NO_MISUSE));
  }, 120_000);

  it('fails misuse count 0 on a mesos-framework scheduler whose own UPDATE handler forgets to acknowledge', async () => {
    // The library's documented `handlers` option replaces its UPDATE handler, and with it the ACKNOWLEDGE it sent.
    // The library also declines each offer it does not need with the default 5 s filter: past some 20 s of
    // one agent's offers that is a decline_loop, a real misuse too, which the verdict may name after the first.
    const text = file('good', NO_MISUSE).replace(SCHEDULER, 'node test/fixtures/forgetful-scheduler.cjs');
    await expectUnacknowledged(text, '(, decline_loop ×\\d+)?');
  }, 120_000);

  it('keeps a process that exits early as an event of the run, for process expectations', async () => {
    const expectations = `  - process: { framework: mine, running: true }
  - process: { framework: mine, exit_code: 3 }
`;
    const result = await runLoadedScenario(parseScenario('ext.yaml', file('exit', expectations)));
    expect(verdicts(result)).toEqual([
      [false, 'the process of mine is running at the end', 'ended by itself (exit code 3)'],
      [true, 'the process of mine exits with code 3', 'ended by itself (exit code 3)'],
    ]);
    expect(result.notes.join('\n')).toMatch(/mine: its process exited with code 3 at .*stderr: .*leaving early/);
  }, 90_000);

  it('waits for an attached framework the user starts, and tells where the master is', async () => {
    const text = file('good', '  - tasks: { framework: mine, state: TASK_RUNNING, count: 2 }\n')
      .replace(`command: ${SCHEDULER}`, 'attach: true')
      .replace(/ {4}env: .*\n/, '');
    let user: ReturnType<typeof spawn> | undefined;
    try {
      const result = await runLoadedScenario(parseScenario('ext.yaml', text), {
        onAttach: (_name, match, masterUrl) => {
          const env = { ...process.env, CLUSTERSIM_MASTER_URL: masterUrl, FRAMEWORK_NAME: match };
          user = spawn('node', ['test/fixtures/scheduler.mjs'], { env, stdio: 'ignore' });
        },
      });
      expect(verdicts(result)).toEqual([[true, 'exactly 2 TASK_RUNNING tasks of mine', '2']]);
      expect(result.processes).toEqual([]);
    } finally {
      user?.kill('SIGKILL');
    }
  }, 90_000);

  it('names the entry when its process ends before it subscribes', async () => {
    // The command prints what it was given: the placeholder substituted, and the environment.
    const text = file('good', '  - invariants: true\n').replace(
      SCHEDULER,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's placeholder, for the runner to substitute
      'sh -c "echo ${MASTER} $MESOS_MASTER $CLUSTERSIM_MASTER $ECHO >&2; exit 7"',
    );
    await expect(runLoadedScenario(parseScenario('ext.yaml', text))).rejects.toThrow(
      /framework 'mine' \(line 8\): its process exited with code 7 before it subscribed; stderr: (127\.0\.0\.1:\d+) \1 \1 http:\/\/\1 \(seed 0, in real time: the seed does not replay it\)$/,
    );
  }, 90_000);
});

describe('external frameworks in the file', () => {
  const base = file('good', '  - invariants: true\n');

  it('resolves cwd from the file’s directory, which is also the default; an attached one has none', () => {
    const at = (name: string, text: string) => parseScenario(name, text).externals[0]!.cwd;
    expect(at('some/dir/s.yaml', base)).toBe(path.resolve('some/dir'));
    expect(at('s.yaml', base)).toBe(process.cwd());
    const withCwd = base.replace('    match:', '    cwd: ../tools\n    match:');
    expect(at('some/dir/s.yaml', withCwd)).toBe(path.resolve('some/tools'));
    expect(at('some/dir/s.yaml', withCwd.replace('../tools', '/opt/x'))).toBe('/opt/x');
    const attached = base.replace(`command: ${SCHEDULER}`, 'attach: true').replace(/ {4}env: .*\n/, '');
    expect(at('some/dir/s.yaml', attached)).toBeUndefined();
  });

  it('refuses virtual time with a command, with the reason', () => {
    expect(error(`time: virtual\n${base}`)).toBe(
      "s.yaml:1:1: time: virtual cannot run frameworks[0] ('mine'), which has a command: " +
        'a process of its own runs on the wall clock; say time: realtime or leave time out',
    );
  });

  it('reads command, attach, env, match and the process expectation', () => {
    const s = parseScenario(
      's.yaml',
      base.replace('  - invariants: true', '  - process: { framework: mine, exit_code: 0 }'),
    );
    expect(s.frameworks).toEqual([]);
    expect(s.externals[0]).toMatchObject({
      name: 'mine',
      command: SCHEDULER,
      attach: false,
      match: 'mine-fw',
      subscribeTimeoutMs: 60_000,
      env: { FRAMEWORK_NAME: 'mine-fw', MODE: 'good', TASKS: '2' },
    });
    expect(s.expect[0]).toMatchObject({ process: { framework: 'mine', exit_code: 0 } });
    const attached = parseScenario(
      's.yaml',
      base.replace(`command: ${SCHEDULER}`, 'attach: true').replace(/ {4}env: .*\n/, ''),
    );
    expect(attached.externals[0]).toMatchObject({ attach: true, command: undefined, match: 'mine-fw' });
    expect(parseScenario('s.yaml', base.replace(/ {4}match: .*\n/, '')).externals[0]!.match).toBe('mine');
  });

  it('refuses fields of the other kind, and both command and attach, in one line each', () => {
    expect(error(base.replace('    match:', '    tasks: { total: 1 }\n    match:'))).toMatch(
      /^s\.yaml:\d+:5: frameworks\[0\]\.tasks: a framework with a command or attach is the user’s own: scripted fields do not apply$/,
    );
    expect(error(base.replace('    match:', '    attach: true\n    match:'))).toMatch(
      /^s\.yaml:\d+:5: frameworks\[0\]\.attach: a framework has a command or is attached, not both$/,
    );
    expect(error(base.replace(`command: ${SCHEDULER}`, 'acknowledge: false'))).toMatch(
      /frameworks\[0\]\.env: only a framework with a command or attach takes this field$/,
    );
    expect(error(base.replace('  - invariants: true', '  - process: { framework: nobody, running: true }'))).toMatch(
      /expect\[0\]\.framework: no framework named 'nobody' in this file/,
    );
  });
});

describe('process expectations in the file', () => {
  const base = file('good', '  - process: { framework: mine, running: true }\n');

  it('are refused, with the reason, on an attached framework: the runner owns no process for it', () => {
    const attached = base.replace(`command: ${SCHEDULER}`, 'attach: true').replace(/ {4}env: .*\n/, '');
    expect(error(attached)).toMatch(
      /^s\.yaml:\d+:\d+: expect\[0\]\.process\.framework: 'mine' is attached: the runner owns no process for an attached framework$/,
    );
  });

  it('are refused on a scripted framework, which has no process of its own', () => {
    const scripted = base
      .replace('expect:', '  - name: web\n    tasks: { keep_running: 1 }\nexpect:')
      .replace('framework: mine, running', 'framework: web, running');
    expect(error(scripted)).toMatch(
      /expect\[0\]\.process\.framework: 'web' has no command: only a framework the runner starts has a process$/,
    );
    expect(parseScenario('s.yaml', base).expect).toHaveLength(1);
  });
});

describe('an external framework’s directory', () => {
  it('is the file’s, wherever the run starts: a relative cwd and a relative command path go through it', async () => {
    // The file in a directory of its own, its commands relative to it; this process runs from elsewhere.
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'clustersim-cwd-')), 'scenarios');
    mkdirSync(path.join(dir, 'tools'), { recursive: true });
    copyFileSync('test/fixtures/scheduler.mjs', path.join(dir, 'tools', 'scheduler.mjs'));
    writeFileSync(path.join(dir, 'tools', 'start.sh'), '#!/bin/sh\nexec node scheduler.mjs\n');
    chmodSync(path.join(dir, 'tools', 'start.sh'), 0o755);
    const text = file('good', '  - tasks: { state: TASK_RUNNING, count: 3 }\n')
      .replace(`command: ${SCHEDULER}`, 'command: node tools/scheduler.mjs')
      .replace('TASKS: 2', 'TASKS: 1')
      .replace(
        'expect:',
        `  - name: other
    command: [./start.sh]
    cwd: tools
    env: { FRAMEWORK_NAME: other-fw, TASKS: 2 }
    match: { name: other-fw }
    subscribe_timeout: 60s
expect:`,
      );
    writeFileSync(path.join(dir, 's.yaml'), text);
    expect(path.relative(process.cwd(), dir).startsWith('..')).toBe(true);
    const result = await runScenarioFile(path.join(dir, 's.yaml'));
    expect(result.problems).toEqual([]);
    expect(verdicts(result)).toEqual([[true, 'exactly 3 TASK_RUNNING tasks', '3']]);
    // clustersim run reads the file as the library does, from the project's root here.
    const run = await runCli(['run', path.join(dir, 's.yaml')]).output;
    expect(run.stdout).toContain('PASS');
    expect(run.code).toBe(0);
  }, 90_000);
});

/** The launcher of the mesos-go scheduler, which builds it (Go, GOPATH mode, offline) and runs it. */
const MESOS_GO_LAUNCHER = 'scenarios/external/mesos-go-service/run.sh';

describe('shipped scenarios in real time', () => {
  // A first build without Go's cache takes 20 s or more: done here, it leaves the run its whole duration.
  // Where it fails (no Go), the scenario's own run fails with the launcher's line.
  beforeAll(() => {
    spawnSync('sh', [MESOS_GO_LAUNCHER, '--build'], { stdio: 'ignore', timeout: 240_000 });
  }, 250_000);

  it('has at least one, with no golden trace', () => {
    expect(REALTIME_SCENARIOS).toContain('external-command-scheduler.yaml');
    expect(REALTIME_SCENARIOS).toContain('external-command-scheduler-failover.yaml');
    expect(REALTIME_SCENARIOS).toContain('external-mesos-go.yaml');
  });

  it('stops the mesos-go scenario at once, with the reason, where Go is missing', async () => {
    const text = readFileSync(`${SCENARIO_DIR}/external-mesos-go.yaml`, 'utf8').replace(
      'env: {',
      'env: { CLUSTERSIM_GO: /nonexistent/go,',
    );
    await expect(runLoadedScenario(parseScenario(`${SCENARIO_DIR}/external-mesos-go.yaml`, text))).rejects.toThrow(
      /framework 'service' \(line \d+\): its process exited with code 2 before it subscribed; stderr: mesos-go-service: cannot build: Go is not installed/,
    );
  }, 90_000);

  it.each(REALTIME_SCENARIOS)('%s passes', async (file) => {
    const result = await runScenarioFile(`${SCENARIO_DIR}/${file}`);
    expect(textReport(result).filter((line) => /FAIL|PROBLEM/.test(line))).toEqual([]);
    expect(result.passed).toBe(true);
  }, 120_000);
});
