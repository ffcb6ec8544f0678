/**
 * The limits of the servers (`LimitOptions`), with their defaults from the
 * option table, as the master's app and the agents' listeners take them.
 * Part of the composition root, with cluster.ts.
 */
import type { ListenerLimits } from '../http/limits.js';
import type { MasterAppOptions } from '../http/master/app.js';
import type { LimitOptions } from './cluster-options.js';
import { OPTION_TABLE } from './option-table.js';
import type { ResolvedOptions } from './options.js';

const MIB = 1024 * 1024;

/** The defaults of the limits (the option table's), for the benchmarks and anyone who wants them as one object. */
export const DEFAULT_LIMITS = Object.fromEntries(
  OPTION_TABLE.flatMap((row) => ('group' in row && row.group === 'limits' ? [[row.name, row.default]] : [])),
) as { readonly [K in keyof LimitOptions]-?: number };

/** The limits as the servers take them (checked by options.ts). */
export function limitsOf(value: ResolvedOptions): {
  master: Omit<MasterAppOptions, 'driver' | 'logger'>;
  agentListener: ListenerLimits;
} {
  const timeouts = {
    idleTimeoutSeconds: value.idleTimeoutSeconds,
    headersTimeoutSeconds: value.headersTimeoutSeconds,
    requestTimeoutSeconds: value.requestTimeoutSeconds,
  };
  return {
    master: {
      listener: { ...timeouts, maxConnections: value.maxConnections },
      maxSubscriptions: value.maxSubscriptions,
      maxFrameworks: value.maxFrameworks,
      maxBufferedBytes: Math.round(value.streamBufferLimitMiB * MIB),
      streamBudgetBytes: Math.round(value.streamBufferBudgetMiB * MIB),
    },
    agentListener: { ...timeouts, maxConnections: value.agentMaxConnections },
  };
}
