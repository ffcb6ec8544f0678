/**
 * The agents' container flags of `startCluster()` and `clustersim up`: the
 * cgroups version, the isolators, and on cgroups v2 whether the memory
 * controller is delegated. Part of the composition root, with cluster.ts.
 */
import type { AgentFlags, CgroupsVersion } from '../core/agent/flags.js';
import { StartError } from './errors.js';

/** Upstream's isolators this cluster knows; only `cgroups/mem` changes what it does (memory limits enforced). */
export const ISOLATORS = ['cgroups/cpu', 'cgroups/mem', 'posix/cpu', 'posix/mem'] as const;
export const DEFAULT_ISOLATION = 'cgroups/cpu,cgroups/mem';

export interface ContainerOptions {
  /** `--cgroups`: the cgroups version of every agent's host, `v1` or `v2`. */
  readonly cgroups?: CgroupsVersion;
  /**
   * `--isolation`: the agents' isolators, upstream's comma list. With
   * `cgroups/mem` each container's memory limits are written to its cgroup
   * and enforced (OOM kill), and UPDATE_CONTAINER_MEMORY_LIMIT can change
   * them; without (`posix/cpu,posix/mem`, or empty), neither.
   */
  readonly isolation?: string;
  /** `--memory-controller-delegated`: on cgroups v2, whether the memory controller is delegated to the agents' hierarchy. */
  readonly memoryControllerDelegated?: boolean;
}

/** The container flags from the library's options (with their defaults, option-table.ts), checked; a StartError names the option at fault. */
export function containerFlagsOf(
  options: Required<ContainerOptions>,
): Pick<AgentFlags, 'cgroups' | 'memoryIsolation' | 'memoryControllerDelegated'> {
  const isolators = options.isolation
    .split(',')
    .map((i) => i.trim())
    .filter((i) => i !== '');
  const unknown = isolators.find((i) => !(ISOLATORS as readonly string[]).includes(i));
  if (unknown !== undefined)
    throw new StartError(`isolation: unknown isolator '${unknown}' (known: ${ISOLATORS.join(', ')})`, 'isolation');
  return {
    cgroups: options.cgroups,
    memoryIsolation: isolators.includes('cgroups/mem'),
    memoryControllerDelegated: options.memoryControllerDelegated,
  };
}
