/**
 * The library's checks of `startCluster()` options and of the clock
 * methods of a running cluster: an unknown option or value stops the start
 * with a StartError naming the option (never a command-line flag); a time
 * that is not one is a RangeError naming the argument; the clock methods
 * on a cluster in real time say they need virtual time. `clustersim up`
 * turns the option names of a StartError into its flags.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { flagOf, refusal } from '../../src/cli/option-flags.js';
import { SimControlError } from '../../src/runtime/sim-control.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';

let r: RunningCluster | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

async function startError(options: unknown): Promise<StartError> {
  const error = await startCluster(options as StartClusterOptions).then(
    (running) => ((r = running), undefined),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StartError);
  return error as StartError;
}

describe('startCluster options', () => {
  it('refuses an unknown time mode, naming the option and the values it takes', async () => {
    const error = await startError({ time: 'virtul', agents: 0 });
    expect(error.message).toBe("time: must be one of realtime, virtual, got 'virtul'");
    expect(error.options).toEqual(['time']);
  });

  it('refuses an unknown option key, with the option it most looks like', async () => {
    expect((await startError({ agent: 1 })).message).toBe(
      "startCluster(): unknown option 'agent'; did you mean 'agents'?",
    );
    expect((await startError({ tiem: 'virtual' })).message).toBe(
      "startCluster(): unknown option 'tiem'; did you mean 'time'?",
    );
    expect((await startError({ zzzzzzzzzzzzzzzz: 1 })).message).toMatch(
      /^startCluster\(\): unknown option 'zzzzzzzzzzzzzzzz'; the options are maxCompletedTasksPerFramework, maxCompletedFrameworks, host, .*, memoryControllerDelegated$/,
    );
  });

  it('names library options, never flags, for values out of range', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ agents: -1 }, 'agents: must be a whole number of at least 0, got -1'],
      [{ agents: 1.5 }, 'agents: must be a whole number of at least 0, got 1.5'],
      [{ port: 70_000 }, 'port: must be a whole number from 0 to 65535, got 70000'],
      [{ masters: 0 }, 'masters: must be a whole number from 1 to 64, got 0'],
      [{ heartbeatIntervalSeconds: Number.NaN }, 'heartbeatIntervalSeconds: must be a positive number, got NaN'],
      [{ electionDelaySeconds: -1 }, 'electionDelaySeconds: must be a number of at least 0, got -1'],
      [
        { logLevel: 'verbose' },
        "logLevel: must be one of fatal, error, warn, info, debug, trace, silent, got 'verbose'",
      ],
      [{ customExecutors: 'run' }, "customExecutors: must be one of simulate, spawn, await, got 'run'"],
      [
        { agentGroups: [{ count: -2 }] },
        'agentGroups[0].count must be a whole number of at least 0, got [{"count":-2}]',
      ],
      [{ agentResources: 'cpus:x' }, 'agentResources: '],
      [{ recordTrace: 'yes' }, "recordTrace: must be true or false, got 'yes'"],
      [
        { executorShutdownGracePeriodSeconds: Infinity },
        'executorShutdownGracePeriodSeconds: must be a positive number, got Infinity',
      ],
    ];
    for (const [options, message] of cases) {
      const error = await startError({ agents: 0, time: 'virtual', ...options });
      expect(error.message, JSON.stringify(options)).toContain(message);
      expect(error.message).not.toMatch(/--[a-z]/);
    }
  });

  it('takes an option set to undefined as left out', async () => {
    r = await startCluster({ agents: 0, time: 'virtual', port: undefined, seed: undefined });
    expect(r.now()).toBe(0);
  });

  it('gives the command line its flags for the options a message names', () => {
    expect(flagOf('idleTimeoutSeconds')).toBe('--idle-timeout');
    expect(flagOf('streamBufferBudgetMiB')).toBe('--stream-buffer-budget');
    expect(flagOf('agentGroups')).toBeUndefined();
    expect(
      refusal(new StartError('maxSubscriptions: must be a whole number of at least 1, got 0', ['maxSubscriptions'])),
    ).toBe('--max-subscriptions: must be a whole number of at least 1, got 0');
    expect(refusal(new StartError('the master cannot listen on 127.0.0.1:5050: the port is in use', 'port'))).toBe(
      'the master cannot listen on 127.0.0.1:5050: the port is in use (--port)',
    );
    expect(
      refusal(new StartError('agentGroups[0].count must be a whole number of at least 0, got -2', ['agentGroups'])),
    ).toBe('agentGroups[0].count must be a whole number of at least 0, got -2');
  });
});

describe('the clock of a running cluster', () => {
  it('advances, advances to a time and reports it, in virtual time', async () => {
    r = await startCluster({ agents: 1, time: 'virtual' });
    expect(r.now()).toBe(0);
    r.advance(1_500);
    expect(r.now()).toBe(1_500);
    r.advanceTo(20_000);
    expect(r.now()).toBe(20_000);
    r.advanceTo(20_000);
    expect(r.now()).toBe(20_000);
  });

  it('refuses times that are not ones with a RangeError naming the argument', async () => {
    r = await startCluster({ agents: 0, time: 'virtual' });
    r.advance(1_000);
    const cluster = r;
    expect(() => cluster.advance(-5)).toThrow(
      new RangeError('advance(): ms must be a whole number of milliseconds from 0, got -5'),
    );
    expect(() => cluster.advance(Number.NaN)).toThrow(/^advance\(\): ms must be .* got NaN$/);
    expect(() => cluster.advance(Infinity)).toThrow(RangeError);
    expect(() => cluster.advanceTo(500)).toThrow(
      new RangeError('advanceTo(timeMs): timeMs must be a whole number of milliseconds from now (1000) on, got 500'),
    );
    expect(() => cluster.advanceTo(Number.NaN)).toThrow(RangeError);
    expect(() => cluster.runUntilIdle({ maxMs: -1 })).toThrow(/^runUntilIdle\(\): options.maxMs must be/);
    expect(() => cluster.runUntil(() => true, { timeoutMs: Infinity })).toThrow(
      /^runUntil\(\): options.timeoutMs must be .* got Infinity$/,
    );
    expect(cluster.now()).toBe(1_000);
  });

  it('says the clock methods need virtual time on a cluster in real time', async () => {
    r = await startCluster({ agents: 0 });
    const cluster = r;
    for (const call of [
      () => cluster.advance(1),
      () => cluster.advanceTo(10_000),
      () => cluster.runUntilIdle(),
      () => cluster.runUntil(() => true),
    ]) {
      expect(call).toThrow(SimControlError);
      expect(call).toThrow(/needs a cluster in virtual time.*startCluster\(\{ time: 'virtual' \}\)/);
    }
  });

  it('runs until a test of the read model holds, or until its timeout', async () => {
    const partitioned = async (): Promise<RunningCluster> => {
      const running = await startCluster({ agents: 2, time: 'virtual' });
      const agent = running.agents[0]!.id;
      running.driver.input((c) => c.partition(agent, 'master'));
      return running;
    };
    r = await partitioned();
    const unreachable = r.runUntil((view) => view.unreachableAgentCount() === 1, { timeoutMs: 200_000 });
    expect(unreachable.held).toBe(true);
    // Five missed pings, 15 s apart.
    expect(unreachable.timeMs).toBeGreaterThanOrEqual(75_000);
    expect(unreachable.timeMs).toBe(r.now());
    const never = r.runUntil((view) => view.unreachableAgentCount() === 2, { timeoutMs: 30_000 });
    expect(never).toEqual({ held: false, timeMs: unreachable.timeMs + 30_000 });
    // The condition as data still works, and stops at the same instant a function does.
    const again = await partitioned();
    try {
      expect(again.runUntil({ trace: { kind: 'agent:unreachable' } }, { maxMs: 200_000 })).toEqual({
        held: true,
        timeMs: unreachable.timeMs,
      });
      // Counted with bounds, as the control API and scenario files write them.
      expect(again.runUntil({ agents: { state: 'unreachable', count: 1 } }, { timeoutMs: 0 }).held).toBe(true);
      expect(
        again.runUntil(
          { all: [{ agents: { state: 'active', max: 1 } }, { frameworks: { state: 'subscribed', count: 0 } }] },
          { timeoutMs: 0 },
        ).held,
      ).toBe(true);
      // A condition that does not read, or in a form before this one, names the field and the form to write.
      const old = { agents_registered: 1 } as unknown as Parameters<RunningCluster['runUntil']>[0];
      expect(() => again.runUntil(old)).toThrow(
        new SimControlError(
          'invalid',
          `runUntil(): 'condition.agents_registered' is the old form of a condition: write {"agents":{"state":"active","min":1}}`,
        ),
      );
      const wrong = { agents: { state: 'up' } } as unknown as Parameters<RunningCluster['runUntil']>[0];
      expect(() => again.runUntil(wrong)).toThrow(
        /^runUntil\(\): Expecting 'condition.agents.state' to be one of active, /,
      );
    } finally {
      await again.close();
    }
  });
});
