/**
 * Scenario files are input from anywhere: a file too large, an alias bomb,
 * durations and counts past their maxima are refused as the file's error
 * (one line, exit 2); a long run keeps a bounded window of its trace while
 * its sink, its hash and its expectations see every entry; and a run that
 * breaks inside says so in one line with its seed and the replay command.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../src/core/kernel/trace.js';
import type { ClusterDriver } from '../../src/runtime/driver.js';
import { parseScenario } from '../../src/scenario/load.js';
import { MAX_SCENARIO_BYTES } from '../../src/scenario/limits.js';
import { replay } from '../../src/scenario/replay.js';
import { searchFaults } from '../../src/scenario/chaos.js';
import { RunError, runScenario, type RunResult, type ScenarioCluster } from '../../src/scenario/runner.js';
import { startScenarioCluster, startScenarioService } from '../../src/start/scenario.js';
import { runCli } from '../e2e/cli-process.js';
import { BASE, error } from './scenario-text.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-limits-'));

/** Nine anchors, each a list of nine aliases of the one before: 9^9 values once expanded. */
function aliasBomb(): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n${BASE}`;
}

describe('scenario files past the limits', () => {
  it('refuses a file larger than the limit before parsing it: one line naming the file and the limit, exit 2', async () => {
    const file = path.join(dir, 'large.yaml');
    // Valid YAML all the way: a parser would read it whole and then fail on the schema.
    writeFileSync(file, `${BASE}${'#'.repeat(80)}\n`.repeat(Math.ceil((MAX_SCENARIO_BYTES * 2) / 300)));
    const { code, stdout, stderr } = await runCli(['run', file]).output;
    expect(code).toBe(2);
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(MAX_SCENARIO_BYTES);
    expect(stderr.trim().split('\n')).toEqual([
      `clustersim: ${file}: the file has ${size} bytes, more than a scenario file may have (1048576 bytes, 1 MiB)`,
    ]);
    // The file did not run: no summary counts it as a failed scenario.
    expect(stdout).toBe('');
    // The library's entry point for text holds to the same limit.
    expect(error(`${BASE}#${'x'.repeat(MAX_SCENARIO_BYTES)}\n`)).toBe(
      's.yaml: the file has more bytes than a scenario file may have (1048576 bytes, 1 MiB)',
    );
  });

  it('refuses an alias bomb as the file error it is, in one line, exit 2', async () => {
    const file = path.join(dir, 'bomb.yaml');
    writeFileSync(file, aliasBomb());
    const { code, stderr } = await runCli(['run', file]).output;
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      `clustersim: ${file}: its aliases (*name) expand too far (at most 100: the uses of an anchor times the aliases inside it)`,
    ]);
    expect(stderr).not.toContain('the run broke');
  });

  it('refuses a file nested deeper than the parser goes, without the engine message', () => {
    expect(error(`${'['.repeat(10_000)}${']'.repeat(10_000)}`)).toMatch(/^s\.yaml:1:\d+: nested too deeply to read$/);
  });

  it('names the field of every duration and count past its maximum', () => {
    const duration = 'must be a duration of at most 30d: whole milliseconds, or 500ms, 30s, 10m, 2h, 1d';
    expect(error(BASE.replace('duration: 1m', 'duration: 1e308'))).toBe(`s.yaml:2:11: duration: ${duration}`);
    expect(error(BASE.replace('duration: 1m', 'duration: 31d'))).toBe(`s.yaml:2:11: duration: ${duration}`);
    expect(error(BASE.replace('duration: 1m', 'duration: 2592000001'))).toBe(`s.yaml:2:11: duration: ${duration}`);
    expect(() => parseScenario('s.yaml', BASE.replace('duration: 1m', 'duration: 30d'))).not.toThrow();
    expect(error(BASE.replace('count: 2', 'count: 1e12'))).toBe(
      's.yaml:5:14: cluster.agents[0].count: must be <= 10000',
    );
    expect(error(BASE.replace('    - count: 2', '    - count: 6000\n    - count: 6000'))).toBe(
      's.yaml:5:5: cluster.agents: 12000 agents in all, more than a scenario may have (10000)',
    );
    expect(error(BASE.replace('keep_running: 1', 'keep_running: 1e12'))).toBe(
      's.yaml:8:28: frameworks[0].tasks.keep_running: must be <= 10000',
    );
    expect(error(BASE.replace('keep_running: 1', 'total: 1e7'))).toBe(
      's.yaml:8:21: frameworks[0].tasks.total: must be <= 1000000',
    );
    expect(error(BASE.replace('keep_running: 1', 'keep_running: 1, cpus: 1e308'))).toBe(
      's.yaml:8:37: frameworks[0].tasks.cpus: must be <= 1024',
    );
    expect(error(`${BASE}timeline:\n  - at: 40d\n    fault: { type: crash_agent, agent: 0 }\n`)).toBe(
      `s.yaml:12:9: timeline[0].at: ${duration}`,
    );
    expect(error(BASE.replace('  - invariants: true', '  - trace: { kind: "task:status", min: 1e12 }'))).toBe(
      's.yaml:10:40: expect[0].trace.min: must be <= 1000000000',
    );
    expect(error(BASE.replace('name: t\n', 'name: t\nseed: 1e300\n'))).toBe(
      's.yaml:2:7: seed: must be <= 9007199254740991',
    );
    expect(error(BASE.replace('expect:\n', `expect:\n${'  - invariants: true\n'.repeat(1001)}`))).toBe(
      's.yaml:10:3: expect: must NOT have more than 1000 items',
    );
  });

  it('refuses a cluster the library will not start as the file error naming the field, exit 2', async () => {
    const file = path.join(dir, 'heartbeat.yaml');
    writeFileSync(file, BASE.replace('cluster:\n', 'cluster:\n  heartbeat_interval: 0\n'));
    const { code, stderr } = await runCli(['run', file]).output;
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([
      `clustersim: ${file}: cluster.heartbeat_interval: must be a positive number, got 0`,
    ]);
  });
});

const BUSY = `name: busy
duration: 10m
cluster:
  agents:
    - { count: 2, resources: "cpus:4;mem:4096;disk:1024" }
frameworks:
  - name: web
    tasks: { keep_running: 8, command: "sleep 5", cpus: 0.1, mem: 32 }
expect:
  - trace: { kind: "task:status", min: 1 }
  - events: { framework: web, sequence: [SUBSCRIBED, UPDATE TASK_RUNNING, UPDATE TASK_FINISHED] }
`;

describe('a long run in bounded memory', () => {
  it(
    'keeps a window of the trace; the sink, the hash, the replay and the expectations see all of it',
    { timeout: 120_000 },
    async () => {
      const scenario = parseScenario('busy.yaml', BUSY);
      const entries: TraceEntry[] = [];
      let cluster: ScenarioCluster | undefined;
      const result = await runScenario(scenario, {
        start: async (request) => (cluster = await startScenarioCluster(request, { traceWindow: 500 })),
        startService: startScenarioService,
        keepTrace: true,
        traceSink: (entry) => entries.push(entry),
      });
      expect(result.passed).toBe(true);
      // Busy: many times the window went through, yet the cluster held at most twice the window, and no inputs.
      expect(result.traceLength).toBeGreaterThan(20 * 500);
      expect(cluster!.driver.cluster.trace.entries().length).toBeLessThanOrEqual(1000);
      expect(cluster!.driver.cluster.inputs()).toEqual([]);
      expect(result.trace!.length).toBeLessThanOrEqual(1000);
      expect(result.trace!.at(-1)!.seq).toBe(result.traceLength);
      // The sink got every entry in order, and they replay to the same hash.
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: result.traceLength }, (_, i) => i + 1));
      const replayed = await replay(entries);
      expect(replayed).toMatchObject({ divergence: undefined, entries: result.traceLength, hash: result.traceHash });
      // The expectations counted over the whole run, not the window.
      const statuses = entries.filter((e) => e.kind === 'task:status').length;
      expect(result.results[0]!.found).toBe(String(statuses));
      const events = entries.filter((e) => e.kind.startsWith('event:') && e.kind !== 'event:heartbeat').length;
      expect(result.results[1]).toMatchObject({ ok: true, found: `${events} events` });
      // Hash notes, spaced as the run grew, at most MAX_CHECKPOINTS of them.
      expect(result.checkpoints.length).toBeGreaterThan(0);
      expect(result.checkpoints.length).toBeLessThanOrEqual(1024);
    },
  );
});

describe('a run that breaks inside', () => {
  it(
    'says so in one line with the cluster time, the seed and the replay command, never the engine message',
    { timeout: 60_000 },
    async () => {
      const scenario = parseScenario('s.yaml', BASE);
      const run = runScenario(scenario, {
        seed: 5,
        start: async (request) => {
          const cluster = await startScenarioCluster(request);
          const real = cluster.driver;
          // A bug of the program at 20 s of cluster time: a TypeError out of the cluster's port.
          const driver = {
            cluster: real.cluster,
            read: real.read.bind(real),
            input: (fn: Parameters<ClusterDriver['input']>[0]) => {
              if (real.cluster.now() >= 20_000) (undefined as unknown as { x: () => void }).x();
              return real.input(fn);
            },
          } as unknown as ClusterDriver;
          return { ...cluster, driver };
        },
        startService: startScenarioService,
      });
      await expect(run).rejects.toThrow(RunError);
      const message = await run.catch((e: Error) => e.message);
      expect(message).toBe(
        's.yaml: the run stopped at 20s of cluster time (seed 5): an internal error of clustersim (a bug; the replay command shows it again); replay: clustersim run s.yaml --seed 5',
      );
      expect(message).not.toMatch(/undefined|TypeError|reading/);
    },
  );
});

describe('chaos, when a run stops', () => {
  it('reports the schedule that stops it, shrunk, rather than every expectation held', async () => {
    const scenario = parseScenario('s.yaml', BASE);
    // Any schedule with a fault past 10 s stops the run; the others pass.
    const run = async (s: typeof scenario): Promise<RunResult> => {
      const late = s.timeline.find((e) => (e.at ?? 0) > 10_000);
      if (late !== undefined) throw new RunError(s.file, '0', late.at!, 'a framework never heard back');
      return { passed: true } as RunResult;
    };
    const outcome = await searchFaults(scenario, { runs: 20, seed: 1, run });
    expect(outcome.failure).toBeUndefined();
    expect(outcome.stopped?.reason).toMatch(/^at \d+s of cluster time: a framework never heard back$/);
    expect(outcome.stopped!.schedule.length).toBeLessThanOrEqual(2);
  });
});
