/**
 * Where the core's output goes and what executors need around them: the
 * streams of every server, the executor processes in spawn mode, the work
 * directory, and the simulated container engine on its Unix socket. Part
 * of the composition root, with cluster.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AgentFlags } from '../core/agent/flags.js';
import type { ContainerLaunch } from '../core/model/executor-api.js';
import { domainSocketPath } from '../http/domain-sockets.js';
import { Connections } from '../http/connections.js';
import { StreamBudget } from '../http/stream-budget.js';
import type { ExecutorTokens } from '../http/agent/executor-token.js';
import { createEngineServer, type EngineOptions } from '../http/engine/socket.js';
import { EngineHelpers } from '../http/agent/engine-helper.js';
import type { ListenerLimits } from '../http/limits.js';
import { ProcessContainers } from '../runtime/containers.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { StartClusterOptions } from './cluster-options.js';
import type { ResolvedOptions } from './options.js';
import { StartError } from './errors.js';

export interface WorkDir {
  readonly path: string;
  /** Made for this run (a temporary directory): removed on close. */
  readonly own: boolean;
}

/**
 * Where the core's output goes: the streams of every server in one id
 * space (the master's, and the agents' executor streams), and in spawn
 * mode the executor processes.
 */
export function outputsOf(
  driver: ClusterDriver,
  master: { readonly maxBufferedBytes?: number; readonly streamBudgetBytes?: number },
  agentFlags: AgentFlags,
  where: {
    readonly workDir: WorkDir | undefined;
    readonly options: ResolvedOptions;
    readonly tokens: ExecutorTokens | undefined;
  },
  logger: Logger,
): { connections: Connections; streamBudget: StreamBudget; containers: ProcessContainers | undefined } {
  const connections = new Connections();
  const streamBudget = new StreamBudget({
    perStreamBytes: master.maxBufferedBytes!,
    totalBytes: master.streamBudgetBytes!,
    log: logger,
  });
  driver.setOutput(connections.deliver);
  if (agentFlags.customExecutors !== 'spawn' || where.workDir === undefined)
    return { connections, streamBudget, containers: undefined };
  const workDir = where.workDir.path;
  const domainSocketOf = where.options.httpExecutorDomainSockets
    ? { domainSocketOf: (agentId: string) => domainSocketPath(workDir, agentId) }
    : {};
  const tokens = where.tokens;
  const tokenFor =
    tokens === undefined
      ? {}
      : {
          tokenFor: (l: ContainerLaunch) =>
            tokens.signSync({
              frameworkId: l.framework.id,
              executorId: l.executor.executorId,
              containerId: l.containerId,
            }),
        };
  const containers = new ProcessContainers({
    driver,
    logger,
    workDir,
    ...domainSocketOf,
    ...tokenFor,
    switchUser: where.options.switchUser,
  });
  driver.setContainerHost(containers.handle);
  return { connections, streamBudget, containers };
}

/** The work directory, when something needs one: spawned executors' sandboxes, the agents' domain sockets. */
export function workDirOf(options: ResolvedOptions, flags: AgentFlags): WorkDir | undefined {
  const engineNeedsOne = engineOn(options) && options.engineSocket === undefined;
  if (flags.customExecutors !== 'spawn' && !options.httpExecutorDomainSockets && !engineNeedsOne) return undefined;
  if (options.workDir !== undefined) {
    // Made if it is not there yet, as upstream's agent makes its --work_dir.
    mkdirSync(options.workDir, { recursive: true });
    return { path: options.workDir, own: false };
  }
  const made = mkdtempSync(path.join(os.tmpdir(), 'clustersim-'));
  // Executors switched to other users reach their sandboxes (each 0750, theirs) through it, as through upstream's work dir.
  if (flags.customExecutors === 'spawn' && options.switchUser) chmodSync(made, 0o755);
  return { path: made, own: true };
}

/** Whether the container engine runs (`containerizers` names docker); an unknown containerizer stops the start. */
export function engineOn(options: Required<Pick<StartClusterOptions, 'containerizers'>>): boolean {
  const containerizers = options.containerizers.split(',').map((c) => c.trim());
  const unknown = containerizers.find((c) => c !== 'mesos' && c !== 'docker');
  if (unknown !== undefined)
    throw new StartError(`containerizers: takes mesos and docker, got '${unknown}'`, ['containerizers']);
  return containerizers.includes('docker');
}

/** The simulated container engine on its Unix socket (mode 0600), unless `containerizers` leaves it out; the listeners' timeouts hold on it. */
export async function startEngine(
  options: ResolvedOptions,
  engine: EngineOptions,
  { headersTimeoutSeconds, requestTimeoutSeconds }: ListenerLimits,
  workDir: WorkDir | undefined,
): Promise<{ path: string; helpers: EngineHelpers; close: () => Promise<void> } | undefined> {
  if (!engineOn(options)) return undefined;
  const socketPath = options.engineSocket ?? path.join(workDir!.path, 'engine.sock');
  const server = createEngineServer({
    ...engine,
    headersTimeoutMs: headersTimeoutSeconds * 1000,
    requestTimeoutMs: requestTimeoutSeconds * 1000,
  });
  mkdirSync(path.dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new StartError(`engineSocket: cannot listen on ${socketPath}: ${error.code ?? error.message}`, [
          'engineSocket',
        ]),
      ),
    );
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(socketPath, { force: true });
  };
  return { path: socketPath, helpers: new EngineHelpers(socketPath, engine.driver), close };
}
