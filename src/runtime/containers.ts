/**
 * Executor containers as real child processes (`--custom-executors
 * spawn`). For each container the agents launch, the command of its
 * ExecutorInfo runs in a sandbox directory of its own, the one the core
 * names (upstream's layout),
 *
 *   <work-dir>/slaves/<agent>/frameworks/<framework>/executors/<executor>/runs/<container>
 *
 * with `runs/latest` a symbolic link to the newest run, its stdout and
 * stderr in the files `stdout` and `stderr` there, and
 * the environment upstream's agent gives an executor, under both names
 * (`MESOS_*` and `CLUSTER_*`), over the agent's own environment and the
 * command's. The process finds its agent at `AGENT_ENDPOINT` and speaks
 * the executor HTTP API; when it exits, the core hears of it
 * (`containerExited`, with its wait(2) status). Destroying a container
 * kills its whole process group. Closing kills whatever still runs. Once
 * the agent's gc delay is over after the container ended, the core asks
 * for its sandbox to go (a `gc` record) and the directory is removed.
 *
 * With `switchUser` (the default, upstream's `--switch_user`), the
 * process runs as the executor command's user, else the framework's
 * (users.ts); a sandbox that cannot be given to that user fails the
 * launch (`containerLaunchFailed`), as upstream's agent fails it. Without,
 * it runs as this process' user, whatever the framework asked for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { formatDuration } from '../core/kernel/duration.js';
import type { ContainerLaunch } from '../core/model/executor-api.js';
import type { ContainerRecord } from '../core/network/outbox.js';
import type { mesos } from '../wire/generated/types.js';
import type { ClusterDriver } from './driver.js';
import { launchUser, ownSandbox, type HostUser } from './users.js';

/** `wait(2)` status of a process that could not be started: exit code 127, as a shell reports it. */
const NOT_STARTED_STATUS = 127 << 8;

export interface ContainersOptions {
  readonly driver: ClusterDriver;
  readonly logger: Logger;
  /** Where sandboxes go. */
  readonly workDir: string;
  /** The token an executor authenticates with, when executor authentication is on. */
  readonly tokenFor?: (launch: ContainerLaunch) => string;
  /** The agent's Unix domain socket for its executors, when it serves one. */
  readonly domainSocketOf?: (agentId: string) => string;
  /** `--switch-user` (default true): run each executor as its command's user, else its framework's. */
  readonly switchUser?: boolean;
}

interface Running {
  readonly child: ChildProcess;
  readonly launch: ContainerLaunch;
}

export class ProcessContainers {
  readonly #running = new Map<string, Running>();
  #closed = false;

  constructor(private readonly options: ContainersOptions) {}

  get workDir(): string {
    return this.options.workDir;
  }

  /** The driver's container host. */
  readonly handle = (records: readonly ContainerRecord[]): void => {
    for (const record of records) {
      if (record.kind === 'launch') this.#launch(record.launch);
      else if (record.kind === 'gc') this.#collect(record.directory);
      else this.#destroy(record.containerId);
    }
  };

  /** The sandbox of a container: its working directory and the home of its stdout and stderr. */
  sandboxOf(launch: Pick<ContainerLaunch, 'directory'>): string {
    return launch.directory;
  }

  /** Removes a sandbox whose gc delay is over; only one under the work directory, and `runs/latest` with it if it names it. */
  #collect(directory: string): void {
    const relative = path.relative(this.workDir, directory);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
    const latest = path.join(path.dirname(directory), 'latest');
    try {
      if (readlinkSync(latest) === path.basename(directory)) rmSync(latest, { force: true });
    } catch {
      // No link, or another run's.
    }
    rmSync(directory, { recursive: true, force: true });
  }

  /** Kills every process still running and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    const exits = [...this.#running.values()].map(
      ({ child }) => new Promise<void>((resolve) => child.once('close', () => resolve())),
    );
    for (const containerId of [...this.#running.keys()]) this.#destroy(containerId);
    await Promise.all(exits);
  }

  #launch(launch: ContainerLaunch): void {
    if (this.#closed) return;
    const sandbox = this.sandboxOf(launch);
    mkdirSync(sandbox, { recursive: true });
    pointLatestAt(sandbox);
    const user = this.options.switchUser === false ? undefined : ownSandbox(sandbox, launchUser(launch));
    if (typeof user === 'string') return this.#launchFailed(launch, user);
    const stdout = openSync(path.join(sandbox, 'stdout'), 'a');
    const stderr = openSync(path.join(sandbox, 'stderr'), 'a');
    const { file, args } = commandLine(launch);
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd: sandbox,
        env: {
          ...process.env,
          ...commandEnvironment(launch),
          ...executorEnvironment(launch, sandbox, this.#extras(launch)),
        },
        stdio: ['ignore', stdout, stderr],
        // A group of its own, so that destroying the container kills what it started too.
        detached: true,
        ...switchTo(user),
      });
    } catch (error) {
      // What the framework sent cannot be executed at all (E2BIG for a command or environment over the
      // host's limits, a NUL byte inside a string): the launch fails as upstream's launcher fails it.
      return this.#launchFailed(launch, `Failed to launch container: ${(error as Error).message}`);
    } finally {
      closeSync(stdout);
      closeSync(stderr);
    }
    const { agentId, containerId } = launch;
    this.#running.set(containerId, { child, launch });
    this.options.logger.info(
      { agentId, containerId, executorId: launch.executor.executorId, pid: child.pid, sandbox },
      'executor process started',
    );
    child.once('error', (error) =>
      this.options.logger.warn({ containerId, err: error }, 'executor process failed to start'),
    );
    child.once('close', (code, signal) => {
      this.#running.delete(containerId);
      const status =
        code === null ? (signal === null ? NOT_STARTED_STATUS : os.constants.signals[signal]) : (code & 0xff) << 8;
      this.options.logger.info({ agentId, containerId, code, signal }, 'executor process exited');
      if (this.options.driver.failure === undefined)
        this.options.driver.input((c) => c.containerExited(agentId, containerId, status));
    });
  }

  /** The process was not started: the core hears why, after the records being handled now. */
  #launchFailed(launch: ContainerLaunch, message: string): void {
    const { agentId, containerId } = launch;
    this.options.logger.warn(
      { agentId, containerId, executorId: launch.executor.executorId, reason: message },
      'executor process not started',
    );
    setImmediate(() => {
      if (!this.#closed && this.options.driver.failure === undefined)
        this.options.driver.input((c) => c.containerLaunchFailed(agentId, containerId, message));
    });
  }

  #extras(launch: ContainerLaunch): EnvironmentExtras {
    const token = this.options.tokenFor?.(launch);
    const domainSocket = this.options.domainSocketOf?.(launch.agentId);
    return { ...(token === undefined ? {} : { token }), ...(domainSocket === undefined ? {} : { domainSocket }) };
  }

  #destroy(containerId: string): void {
    const running = this.#running.get(containerId);
    if (running?.child.pid === undefined) return;
    try {
      process.kill(-running.child.pid, 'SIGKILL');
    } catch {
      // Gone already; its close event reports it.
    }
  }
}

/** `runs/latest`: a relative symbolic link to the newest run of the executor, as upstream's agent keeps it. */
function pointLatestAt(sandbox: string): void {
  const latest = path.join(path.dirname(sandbox), 'latest');
  try {
    rmSync(latest, { force: true });
    symlinkSync(path.basename(sandbox), latest);
  } catch {
    // A convenience: the sandbox works without it.
  }
}

/** The uid and gid to spawn with: none when the process runs as this one's user already (or no user is switched to). */
function switchTo(user: HostUser | undefined): { uid?: number; gid?: number } {
  if (user === undefined || (user.uid === process.getuid?.() && user.gid === process.getgid?.())) return {};
  return { uid: user.uid, gid: user.gid };
}

/** What runs: the command through `/bin/sh -c` (upstream's default, `shell` unset or true), else the file with its arguments. */
function commandLine(launch: ContainerLaunch): { file: string; args: string[] } {
  const command = launch.executor.command;
  const value = command?.value ?? '';
  if (command === undefined || command.shell) return { file: '/bin/sh', args: ['-c', value] };
  // Upstream passes `arguments` as the whole argv, its first being the program's name.
  return { file: value, args: command.arguments.slice(1) };
}

/** The variables of the ExecutorInfo's CommandInfo (`environment.variables`, the plain ones). */
function commandEnvironment(launch: ContainerLaunch): Record<string, string> {
  const raw = launch.executor.raw as mesos.v1.ExecutorInfo | undefined;
  const out: Record<string, string> = {};
  for (const variable of raw?.command?.environment?.variables ?? []) {
    if (variable.value !== undefined) out[variable.name] = variable.value;
  }
  return out;
}

/** Upstream's executor environment, under `MESOS_` and `CLUSTER_` alike (CHECKPOINT in each one's form). */
export interface EnvironmentExtras {
  /** EXECUTOR_AUTHENTICATION_TOKEN, with executor authentication on. */
  readonly token?: string;
  /** DOMAIN_SOCKET, when the agent serves its executors on one. */
  readonly domainSocket?: string;
}

export function executorEnvironment(
  launch: ContainerLaunch,
  sandbox: string,
  extras: EnvironmentExtras = {},
): Record<string, string> {
  const vars: Record<string, string> = {
    FRAMEWORK_ID: launch.framework.id,
    EXECUTOR_ID: launch.executor.executorId,
    DIRECTORY: sandbox,
    // No container image: the sandbox inside the container is the host's.
    SANDBOX: sandbox,
    AGENT_ENDPOINT: launch.agentEndpoint,
    SLAVE_PID: `slave(1)@${launch.agentEndpoint}`,
    EXECUTOR_SHUTDOWN_GRACE_PERIOD: formatDuration(launch.shutdownGracePeriodMs),
    ...(launch.checkpoint
      ? {
          RECOVERY_TIMEOUT: formatDuration(launch.recoveryTimeoutMs),
          SUBSCRIPTION_BACKOFF_MAX: formatDuration(launch.subscriptionBackoffMaxMs),
        }
      : {}),
    ...(extras.token === undefined ? {} : { EXECUTOR_AUTHENTICATION_TOKEN: extras.token }),
    ...(extras.domainSocket === undefined ? {} : { DOMAIN_SOCKET: extras.domainSocket }),
  };
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(vars)) {
    out[`MESOS_${name}`] = value;
    out[`CLUSTER_${name}`] = value;
  }
  // The spec's `true`; upstream's executor libraries read `1` (and Go's ParseBool takes both).
  out['CLUSTER_CHECKPOINT'] = String(launch.checkpoint);
  out['MESOS_CHECKPOINT'] = launch.checkpoint ? '1' : '0';
  return out;
}
