/**
 * Scenario runs on a cluster of this process: what the runner asks for
 * (src/scenario/runner.ts) started with `startCluster`, in virtual time,
 * with the whole trace kept, on loopback and ephemeral ports.
 */
import { startCluster, type StartClusterOptions } from './start.js';
import { loadScenario } from './scenario/load.js';
import { runScenario, type ClusterRequest, type RunOptions, type RunResult, type ScenarioCluster } from './scenario/runner.js';

export async function startScenarioCluster(request: ClusterRequest, extra: StartClusterOptions = {}): Promise<ScenarioCluster> {
  const running = await startCluster({
    ...extra,
    host: '127.0.0.1',
    port: 0,
    // Listeners take ephemeral ports; the cluster advertises fixed ones, so the trace is the same every run.
    advertisePorts: { master: 5050, firstAgent: 5051 },
    time: 'virtual',
    recordTrace: true,
    // No wall-clock keepalives: every event a framework gets is the cluster's, in the trace.
    streamKeepaliveMs: 0,
    seed: request.seed,
    masters: request.masters,
    agentGroups: request.agents,
    ...(request.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalSeconds: request.heartbeatIntervalMs / 1000 }),
    ...(request.allocationIntervalMs === undefined ? {} : { allocationIntervalSeconds: request.allocationIntervalMs / 1000 }),
    ...(request.weights === undefined ? {} : { weights: request.weights }),
    ...agentFlagOptions(request),
  });
  return {
    masterUrls: running.masterUrls,
    agentIds: running.agents.map((a) => a.id),
    driver: running.driver,
    close: () => running.close(),
  };
}

/** Loads a scenario file and runs it on a cluster of this process. */
export async function runScenarioFile(file: string, options: Omit<RunOptions, 'start'> = {}): Promise<RunResult> {
  return runScenario(loadScenario(file), { ...options, start: (request) => startScenarioCluster(request) });
}

function agentFlagOptions({ agentFlags: flags }: ClusterRequest): StartClusterOptions {
  if (flags === undefined) return {};
  const seconds = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : ms / 1000);
  const options = {
    isolation: flags.isolation,
    cgroups: flags.cgroups,
    executorRegistrationTimeoutSeconds: seconds(flags.executorRegistrationTimeoutMs),
    executorShutdownGracePeriodSeconds: seconds(flags.executorShutdownGracePeriodMs),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as StartClusterOptions;
}
