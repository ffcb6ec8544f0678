/**
 * `clustersim up --with <service>,…`: bundled frameworks started beside the
 * cluster, on its leading master, once it is up, and stopped before it.
 * Each prints its own ready line on stdout after the cluster's. The
 * orchestration framework takes its configuration from the environment, as
 * `clustersim serve orchestrator` does.
 */
import type { Argv, Options } from 'yargs';
import type { Logger } from 'pino';
import { DEFAULT_API_PORT, DEFAULT_CONFIG, loadWorkflowConfig } from '../frameworks/workflow/config.js';
import { startWorkflowService } from '../frameworks/workflow/service.js';
import { startOrchestratorBeside } from './orch.js';
import { numberFlag, PORT, UsageError } from './flags.js';

export const WITH_SERVICES = ['workflow', 'orchestrator'] as const;

export interface WithArgs {
  with: string[];
  'workflow-config': string | undefined;
  'workflow-port': number;
}

/** The flags of the bundled frameworks, for `--help` and the docs (not options of the library: the command starts them). */
export function withFlags(): Record<string, Options> {
  return {
    with: {
      type: 'string',
      array: true,
      requiresArg: true,
      default: [] as string[],
      coerce: checkServices,
      describe: `Bundled frameworks to run beside the cluster, comma-separated or repeated: ${WITH_SERVICES.join(', ')}`,
    },
    'workflow-config': {
      type: 'string',
      requiresArg: true,
      describe: "With --with workflow: its INI file (the master is this cluster's whatever the file says)",
    },
    'workflow-port': numberFlag('workflow-port', PORT, {
      default: DEFAULT_API_PORT,
      describe: "With --with workflow: its API's port",
    }),
  };
}

export function withOptions(y: Argv): Argv {
  const flags = withFlags();
  return y.options(flags).group(Object.keys(flags), 'Bundled frameworks (docs/frameworks.md):');
}

/** The names `--with` gives, each known; checked as the command line is parsed. */
function checkServices(values: readonly string[]): string[] {
  const unknown = servicesOf(values).find((n) => !(WITH_SERVICES as readonly string[]).includes(n));
  if (unknown !== undefined)
    throw new UsageError(`--with: unknown service ${JSON.stringify(unknown)} (one of ${WITH_SERVICES.join(', ')})`);
  return [...values];
}

const servicesOf = (values: readonly string[]): string[] =>
  values
    .flatMap((w) => w.split(','))
    .map((w) => w.trim())
    .filter((w) => w !== '');

export interface StartedServices {
  /** One line each, `<service> … at <url>`. */
  readonly lines: readonly string[];
  close(): Promise<void>;
}

/** A service started beside the cluster: its ready line, and how to stop it. */
interface Started {
  readonly line: string;
  close(): Promise<void>;
}

/** The services named, in order; an unknown name, or one that cannot start, is the error (those started are stopped). */
export async function startWith(
  args: WithArgs,
  masterUrl: string,
  host: string,
  logger: Logger,
): Promise<StartedServices | string> {
  const names = servicesOf(args.with);
  const unknown = names.find((n) => !(WITH_SERVICES as readonly string[]).includes(n));
  if (unknown !== undefined) return `--with: unknown service '${unknown}' (one of ${WITH_SERVICES.join(', ')})`;
  const started: Started[] = [];
  const close = async () => {
    for (const s of started.reverse()) await s.close();
  };
  for (const name of WITH_SERVICES.filter((n) => names.includes(n))) {
    const service = await (name === 'workflow'
      ? startWorkflowBeside(args, masterUrl, host, logger)
      : startOrchestratorBeside(masterUrl, host)
    ).catch(
      (e: Error) =>
        `cannot start the ${name === 'workflow' ? 'workflow service' : 'orchestration framework'}: ${e.message}`,
    );
    if (typeof service === 'string') {
      await close();
      return service;
    }
    started.push(service);
  }
  return { lines: started.map((s) => s.line), close };
}

async function startWorkflowBeside(
  args: WithArgs,
  masterUrl: string,
  host: string,
  logger: Logger,
): Promise<Started | string> {
  const loaded =
    args['workflow-config'] === undefined
      ? { ok: true as const, config: DEFAULT_CONFIG }
      : loadWorkflowConfig(args['workflow-config']);
  if (!loaded.ok) return loaded.error;
  const service = await startWorkflowService({
    config: loaded.config,
    masterUrl,
    port: args['workflow-port'],
    host,
    logger: logger.child({ service: 'workflow' }),
  });
  return {
    line: `workflow service at ${service.url} (framework ${service.scheduler.frameworkId})`,
    close: () => service.close(),
  };
}
