/**
 * The clusters of the Go client suite that run in the runner's own process
 * (`startCluster()`), for what `clustersim up` has no command for: an agent
 * restart asked for by a run, and starting, as an outside process, an
 * executor the agents await (`customExecutors: 'await'`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

/** A cluster the runs go against, started. */
export interface Running {
  readonly masterUrl: string;
  readonly stderr: () => string;
  /** Stops it; 0 when it stopped cleanly. */
  stop(): Promise<number | null>;
  /** Crashes the agent and starts it again from its checkpoint (--recover=reconnect). */
  readonly restartAgent?: (agentId: string) => void;
  /** Starts an executor the agent awaits, running its command as an agent would. */
  readonly startExecutor?: (executor: ExternalExecutor) => void;
}

export interface ExternalExecutor {
  readonly executorId: string;
  readonly frameworkId: string;
  readonly agentId: string;
  /** The ExecutorInfo's command, run with /bin/sh -c. */
  readonly command: string;
}

/** How long executors started here have to exit by themselves once the cluster stops. */
const EXIT_WAIT_MS = 5_000;

export async function inProcess(
  workDir: string,
  customExecutors: 'spawn' | 'await',
  log: (line: string) => void,
): Promise<Running> {
  const cluster = await startCluster({ agents: 2, logLevel: 'warn', customExecutors, workDir });
  const started: {
    readonly executor: ExternalExecutor;
    readonly child: ChildProcess;
    readonly exit: Promise<number | null>;
  }[] = [];
  return {
    masterUrl: cluster.masterUrl,
    stderr: () => '',
    stop: async () => {
      let code: number | null = 0;
      for (const { executor, child, exit } of started) {
        const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), EXIT_WAIT_MS);
        const exitCode = await exit;
        clearTimeout(timer);
        if (exitCode !== 0) {
          log(
            `go client suite: executor ${executor.executorId} of framework ${executor.frameworkId} exited with ${exitCode ?? 'a signal'}, want 0`,
          );
          code = 1;
        }
      }
      try {
        await cluster.close();
      } catch (error) {
        log(`go client suite: the cluster failed: ${error instanceof Error ? error.message : String(error)}`);
        code = 1;
      }
      return code;
    },
    restartAgent: (agentId) => {
      cluster.driver.input((c) => c.crashAgent(agentId));
      cluster.driver.input((c) => c.restartAgent(agentId, 'reconnect'));
    },
    ...(customExecutors === 'await'
      ? { startExecutor: (executor: ExternalExecutor) => started.push(startExternal(cluster, workDir, executor)) }
      : {}),
  };
}

/**
 * Runs the executor's command in a sandbox laid out as the agent's, with
 * the environment an agent gives an executor of a checkpointing framework
 * (the scheduler's executor scenarios checkpoint).
 */
function startExternal(cluster: RunningCluster, workDir: string, executor: ExternalExecutor) {
  const { executorId, frameworkId, agentId, command } = executor;
  const agent = cluster.agents.find((a) => a.id === agentId);
  if (agent === undefined) throw new Error(`no agent ${agentId} to start executor ${executorId} for`);
  const sandbox = path.join(
    workDir,
    'agents',
    agentId,
    'frameworks',
    frameworkId,
    'executors',
    executorId,
    'runs',
    'external',
  );
  mkdirSync(sandbox, { recursive: true });
  const env = {
    ...process.env,
    MESOS_FRAMEWORK_ID: frameworkId,
    MESOS_EXECUTOR_ID: executorId,
    MESOS_DIRECTORY: sandbox,
    MESOS_SANDBOX: sandbox,
    MESOS_AGENT_ENDPOINT: new URL(agent.url).host,
    MESOS_CHECKPOINT: '1',
    MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD: '5secs',
    MESOS_RECOVERY_TIMEOUT: '15mins',
    MESOS_SUBSCRIPTION_BACKOFF_MAX: '2secs',
  };
  const stdout = openSync(path.join(sandbox, 'stdout'), 'w');
  const stderr = openSync(path.join(sandbox, 'stderr'), 'w');
  // A process group of its own, so that the shell and the executor go together if killed.
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: sandbox,
    env,
    stdio: ['ignore', stdout, stderr],
    detached: true,
  });
  closeSync(stdout);
  closeSync(stderr);
  const exit = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
  return { executor, child, exit };
}
