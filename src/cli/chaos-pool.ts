/**
 * The runs of a fault-schedule search spread over this machine's cores:
 * K workers are this process and K - 1 child processes (chaos-worker.ts),
 * each with its own clusters on ephemeral ports, each handed the next
 * schedule when it is done with one. The
 * outcomes come back in whatever order the runs end; the caller orders
 * them by schedule.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChaosFault } from '../scenario/chaos.js';
import { runSchedule, type ScheduleOutcome } from '../scenario/chaos-record.js';
import { ScenarioError } from '../scenario/load.js';
import { runScenario } from '../scenario/runner.js';
import type { Scenario } from '../scenario/scenario.js';
import { startScenarioCluster, startScenarioService } from '../start/scenario.js';

/** A message from a worker: the outcome of a schedule, or why there is none. */
export type WorkerReply =
  | { readonly index: number; readonly outcome: ScheduleOutcome }
  | { readonly index: number; readonly error: string; readonly scenarioError: boolean };

/** A message to a worker: a schedule to run. */
export interface WorkerTask {
  readonly index: number;
  readonly schedule: readonly ChaosFault[];
}

/** Runs a scenario under faults on a cluster of this process, faults that cannot apply taken as problems. */
export function runHere(scenario: Scenario): Promise<import('../scenario/runner.js').RunResult> {
  return runScenario(scenario, {
    start: (request) => startScenarioCluster(request),
    startService: startScenarioService,
    lenientFaults: true,
  });
}

/** Runs the schedules (index to schedule) on `workers` workers; `onDone` is told of each as it ends. */
export async function runSchedules(
  scenario: Scenario,
  schedules: ReadonlyMap<number, readonly ChaosFault[]>,
  workers: number,
  onDone: (index: number, outcome: ScheduleOutcome) => void,
): Promise<Map<number, ScheduleOutcome>> {
  const outcomes = new Map<number, ScheduleOutcome>();
  const queue = [...schedules.keys()];
  const done = (index: number, outcome: ScheduleOutcome): void => {
    outcomes.set(index, outcome);
    onDone(index, outcome);
  };
  // This process is one of the workers: K - 1 children start beside it, none when one worker is asked for.
  const children = Array.from({ length: Math.min(workers, queue.length) - 1 }, () => startWorker(scenario.file));
  const here = async (): Promise<void> => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift())
      done(index, await runSchedule(scenario, schedules.get(index)!, runHere));
  };
  try {
    await Promise.all([here(), ...children.map((child) => drive(child, queue, schedules, done))]);
  } finally {
    for (const child of children) if (child.connected) child.disconnect();
  }
  return outcomes;
}

/** The worker's entry beside this module: .js when built, .ts when run from the sources. */
function startWorker(file: string): ChildProcess {
  const here = fileURLToPath(import.meta.url);
  const entry = path.join(path.dirname(here), `chaos-worker${path.extname(here)}`);
  return fork(entry, [file], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv: process.execArgv });
}

/** Feeds one worker schedules from the shared queue until it is empty. */
function drive(
  child: ChildProcess,
  queue: number[],
  schedules: ReadonlyMap<number, readonly ChaosFault[]>,
  onDone: (index: number, outcome: ScheduleOutcome) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (): void => {
      const index = queue.shift();
      if (index === undefined) return resolve();
      child.send({ index, schedule: schedules.get(index)! } satisfies WorkerTask);
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
