/**
 * The workflow container-task service from the command line:
 * `clustersim serve workflow` runs it (its framework on a master, its API
 * on a port) until a signal, and `clustersim workflow run` is the
 * workflow integration's container operator: one request posted, its
 * status polled, and the exit code the workflow task would get.
 */
import { randomBytes } from 'node:crypto';
import type { Argv, Options } from 'yargs';
import { createLogger, LOG_LEVELS, type LogLevel } from '../runtime/logging.js';
import type { Encoding } from '../client/scheduler-client.js';
import {
  DEFAULT_API_PORT,
  DEFAULT_CONFIG,
  loadWorkflowConfig,
  type WorkflowConfig,
} from '../frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../frameworks/workflow/service.js';
import { EXIT_CODES, runOperator, type OperatorOutcome } from '../frameworks/workflow/operator.js';
import { numberFlag, PORT, SECONDS, UsageError } from './flags.js';
import { logFormatOption, type LogFormat } from './log-options.js';

export interface ServeWorkflowArgs {
  config: string | undefined;
  port: number;
  host: string;
  master: string | undefined;
  'state-file': string | undefined;
  encoding: Encoding;
  'log-level': LogLevel;
  'log-format': LogFormat;
}

export function serveWorkflowOptions(y: Argv): Argv {
  return y
    .option('config', {
      requiresArg: true,
      type: 'string',
      describe:
        'INI file with a [cluster] section (docs/frameworks.md, "Workflow container-task service"); without it, the defaults',
    })
    .option(
      'port',
      numberFlag('port', PORT, { default: DEFAULT_API_PORT, describe: 'Port of the local API (0 picks a free one)' }),
    )
    .option('host', {
      requiresArg: true,
      type: 'string',
      default: '127.0.0.1',
      describe: 'Address the local API listens on',
    })
    .option('master', {
      requiresArg: true,
      type: 'string',
      describe: "The master, host:port or a URL, or several comma-separated (default the configuration's `master`)",
    })
    .option('state-file', {
      requiresArg: true,
      type: 'string',
      describe:
        'Keep the framework id, queue and tasks here, so that a restart fails over onto the framework and keeps them',
    })
    .option('encoding', {
      requiresArg: true,
      choices: ['json', 'protobuf'] as const,
      default: 'json' as Encoding,
      describe: 'What the framework speaks to the master',
    })
    .option('log-level', {
      choices: LOG_LEVELS,
      default: 'info' as LogLevel,
      requiresArg: true,
      describe: 'Log level (logs go to stderr)',
    })
    .option('log-format', logFormatOption())
    .example(
      '$0 serve workflow --config workflow.cfg',
      'Serves the API on 11000 with the framework on the configured master',
    );
}

function configOf(args: ServeWorkflowArgs): WorkflowConfig | undefined {
  if (args.config === undefined) return DEFAULT_CONFIG;
  const loaded = loadWorkflowConfig(args.config);
  if (loaded.ok) return loaded.config;
  process.stderr.write(`clustersim: ${loaded.error}\n`);
  return undefined;
}

/** Starts the service; a refused start prints why and exits 1. */
export async function runServeWorkflow(args: ServeWorkflowArgs): Promise<WorkflowService | undefined> {
  const config = configOf(args);
  if (config === undefined) {
    process.exitCode = 1;
    return undefined;
  }
  const logger = createLogger(args['log-level'], undefined, args['log-format']);
  let service: WorkflowService;
  try {
    service = await startWorkflowService({
      config,
      port: args.port,
      host: args.host,
      logger,
      encoding: args.encoding,
      ...(args.master === undefined ? {} : { masterUrl: args.master }),
      ...(args['state-file'] === undefined ? {} : { stateFile: args['state-file'] }),
    });
  } catch (e) {
    process.stderr.write(`clustersim: cannot start the workflow service: ${(e as Error).message}\n`);
    process.exitCode = 1;
    return undefined;
  }
  process.stdout.write(
    `clustersim: workflow service at ${service.url} (framework ${service.scheduler.frameworkId} on ${service.scheduler.masterOrigin})\n`,
  );
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping the workflow service');
    void service.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return service;
}

export interface WorkflowRunArgs {
  image: string;
  cpus: number | undefined;
  'mem-limit': string | undefined;
  disk: number | undefined;
  attribute: string[];
  env: string[];
  volume: string[];
  'network-mode': string | undefined;
  user: string | undefined;
  'force-pull': boolean;
  'container-type': string;
  'task-id': string | undefined;
  'poll-interval': number;
  'startup-timeout': number;
  url: string | undefined;
  config: string | undefined;
  '--'?: string[];
  cmd?: string[];
}

/** The options of `workflow run` that may be given again and again. */
const REPEATABLE: Record<string, Options> = {
  attribute: {
    requiresArg: true,
    type: 'string',
    array: true,
    default: [] as string[],
    describe: 'Agent attribute constraint <name>:<value> (repeatable)',
  },
  env: {
    requiresArg: true,
    type: 'string',
    array: true,
    default: [] as string[],
    coerce: checkEnv,
    describe: 'Environment variable K=V (repeatable)',
  },
  volume: {
    requiresArg: true,
    type: 'string',
    array: true,
    default: [] as string[],
    describe: 'Volume source:/container/path[:ro|rw] (repeatable)',
  },
};

function runOptions(y: Argv): Argv {
  return y
    .positional('cmd', {
      type: 'string',
      array: true,
      describe: 'The command (after --): one word runs through /bin/sh -c, several are the argument list',
    })
    .option('image', { requiresArg: true, type: 'string', demandOption: true, describe: 'Container image' })
    .option('cpus', numberFlag('cpus', { above: 0 }, { describe: "CPUs (default the service's task_cpu)" }))
    .option('mem-limit', {
      requiresArg: true,
      type: 'string',
      describe: "Memory: MiB, or a number with k, m or g (default the service's task_memory)",
    })
    .option(
      'disk',
      numberFlag('disk', { above: 0, unit: 'MiB' }, { describe: "Disk in MiB (default the service's task_disk)" }),
    )
    .options(REPEATABLE)
    .option('network-mode', {
      requiresArg: true,
      type: 'string',
      describe: 'Engine network mode: HOST, BRIDGE, NONE, USER',
    })
    .option('user', { requiresArg: true, type: 'string', describe: 'User inside the container' })
    .option('force-pull', { type: 'boolean', default: false, describe: 'Pull the image again' })
    .option('container-type', {
      requiresArg: true,
      type: 'string',
      default: 'DOCKER',
      describe: 'DOCKER (an engine container) or MESOS',
    })
    .option('task-id', {
      requiresArg: true,
      type: 'string',
      describe: 'The workflow task id (default a new workflow.run.<hex>)',
    })
    .option(
      'poll-interval',
      numberFlag('poll-interval', SECONDS, { default: 2, describe: 'Seconds between status requests' }),
    )
    .option(
      'startup-timeout',
      numberFlag('startup-timeout', SECONDS, { default: 300, describe: 'Seconds to wait for a final state' }),
    )
    .option('url', {
      requiresArg: true,
      type: 'string',
      describe: `The service's API (default the configuration's operator_api_url, else ${DEFAULT_CONFIG.operatorApiUrl})`,
    })
    .option('config', {
      requiresArg: true,
      type: 'string',
      describe: 'INI file whose [cluster] operator_api_url is the default of --url',
    })
    .example('$0 workflow run --image alpine -- "echo hello"', 'Exits 0 once the task is TASK_FINISHED')
    .epilogue(
      `Exit codes: ${Object.entries(EXIT_CODES)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}.`,
    );
}

/** Each `--env` a K=V, checked as the command line is parsed. */
function checkEnv(values: readonly string[]): string[] {
  const bad = values.find((e) => !/^[^=]+=/.test(e));
  if (bad !== undefined) throw new UsageError(`--env: ${JSON.stringify(bad)} is not K=V`);
  return [...values];
}

/** The queue request of the command's options, or why they do not make one. */
function bodyOf(args: WorkflowRunArgs): (Record<string, unknown> & { workflow_task_id: string }) | string {
  const words = args['--'] ?? args.cmd ?? [];
  if (words.length === 0) return 'name the command after --, e.g. -- "echo hello"';
  const environment = Object.fromEntries(
    args.env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );
  return {
    workflow_task_id: args['task-id'] ?? `workflow.run.${randomBytes(4).toString('hex')}`,
    container_type: args['container-type'],
    command: words.length === 1 ? words[0]! : words,
    image: args.image,
    attributes: args.attribute,
    environment,
    force_pull: args['force-pull'],
    ...(args.cpus === undefined ? {} : { cpus: args.cpus }),
    ...(args['mem-limit'] === undefined ? {} : { mem_limit: args['mem-limit'] }),
    ...(args.disk === undefined ? {} : { disk: args.disk }),
    ...(args.volume.length === 0 ? {} : { volumes: args.volume }),
    ...(args['network-mode'] === undefined ? {} : { network_mode: args['network-mode'] }),
    ...(args.user === undefined ? {} : { user: args.user }),
  };
}

function report(id: string, outcome: OperatorOutcome): void {
  if (outcome.kind === 'finished') process.stdout.write('TASK_FINISHED\n');
  else if (outcome.kind === 'failed')
    process.stderr.write(`clustersim: task ${id} ended in state ${outcome.state}: ${JSON.stringify(outcome.status)}\n`);
  else if (outcome.kind === 'timeout')
    process.stderr.write(
      `clustersim: timed out waiting for task ${id} (last state ${outcome.state ?? 'none: still queued'})\n`,
    );
  else
    process.stderr.write(
      `clustersim: task ${id}: ${outcome.kind === 'invalid-json' ? 'invalid JSON answer: ' : ''}${outcome.message}\n`,
    );
}

/** --url, else the configuration's operator_api_url, else the default; or why the configuration does not read. */
function urlOf(args: WorkflowRunArgs): { url: string } | string {
  if (args.url !== undefined) return { url: args.url };
  if (args.config === undefined) return { url: DEFAULT_CONFIG.operatorApiUrl };
  const loaded = loadWorkflowConfig(args.config);
  return loaded.ok ? { url: loaded.config.operatorApiUrl } : loaded.error;
}

export async function runWorkflowRun(args: WorkflowRunArgs): Promise<void> {
  const body = bodyOf(args);
  const target = urlOf(args);
  const refusal = typeof body === 'string' ? body : typeof target === 'string' ? target : undefined;
  if (typeof body === 'string' || typeof target === 'string') {
    process.stderr.write(`clustersim workflow run: ${refusal}\n`);
    // 2, as for any usage error; the operator's http-error code is 2 as well.
    process.exitCode = EXIT_CODES['http-error'];
    return;
  }
  const id = body.workflow_task_id;
  process.stderr.write(`clustersim: queued task ${id} at ${target.url}\n`);
  const outcome = await runOperator({
    url: target.url,
    body,
    pollIntervalMs: args['poll-interval'] * 1000,
    startupTimeoutMs: args['startup-timeout'] * 1000,
    onState: (state) => process.stderr.write(`clustersim: task ${id} ${state}\n`),
  });
  report(id, outcome);
  process.exitCode = EXIT_CODES[outcome.kind];
}

export function workflowCommands(y: Argv): Argv {
  return y
    .command(
      'run [cmd..]',
      'Run one container task through the workflow service and wait for its final state (the exit code says how it ended)',
      runOptions,
      (args) => runWorkflowRun(args as unknown as WorkflowRunArgs),
    )
    .demandCommand(1, 'Name a workflow command; see --help');
}

export function serveCommands(y: Argv): Argv {
  return y
    .command(
      'workflow',
      'The workflow container-task service: its framework on a master, its local API (/v0/queue_command, /v0/task/<id>)',
      serveWorkflowOptions,
      async (args) => {
        await runServeWorkflow(args as unknown as ServeWorkflowArgs);
      },
    )
    .demandCommand(1, 'Name a service to serve; see --help');
}
