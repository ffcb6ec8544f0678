/**
 * Logs: pino, one structured line per significant event, quiet by default.
 * Lines come from the trace, so they are exactly what the core did; under
 * virtual time they carry the cluster clock, which keeps them deterministic.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Cluster } from '../core/cluster.js';
import type { TraceEntry } from '../core/kernel/trace.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `json`: one JSON object a line, for programs; `pretty`: coloured text for people (pino-pretty). */
export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** Pretty where a person reads the stream (a terminal), JSON lines where a program does. */
export function defaultLogFormat(stream: { readonly isTTY?: boolean }): LogFormat {
  return stream.isTTY === true ? 'pretty' : 'json';
}

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

/**
 * Trace kinds at `info` said in words: a task launched, a status update
 * reaching the master, a batch of offers sent to a framework.
 */
const DESCRIBED: Readonly<
  Record<string, (data: Readonly<Record<string, unknown>>) => readonly [string, Record<string, unknown>]>
> = {
  'task:launch': (d) => [
    `task ${String(d['taskId'])} launched`,
    { taskId: d['taskId'], frameworkId: d['frameworkId'], agentId: d['agentId'] },
  ],
  'task:status': (d) => [
    `task ${String(d['taskId'])} ${String(d['state'])}`,
    { taskId: d['taskId'], state: d['state'], frameworkId: d['frameworkId'], agentId: d['agentId'] },
  ],
  'event:offers': (d) => {
    // The entry's text: the framework, then the offer ids, comma-separated.
    const [frameworkId = '', ids = ''] = String(d['text']).split(' ');
    const offers = ids === '' ? 0 : ids.split(',').length;
    return [`${offers} offer${offers === 1 ? '' : 's'} sent to framework ${frameworkId}`, { frameworkId, offers }];
  },
};

/** Logs go to stderr: stdout carries only what a command prints for its user. */
export function createLogger(level: LogLevel, clock?: () => number, format: LogFormat = 'json'): Logger {
  return pino(
    {
      level,
      base: { name: 'clustersim' },
      ...(clock === undefined ? {} : { timestamp: () => `,"time":${clock()}` }),
    },
    destinationOf(format),
  );
}

function destinationOf(format: LogFormat): DestinationStream {
  if (format === 'json') return pino.destination({ dest: 2, sync: true });
  return pretty({
    destination: 2,
    sync: true,
    colorize: process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'name,event,at',
    singleLine: true,
  });
}

/**
 * One line per significant trace entry at `info` (each entry at `debug`),
 * with `event` (its kind), `at` (cluster time, ms since the cluster
 * started) and `clusterTime` (the same as a date: the epoch plus `at`, so
 * virtual time shows as such).
 */
export function logTrace(cluster: Cluster, logger: Logger): void {
  if (!logger.isLevelEnabled('debug') && !logger.isLevelEnabled('info')) return;
  cluster.trace.onEntry((entry, data) => {
    const describe = DESCRIBED[entry.kind];
    const level = describe !== undefined || SIGNIFICANT.has(entry.kind) ? 'info' : 'debug';
    if (!logger.isLevelEnabled(level)) return;
    const [msg, fields] = describe === undefined ? [entry.kind, data] : describe(data);
    logger[level]({ event: entry.kind, ...clusterTimeOf(cluster, entry), ...fields }, msg);
  });
}

function clusterTimeOf(cluster: Cluster, entry: TraceEntry): { at: number; clusterTime: string } {
  return { at: entry.timeMs, clusterTime: new Date(cluster.epochMs + entry.timeMs).toISOString() };
}
