/**
 * Scenario runs spread over this machine's cores, for `clustersim chaos`
 * (a run per fault schedule) and `clustersim run --seeds` (a run per
 * seed): K workers are this process and K - 1 child processes
 * (scenario-worker.ts), each with its own clusters on ephemeral ports,
 * each handed the next run when it is done with one. The outcomes come
 * back in whatever order the runs end; the callers order them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChaosFault } from '../scenario/chaos.js';
import { runSchedule, type ScheduleOutcome } from '../scenario/chaos-record.js';
import { ScenarioError } from '../scenario/load.js';
import { RunError, runScenario, type RunResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/scenario.js';
import { runLoadedScenario, startScenarioCluster, startScenarioService } from '../start/scenario.js';

/** A run: the scenario under a fault schedule (its own seed), or with another seed. */
export type PoolTask =
  | { readonly kind: 'schedule'; readonly schedule: readonly ChaosFault[] }
  | { readonly kind: 'seed'; readonly seed: string };

/** A run with a seed: its result, or where it stopped (the RunError's message). */
export type SeedOutcome = { readonly result: RunResult } | { readonly stopped: string };

export type PoolOutcome = ScheduleOutcome | SeedOutcome;

/** A message from a worker: the outcome of a run, or why there is none. */
export type WorkerReply =
  | { readonly index: number; readonly outcome: PoolOutcome }
  | { readonly index: number; readonly error: string; readonly scenarioError: boolean };

/** A message to a worker: a run to make. */
export interface WorkerTask {
  readonly index: number;
  readonly task: PoolTask;
}

/** Runs a scenario under faults on a cluster of this process, faults that cannot apply taken as problems. */
export function runHere(scenario: Scenario): Promise<RunResult> {
  return runScenario(scenario, {
    start: (request) => startScenarioCluster(request),
    startService: startScenarioService,
    lenientFaults: true,
  });
}

/** One run, in whichever process it is in. */
export async function runTask(scenario: Scenario, task: PoolTask): Promise<PoolOutcome> {
  if (task.kind === 'schedule') return runSchedule(scenario, task.schedule, runHere);
  try {
    return { result: await runLoadedScenario(scenario, { seed: task.seed }) };
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    return { stopped: error.message };
  }
}

/** Makes the runs (index to run) on `workers` workers; `onDone` is told of each as it ends. */
export async function runPool<O extends PoolOutcome>(
  scenario: Scenario,
  tasks: ReadonlyMap<number, PoolTask>,
  workers: number,
  onDone: (index: number, outcome: O) => void,
): Promise<Map<number, O>> {
  const outcomes = new Map<number, O>();
  const queue = [...tasks.keys()];
  const done = (index: number, outcome: PoolOutcome): void => {
    outcomes.set(index, outcome as O);
    onDone(index, outcome as O);
  };
  // This process is one of the workers: K - 1 children start beside it, none when one worker is asked for.
  const children = Array.from({ length: Math.min(workers, queue.length) - 1 }, () => startWorker(scenario.file));
  const here = async (): Promise<void> => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift())
      done(index, await runTask(scenario, tasks.get(index)!));
  };
  try {
    await Promise.all([here(), ...children.map((child) => drive(child, queue, tasks, done))]);
  } finally {
    for (const child of children) if (child.connected) child.disconnect();
  }
  return outcomes;
}

/** The worker's entry beside this module: .js when built, .ts when run from the sources. */
function startWorker(file: string): ChildProcess {
  const here = fileURLToPath(import.meta.url);
  const entry = path.join(path.dirname(here), `scenario-worker${path.extname(here)}`);
  // Structured clones, not JSON: a run's result goes back whole, for the same reports as a run here.
  return fork(entry, [file], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: process.execArgv,
    serialization: 'advanced',
  });
}

/** Feeds one worker runs from the shared queue until it is empty. */
function drive(
  child: ChildProcess,
  queue: number[],
  tasks: ReadonlyMap<number, PoolTask>,
  onDone: (index: number, outcome: PoolOutcome) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (): void => {
      const index = queue.shift();
      if (index === undefined) return resolve();
      child.send({ index, task: tasks.get(index)! } satisfies WorkerTask);
    };
    child.on('message', (reply: WorkerReply) => {
      if ('error' in reply) {
        queue.length = 0;
        reject(reply.scenarioError ? new ScenarioError(reply.error) : new Error(reply.error));
        return;
      }
      onDone(reply.index, reply.outcome);
      next();
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`a worker process ended before its runs did (${signal ?? `exit code ${code}`})`)),
    );
    next();
  });
}
