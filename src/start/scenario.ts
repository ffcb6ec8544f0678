/**
 * Scenario runs on a cluster of this process: what the runner asks for
 * (src/scenario/runner.ts) started with `startCluster`, on loopback and
 * ephemeral ports, in virtual time (or in real time for a file with an
 * external framework). The cluster writes its inputs into the
 * trace (so it replays) and keeps only the trace's window in memory: a run
 * of days holds no more than a run of minutes.
 */
import pino from 'pino';
import { startCluster, type StartClusterOptions } from './cluster.js';
import { StartError } from './errors.js';
import { OPTION_TABLE } from './option-table.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { TRACE_WINDOW } from '../scenario/run-trace.js';
import {
  runScenario,
  type ClusterRequest,
  type ConductedService,
  type RunOptions,
  type RunResult,
  type ScenarioCluster,
  type ServiceContext,
} from '../scenario/runner.js';
import type { Scenario, ServiceSpec } from '../scenario/scenario.js';
import { startWorkflowService } from '../frameworks/workflow/service.js';
import { parseWorkflowConfig } from '../frameworks/workflow/config.js';
import { startOrchestrator } from '../frameworks/orchestrator/service.js';
import { loadConfig as loadOrchestratorConfig } from '../frameworks/orchestrator/config.js';

export async function startScenarioCluster(
  request: ClusterRequest,
  extra: StartClusterOptions = {},
): Promise<ScenarioCluster> {
  const running = await startCluster(clusterOptions(request, extra)).catch((error: unknown) => {
    throw error instanceof StartError ? new ScenarioError(fieldMessage(error)) : error;
  });
  return {
    masterUrls: running.masterUrls,
    // In virtual time the scripted frameworks call in-process: the same answers and trace, without sockets.
    ...(request.time === 'realtime' ? {} : { transport: running.inProcess }),
    agentIds: running.agents.map((a) => a.id),
    driver: running.driver,
    close: () => running.close(),
  };
}

function clusterOptions(request: ClusterRequest, extra: StartClusterOptions): StartClusterOptions {
  return {
    ...extra,
    host: '127.0.0.1',
    port: 0,
    ...(request.time === 'realtime'
      ? // A process of the user's connects to the addresses the cluster gives: its listeners' own.
        { time: 'realtime' }
      : {
          // Listeners take ephemeral ports; the cluster advertises fixed ones, so the trace is the same every run.
          advertisePorts: { master: 5050, firstAgent: 5051 },
          time: 'virtual',
          recordInputs: 'trace',
          // No wall-clock keepalives: every event a framework gets is the cluster's, in the trace.
          streamKeepaliveMs: 0,
        }),
    recordTrace: false,
    traceWindow: extra.traceWindow ?? TRACE_WINDOW,
    seed: request.seed,
    masters: request.masters,
    agentGroups: request.agents,
    ...(request.heartbeatIntervalMs === undefined
      ? {}
      : { heartbeatIntervalSeconds: request.heartbeatIntervalMs / 1000 }),
    ...(request.allocationIntervalMs === undefined
      ? {}
      : { allocationIntervalSeconds: request.allocationIntervalMs / 1000 }),
    ...(request.weights === undefined ? {} : { weights: request.weights }),
    ...(request.containerizers === undefined ? {} : { containerizers: request.containerizers }),
    ...(request.customExecutors === undefined ? {} : { customExecutors: request.customExecutors }),
    ...agentFlagOptions(request),
  };
}

/** The fields of a scenario file that the library's options come from (option-table.ts), for a StartError's message. */
const FIELDS: ReadonlyMap<string, string> = new Map(
  OPTION_TABLE.flatMap((row) => ('scenarioField' in row ? [[row.name, row.scenarioField]] : [])),
);

/** A refused start as the file's error: `cluster.agents[0].resources: ...` rather than `agentGroups[0].resources: ...`. */
function fieldMessage(error: StartError): string {
  const option = /^[A-Za-z]+/.exec(error.message)?.[0];
  const field = option === undefined ? undefined : FIELDS.get(option);
  return field === undefined ? `cluster: ${error.message}` : `${field}${error.message.slice(option!.length)}`;
}

/** Loads a scenario file and runs it on a cluster of this process. */
export async function runScenarioFile(file: string, options: Omit<RunOptions, 'start'> = {}): Promise<RunResult> {
  return runLoadedScenario(loadScenario(file), options);
}

/** Runs a scenario already loaded on a cluster of this process. */
export async function runLoadedScenario(
  scenario: Scenario,
  options: Omit<RunOptions, 'start'> = {},
): Promise<RunResult> {
  return runScenario(scenario, {
    ...options,
    start: (request) => startScenarioCluster(request),
    startService: startScenarioService,
  });
}

/**
 * A bundled framework of a scenario, on the runner's pace, its API on an
 * ephemeral loopback port. What it tells the master is the same every
 * run: a fixed user and host, task ids counted, and the API's configured
 * address as its web UI.
 */
export async function startScenarioService(
  spec: ServiceSpec,
  { masterUrls, pace }: ServiceContext,
): Promise<ConductedService> {
  const failed = (error: string): never => {
    throw new Error(`service ${spec.name}: ${error}`);
  };
  if (spec.kind === 'workflow') {
    const ini = ['[cluster]', ...Object.entries(spec.config).map(([key, value]) => `${key} = ${value}`)].join('\n');
    const parsed = parseWorkflowConfig(ini);
    if (!parsed.ok) return failed(parsed.error);
    const service = await startWorkflowService({
      config: parsed.config,
      masterUrl: masterUrls.join(','),
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      pace,
      user: 'clustersim',
    });
    return { url: service.url, link: () => service.scheduler.link(), close: () => service.close() };
  }
  const config = loadOrchestratorConfig({
    FRAMEWORK_USER: 'clustersim',
    FRAMEWORK_HOSTNAME: 'localhost',
    FRAMEWORK_NAME: spec.name,
    ...spec.config,
    CLUSTER_MASTER: masterUrls[0],
    FRAMEWORK_PORT: '0',
  });
  let n = 0;
  const service = await startOrchestrator(config, {
    listen: '127.0.0.1',
    log: () => {},
    webuiUrl: `http://${config.hostname}:${spec.config['FRAMEWORK_PORT'] ?? '10000'}`,
    framework: { pace, taskId: (part) => `${config.name}-${part}.${n++}` },
  });
  const port = new URL(service.url).port;
  return { url: `http://127.0.0.1:${port}`, link: () => service.orchestrator.link(), close: () => service.close() };
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
