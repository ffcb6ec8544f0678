/**
 * The agents' container flags of `startCluster()` and `clustersim up`: the
 * cgroups version, the isolators, and on cgroups v2 whether the memory
 * controller is delegated. Part of the composition root, with cluster.ts.
 */
import { DEFAULT_AGENT_FLAGS, type AgentFlags, type CgroupsVersion } from '../core/agent/flags.js';
import { StartError } from './errors.js';

/** Upstream's isolators this cluster knows; only `cgroups/mem` changes what it does (memory limits enforced). */
export const ISOLATORS = ['cgroups/cpu', 'cgroups/mem', 'posix/cpu', 'posix/mem'] as const;
export const DEFAULT_ISOLATION = 'cgroups/cpu,cgroups/mem';

export interface ContainerOptions {
  /** `--cgroups`: the cgroups version of every agent's host, `v1` or `v2` (default). */
  readonly cgroups?: CgroupsVersion;
  /**
   * `--isolation`: the agents' isolators, upstream's comma list (default
   * `cgroups/cpu,cgroups/mem`). With `cgroups/mem` each container's memory
   * limits are written to its cgroup and enforced (OOM kill), and
   * UPDATE_CONTAINER_MEMORY_LIMIT can change them; without (`posix/cpu,posix/mem`,
   * or empty), neither.
   */
  readonly isolation?: string;
  /** `--memory-controller-delegated` (default true): on cgroups v2, whether the memory controller is delegated to the agents' hierarchy. */
  readonly memoryControllerDelegated?: boolean;
}

/** The container flags from the library's options, checked; a StartError names the option at fault. */
export function containerFlagsOf(options: ContainerOptions): Pick<AgentFlags, 'cgroups' | 'memoryIsolation' | 'memoryControllerDelegated'> {
  const cgroups = options.cgroups ?? DEFAULT_AGENT_FLAGS.cgroups;
  const isolators = (options.isolation ?? DEFAULT_ISOLATION)
    .split(',')
    .map((i) => i.trim())
    .filter((i) => i !== '');
  const unknown = isolators.find((i) => !(ISOLATORS as readonly string[]).includes(i));
  if (unknown !== undefined) throw new StartError(`isolation: unknown isolator '${unknown}' (known: ${ISOLATORS.join(', ')})`, 'isolation');
  return {
    cgroups,
    memoryIsolation: isolators.includes('cgroups/mem'),
    memoryControllerDelegated: options.memoryControllerDelegated ?? DEFAULT_AGENT_FLAGS.memoryControllerDelegated,
  };
}
