/**
 * What the core is given, from the library's options (checked, with their
 * defaults: options.ts): the cluster, its master, its agents' machines and
 * flags. A value the checks of a kind cannot judge (resources, attributes,
 * weights) stops the start with a StartError naming its option. Part of
 * the composition root, with cluster.ts.
 */
import { parseWeights } from '../core/master/weights.js';
import { Cluster } from '../core/cluster.js';
import type { MasterOptions } from '../core/master/ops.js';
import { DEFAULT_AGENT_FLAGS, type AgentFlags } from '../core/agent/flags.js';
import { DEFAULT_SANDBOX_BYTES, DEFAULT_SANDBOXES_BYTES } from '../core/process/sandbox.js';
import { parseAttributes } from '../wire/convert-common.js';

const MIB = 1024 * 1024;
import { VERSION } from '../wire/version.js';
import { agentResourcesOf } from './resources.js';
import { containerFlagsOf } from './cgroups.js';
import { engineOn } from './executors.js';
import type { Machine } from './agents.js';
import type { ResolvedOptions } from './options.js';
import { StartError } from './errors.js';

/**
 * The core, as the library's options make it. `workDir`: the agents'
 * `--work_dir`, the real one when executors are spawned there.
 */
export function clusterOf(options: ResolvedOptions, master: MasterOptions, workDir?: string): Cluster {
  const { time } = options;
  return new Cluster({
    seed: options.seed,
    ...(options.epochMs !== undefined
      ? { epochMs: options.epochMs }
      : time === 'realtime'
        ? { epochMs: Date.now() }
        : {}),
    recordTrace: options.recordTrace,
    ...(options.traceWindow === undefined ? {} : { traceWindow: options.traceWindow }),
    recordInputs: options.recordInputs ?? (options.recordTrace || time === 'virtual'),
    master,
    masters: options.masters,
    electionDelayMs: options.electionDelaySeconds * 1000,
    ...sandboxOptionsOf(options, workDir),
  });
}

/** The sandboxes' place and bounds, each given only when not the core's default (so the trace starts as it did). */
function sandboxOptionsOf(
  options: ResolvedOptions,
  workDir: string | undefined,
): { workDir?: string; sandboxBytes?: number; sandboxesBytes?: number } {
  const sandboxBytes = Math.round(options.sandboxLimitMiB * MIB);
  const sandboxesBytes = Math.round(options.sandboxBudgetMiB * MIB);
  const dir = workDir ?? options.workDir;
  return {
    ...(dir === undefined ? {} : { workDir: dir }),
    ...(sandboxBytes === DEFAULT_SANDBOX_BYTES ? {} : { sandboxBytes }),
    ...(sandboxesBytes === DEFAULT_SANDBOXES_BYTES ? {} : { sandboxesBytes }),
  };
}

/** The master's options from the library's; a StartError names the option at fault. */
export function masterOptionsOf(options: ResolvedOptions, host: string): MasterOptions {
  const weights = parseWeights(options.weights);
  if (typeof weights === 'string') throw new StartError(`weights: ${weights}`, ['weights']);
  return {
    hostname: host,
    ip: host,
    port: options.port,
    version: VERSION,
    heartbeatIntervalMs: options.heartbeatIntervalSeconds * 1000,
    allocationIntervalMs: options.allocationIntervalSeconds * 1000,
    weights: new Map(weights.map((w) => [w.role, w.weight])),
    // These three the core defaults itself (option-table.ts): given only when given.
    ...(options.agentReregisterTimeoutSeconds === undefined
      ? {}
      : { agentReregisterTimeoutMs: options.agentReregisterTimeoutSeconds * 1000 }),
    ...historyLimits(options),
  };
}

/** The bounds of the master's histories (whole numbers, checked by options.ts; zero keeps none). */
function historyLimits(
  options: ResolvedOptions,
): Pick<MasterOptions, 'maxCompletedTasksPerFramework' | 'maxCompletedFrameworks'> {
  const { maxCompletedTasksPerFramework: tasks, maxCompletedFrameworks: frameworks } = options;
  return {
    ...(tasks === undefined ? {} : { maxCompletedTasksPerFramework: tasks }),
    ...(frameworks === undefined ? {} : { maxCompletedFrameworks: frameworks }),
  };
}

/** How many agents, and what each is, from the library's options; a StartError names the option at fault. */
export function agentsOf(options: ResolvedOptions): { count: number; machine: Machine; machines?: Machine[] } {
  const flags = agentFlagsOf(options);
  const machineOf = (resourceText: string, attributeText: string, where: string): Machine => {
    const resources = agentResourcesOf(resourceText);
    if (typeof resources === 'string')
      throw new StartError(`${where === '' ? 'agentResources' : `${where}.resources`}: ${resources}`, [
        where === '' ? 'agentResources' : 'agentGroups',
      ]);
    const attributes = parseAttributes(attributeText);
    if (typeof attributes === 'string')
      throw new StartError(`${where === '' ? 'agentAttributes' : `${where}.attributes`}: ${attributes}`, [
        where === '' ? 'agentAttributes' : 'agentGroups',
      ]);
    return { resources, attributes, flags };
  };
  const machine = machineOf(options.agentResources, options.agentAttributes, '');
  if (options.agentGroups !== undefined) {
    const machines = options.agentGroups.flatMap((group, i) => {
      return Array<Machine>(group.count).fill(
        machineOf(
          group.resources ?? options.agentResources,
          group.attributes ?? options.agentAttributes,
          `agentGroups[${i}]`,
        ),
      );
    });
    return { count: machines.length, machine, machines };
  }
  return { count: options.agents, machine };
}

/** The agents' executor flags from the library's options (checked by options.ts). */
function agentFlagsOf(options: ResolvedOptions): AgentFlags {
  return {
    ...DEFAULT_AGENT_FLAGS,
    customExecutors: options.customExecutors,
    executorRegistrationTimeoutMs: Math.round(options.executorRegistrationTimeoutSeconds * 1000),
    executorShutdownGracePeriodMs: Math.round(options.executorShutdownGracePeriodSeconds * 1000),
    ...containerFlagsOf(options),
    containerEngine: engineOn(options),
  };
}
