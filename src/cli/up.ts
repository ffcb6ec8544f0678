/** `clustersim up`: a cluster on real sockets, in real time, until a signal. */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Argv, Options } from 'yargs';
import type { Logger } from 'pino';
import { createLogger } from '../runtime/logging.js';
import { refusal } from './option-flags.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../start/cluster.js';
import { FLAG_ROWS, OPTION_GROUPS, type FlagRow, type OptionGroup } from '../start/option-table.js';
import { startWith, withOptions, type WithArgs } from './up-with.js';
import { numberFlag, textFlag, USAGE_EXIT_CODE } from './flags.js';
import { logFormatOption, type LogFormat } from './log-options.js';

/** The value a flag of the table gives: its kind's, or undefined where the flag has no default. */
type ValueOf<R> = R extends { kind: 'number' }
  ? number
  : R extends { kind: 'boolean' }
    ? boolean
    : R extends { choices: readonly (infer C)[] }
      ? C
      : string;
type ArgOf<R> = R extends { flagDefault: null }
  ? ValueOf<R> | undefined
  : R extends { default: unknown } | { flagDefault: unknown }
    ? ValueOf<R>
    : ValueOf<R> | undefined;
/** The flags the option table gives `clustersim up`, by name. */
type TableArgs = { [R in FlagRow as R['flag']]: ArgOf<R> };

export type UpArgs = WithArgs & TableArgs & { 'log-format': LogFormat; 'ready-file'?: string };

/**
 * The groups of `--help`, in order: the basics first, then each part of
 * the cluster; the bundled frameworks' (up-with.ts) come between the
 * executors' and the limits'.
 */
const HELP_GROUPS: readonly (OptionGroup | 'basics' | 'with')[] = [
  'basics',
  'masters',
  'agents',
  'run',
  'auth',
  'containers',
  'executors',
  'with',
  'limits',
];

/** What a first start needs, shown first, in this order (out of the groups their rows name). */
const BASIC_FLAGS: readonly string[] = [
  'port',
  'agents',
  'time',
  'seed',
  'host',
  'log-level',
  'log-format',
  'ready-file',
];
const BASICS_TITLE = 'Basics:';

/** The yargs option of a flag of the table: its default (the command's where it differs from the library's), its check. */
function flagOptions(row: FlagRow): Options {
  const fallback = 'flagDefault' in row ? row.flagDefault : 'default' in row ? row.default : undefined;
  const base = {
    describe: row.describe,
    ...(fallback === undefined || fallback === null ? {} : { default: fallback }),
  };
  // Every flag but a boolean takes a value: one given none is a usage error, never its default.
  switch (row.kind) {
    case 'number':
      return 'flagUnchecked' in row
        ? { type: 'number', requiresArg: true, ...base }
        : numberFlag(row.flag, row.rule, base);
    case 'text':
      return 'parse' in row ? textFlag(row.flag, row.parse, base) : { type: 'string', requiresArg: true, ...base };
    case 'choice':
      return { choices: row.choices, requiresArg: true, ...base };
    case 'boolean':
      return { type: 'boolean', ...base };
  }
}

/** Every flag of the option table, in its order, then the groups of `--help`. `--log-format` follows `--log-level`. */
function tableOptions(y: Argv): Argv {
  let built = y;
  for (const row of FLAG_ROWS) {
    built = built.option(row.flag, flagOptions(row));
    if (row.flag === 'log-level')
      built = built.option('log-format', logFormatOption()).option('ready-file', READY_FILE_OPTION);
  }
  for (const group of HELP_GROUPS) {
    if (group === 'with') built = withOptions(built);
    else if (group === 'basics') built = built.group([...BASIC_FLAGS], BASICS_TITLE);
    else {
      const flags = FLAG_ROWS.filter((row) => row.group === group && !BASIC_FLAGS.includes(row.flag));
      built = built.group(
        flags.map((row) => row.flag),
        OPTION_GROUPS[group],
      );
    }
  }
  return built;
}

export function upOptions(y: Argv): Argv<UpArgs> {
  return tableOptions(y)
    .example('$0 up', 'A master on 127.0.0.1:5050 with 3 agents')
    .example('$0 up --time virtual', 'Cluster time moves only when told: POST /sim/v1/advance with {"ms": 15000}')
    .example(
      '$0 up --masters 3',
      'Three masters on 5050-5052: 5050 leads, the others redirect; POST /sim/v1/faults {"type":"crash_master"} fails it over',
    )
    .example("$0 up --port 0 --agents 1 --agent-attributes 'rack:r1'", 'One agent, any free port')
    .example(
      '$0 up --agents 10000 --agent-addressing loopback',
      'Ten thousand agents at 127.0.0.2:P and up, served by one listener',
    )
    .example(
      '$0 up --custom-executors spawn --work-dir /tmp/sandboxes',
      "Tasks' own executors run as real processes, each in a sandbox with its stdout and stderr",
    )
    .example(
      '$0 up --credentials creds.json --acls acls.json',
      'Schedulers authenticate (HTTP Basic) and subscribe only with the roles the ACLs allow; /sim/v1 asks for credentials, its changes for control_simulation',
    )
    .example(
      '$0 up --cgroups v1 --agents 1',
      'Containers get cgroups v1 memory files (memory.limit_in_bytes, memory.soft_limit_in_bytes)',
    )
    .example(
      '$0 up --credentials creds.json --acls acls.json --authenticate-http-readonly',
      '/state and the other read endpoints ask for credentials too, and show each reader what view_* allows',
    ) as unknown as Argv<UpArgs>;
}

export async function runUp(args: UpArgs): Promise<void> {
  const logger = createLogger(args['log-level'], undefined, args['log-format']);
  let running: RunningCluster;
  try {
    running = await startCluster(clusterOptionsOf(args, logger));
  } catch (error) {
    process.stderr.write(`clustersim up: ${refusal(error)}\n`);
    process.exitCode = USAGE_EXIT_CODE;
    return;
  }
  process.stdout.write(readyLine(running, args['advertise-host']));
  // The ready line stays the one line on stdout; where the engine listens is a log line.
  if (running.engineSocket !== undefined)
    logger.info({ engineSocket: running.engineSocket, workDir: running.workDir }, 'container engine listening');
  const services = await startWith(args, running.masterUrl, args.host, logger);
  if (typeof services === 'string') {
    process.stderr.write(`clustersim: ${services}\n`);
    await running.close();
    process.exitCode = 1;
    return;
  }
  for (const line of services.lines) process.stdout.write(`clustersim: ${line}\n`);
  const readyFile = args['ready-file'];
  if (readyFile !== undefined) writeReadyFile(readyFile, readyUrl(running, args['advertise-host']));
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    if (readyFile !== undefined) rmSync(readyFile, { force: true });
    void services
      .close()
      .then(() => running.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/** The library's options from the command's: each flag of the table as its option (`--log-level` makes the logger given instead). */
function clusterOptionsOf(args: UpArgs, logger: Logger): StartClusterOptions {
  const given = FLAG_ROWS.flatMap((row) =>
    row.name === 'logLevel' || args[row.flag] === undefined ? [] : [[row.name, args[row.flag]]],
  );
  return {
    ...(Object.fromEntries(given) as StartClusterOptions),
    recordTrace: args['record-trace'] ?? args.time === 'virtual',
    logger,
    // A failed core is a bug: the fatal line is logged; stop with a non-zero status.
    onFailure: (failure) => {
      process.stderr.write(`clustersim: ${failure.message}\n`);
      process.exit(70);
    },
  };
}

/** `--ready-file`: where a script or a container's health check learns that the cluster serves, and where. */
const READY_FILE_OPTION: Options = {
  type: 'string',
  requiresArg: true,
  describe:
    "Once the cluster serves, write the master's URL (as the ready line gives it) to this file; it is removed on a clean stop",
};

/** The master's URL in a file, whole or not at all (written beside it, then renamed over it). */
function writeReadyFile(file: string, url: string): void {
  const partial = `${file}.partial`;
  writeFileSync(partial, `${url}\n`);
  renameSync(partial, file);
}

/** The leading master's URL as the ready line names it. */
function readyUrl(running: Pick<RunningCluster, 'masterUrls'>, advertiseHost: string | undefined): string {
  return advertised(running.masterUrls[0]!, advertiseHost);
}

/** A server's URL at the advertised host, where one is given. */
function advertised(url: string, advertiseHost: string | undefined): string {
  if (advertiseHost === undefined) return url;
  const at = new URL(url);
  at.hostname = advertiseHost;
  return at.origin;
}

/**
 * The one line on stdout once the cluster serves: where clients go, at the
 * advertised host (`--advertise-host`) rather than the bind address, which
 * in a container is `0.0.0.0` and reaches nothing from outside.
 */
export function readyLine(
  running: Pick<RunningCluster, 'masterUrls' | 'agents'>,
  advertiseHost: string | undefined,
): string {
  const [leader, ...others] = running.masterUrls.map((url) => advertised(url, advertiseHost));
  const standbys = others.length > 0 ? ` (leader; standby masters at ${others.join(', ')})` : '';
  const agents = running.agents.length;
  return `clustersim: master at ${leader}${standbys} with ${agents} agent${agents === 1 ? '' : 's'}\n`;
}
