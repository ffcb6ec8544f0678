/**
 * Logs: pino, one structured line per significant event, quiet by default.
 * Lines come from the trace, so they are exactly what the core did; under
 * virtual time they carry the cluster clock, which keeps them deterministic.
 */
import pino, { type Logger } from 'pino';
import type { Cluster } from '../core/cluster.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Trace kinds worth a line at `info`; everything else is `debug`. */
const SIGNIFICANT = new Set([
  'cluster:start',
  'agent:add',
  'agent:crash',
  'agent:restart',
  'agent:disconnected',
  'agent:reregistered',
  'net:rule-add',
  'net:rule-remove',
  'net:cut',
  'net:heal',
  'framework:subscribed',
  'framework:subscribe-error',
  'framework:disconnected',
  'framework:failover-expired',
  'framework:remove',
  'framework:update',
]);

/** Logs go to stderr: stdout carries only what a command prints for its user. */
export function createLogger(level: LogLevel, clock?: () => number): Logger {
  return pino(
    {
      level,
      base: { name: 'clustersim' },
      ...(clock === undefined ? {} : { timestamp: () => `,"time":${clock()}` }),
    },
    pino.destination({ dest: 2, sync: true }),
  );
}

export function logTrace(cluster: Cluster, logger: Logger): void {
  if (!logger.isLevelEnabled('debug') && !logger.isLevelEnabled('info')) return;
  cluster.trace.onEntry((entry, data) => {
    const level = SIGNIFICANT.has(entry.kind) ? 'info' : 'debug';
    if (logger.isLevelEnabled(level)) logger[level]({ event: entry.kind, at: entry.timeMs, ...data }, entry.kind);
  });
}
