/**
 * `clustersim serve orchestrator`: the orchestration framework, configured
 * by its environment, against the master it names, until a signal; and
 * `clustersim orch ...`: its command-line plugin (list, kubeconfig, scale,
 * status, version) against the master's frameworks and their APIs.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { ConfigError, loadConfig, type OrchConfig } from '../frameworks/orchestrator/config.js';
import { startOrchestrator } from '../frameworks/orchestrator/service.js';
import {
  callFramework,
  listText,
  loadPluginConfig,
  PluginError,
  scalePath,
  type PluginConfig,
} from '../frameworks/orchestrator/plugin.js';
import { UsageError } from './flags.js';

/** `serve orchestrator`: options beyond the environment. */
export function serveOrchestratorOptions(y: Argv): Argv {
  return y
    .option('listen', {
      requiresArg: true,
      type: 'string',
      default: '0.0.0.0',
      describe: 'The address the API listens on (its port is FRAMEWORK_PORT)',
    })
    .epilogue(
      'Configured by the environment: FRAMEWORK_NAME (m3s), FRAMEWORK_PORT (10000), CLUSTER_MASTER (127.0.0.1:5050), ' +
        'ORCH_AGENT_COUNT (1), ORCH_*_CPU/MEM/CONSTRAINT, PORTRANGE_FROM/TO, STORE_SERVER (Redis; embedded store without), ' +
        'AUTH_USERNAME/AUTH_PASSWORD, HEARTBEAT_INTERVAL (15s), ... (docs/frameworks.md, "Orchestration framework").',
    );
}

export async function runServeOrchestrator(args: { listen: string }): Promise<void> {
  let config: OrchConfig;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`clustersim: ${e.message}\n`);
    process.exitCode = 2;
    return;
  }
  const service = await startOrchestrator(config, { listen: args.listen }).catch((e: Error) => e);
  if (service instanceof Error) {
    process.stderr.write(`clustersim: ${service.message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`orchestration framework ${config.name} API on ${service.url}\n`);
  const stop = (): void => void service.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

interface PluginArgs {
  config: string | undefined;
  master: string | undefined;
}

const DEFAULT_CONFIG = path.join(os.homedir(), '.clustersim', 'config.ini');

function pluginConfig(args: PluginArgs): PluginConfig {
  return loadPluginConfig(
    args.config ?? process.env.CLUSTERSIM_CONFIG ?? DEFAULT_CONFIG,
    args.config !== undefined,
    args.master,
  );
}

/** Runs a plugin command: its output on stdout, a failure as one line and exit code 1. */
function plugin<A>(act: (config: PluginConfig, args: A) => Promise<string>): (args: any) => Promise<void> {
  return async (args: A) => {
    try {
      const text = await act(pluginConfig(args as PluginArgs), args);
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    } catch (e) {
      if (!(e instanceof PluginError)) throw e;
      process.stderr.write(`clustersim orch: ${e.message}\n`);
      process.exitCode = 1;
    }
  };
}

const id = (y: Argv<any>): Argv<any> =>
  y.positional('id', { type: 'string', demandOption: true, describe: "The framework's id (see orch list)" });

function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function orchCommands(yargs: Argv): Argv {
  return yargs
    .option('config', {
      requiresArg: true,
      type: 'string',
      describe: `INI file with [framework] principal and secret, [master] address (default $CLUSTERSIM_CONFIG or ${DEFAULT_CONFIG})`,
    })
    .option('master', {
      requiresArg: true,
      type: 'string',
      describe: `The master's URL or host:port (default [master] address, else ${'127.0.0.1:5050'})`,
    })
    .command(
      'list',
      'List the orchestration frameworks of the master: ID, Active, WebUI, Name',
      (y) =>
        y.option('name', {
          requiresArg: true,
          type: 'string',
          default: 'm3s',
          describe: 'Show frameworks whose name contains this',
        }),
      plugin((c, a: { name: string }) => listText(c, a.name)),
    )
    .command(
      'kubeconfig <id>',
      "Print the orchestrated cluster's client configuration file",
      id,
      plugin((c, a: { id: string }) => callFramework(c, a.id, 'server/config')),
    )
    .command(
      'scale <id> <count>',
      'Set the number of agents (default), managers (servers) or datastores',
      scaleOptions,
      plugin((c, a: { id: string; count: string; manager?: boolean; datastore?: boolean }) =>
        callFramework(
          c,
          a.id,
          scalePath(a.manager === true ? 'manager' : a.datastore === true ? 'datastore' : 'agent', a.count),
        ),
      ),
    )
    .command(
      'status <id>',
      "Print the status of the framework's parts (--m3s, the default) or of the orchestrated cluster's nodes (--kubernetes)",
      (y) =>
        id(y)
          .option('m3s', { type: 'boolean', describe: 'The framework (default)' })
          .option('kubernetes', { type: 'boolean', describe: 'The orchestrated cluster' })
          .conflicts('m3s', 'kubernetes'),
      plugin((c, a: { id: string; kubernetes?: boolean }) =>
        callFramework(c, a.id, a.kubernetes === true ? 'status/k8s' : 'status/m3s'),
      ),
    )
    .command(
      'version',
      "Print the plugin's version",
      (y) => y,
      plugin(async () => `clustersim orch ${packageVersion()}`),
    )
    .demandCommand(1, 'Name an orch command: list, kubeconfig, scale, status or version');
}

/** `orch scale <id> <count>`: the count, and which part it scales. */
function scaleOptions(y: Argv): Argv {
  return id(y)
    .positional('count', {
      type: 'string',
      demandOption: true,
      describe: 'The number of running instances',
      coerce: (count: string) => {
        if (!/^[0-9]+$/.test(count))
          throw new UsageError(`<count>: ${JSON.stringify(count)} is not a whole number of at least 0`);
        return count;
      },
    })
    .option('agent', { type: 'boolean', describe: 'Scale the agents (the default)' })
    .option('manager', { type: 'boolean', describe: 'Scale the managers (servers)' })
    .option('datastore', { type: 'boolean', describe: 'Scale the datastores' })
    .conflicts('agent', ['manager', 'datastore'])
    .conflicts('manager', 'datastore');
}

/** Adds `orchestrator` to the subcommands of `serve`. */
export function serveOrchestrator(yargs: Argv): Argv {
  return yargs.command(
    'orchestrator',
    'Run the orchestration framework against a master (configured by its environment)',
    serveOrchestratorOptions,
    (a) => runServeOrchestrator(a as unknown as { listen: string }),
  );
}

/**
 * For `clustersim up --with orchestrator`: the framework configured by the
 * environment against this cluster's master, its API on `host` (and
 * `webui_url` naming it unless FRAMEWORK_HOSTNAME says otherwise).
 */
export async function startOrchestratorBeside(
  masterUrl: string,
  host: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ readonly line: string; close(): Promise<void> }> {
  const config = loadConfig({ FRAMEWORK_HOSTNAME: host, ...env, CLUSTER_MASTER: masterUrl });
  const service = await startOrchestrator(config, { listen: host });
  return {
    line: `orchestration framework ${config.name} at ${service.url} (framework ${service.orchestrator.frameworkId})`,
    close: () => service.close(),
  };
}
