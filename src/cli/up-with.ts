/**
 * `clustersim up --with <service>,…`: bundled frameworks started beside the
 * cluster, on its leading master, once it is up, and stopped before it.
 * Each prints its own ready line on stdout after the cluster's.
 */
import type { Argv } from 'yargs';
import type { Logger } from 'pino';
import { DEFAULT_API_PORT, DEFAULT_CONFIG, loadWorkflowConfig } from '../frameworks/workflow/config.js';
import { startWorkflowService } from '../frameworks/workflow/service.js';

export const WITH_SERVICES = ['workflow'] as const;

export interface WithArgs {
  with: string[];
  'workflow-config': string | undefined;
  'workflow-port': number;
}

export function withOptions(y: Argv): Argv {
  return y
    .option('with', {
      type: 'string',
      array: true,
      default: [] as string[],
      describe: `Bundled frameworks to run beside the cluster, comma-separated or repeated: ${WITH_SERVICES.join(', ')}`,
    })
    .option('workflow-config', { type: 'string', describe: 'With --with workflow: its INI file (the master is this cluster\'s whatever the file says)' })
    .option('workflow-port', { type: 'number', default: DEFAULT_API_PORT, describe: "With --with workflow: its API's port" })
    .group(['with', 'workflow-config', 'workflow-port'], 'Bundled frameworks (README.md, "Workflow container-task service"):');
}

export interface StartedServices {
  /** One line each, `<service> … at <url>`. */
  readonly lines: readonly string[];
  close(): Promise<void>;
}

/** The services named, in order; an unknown name, or one that cannot start, is the error (those started are stopped). */
export async function startWith(args: WithArgs, masterUrl: string, host: string, logger: Logger): Promise<StartedServices | string> {
  const names = args.with.flatMap((w) => w.split(',')).map((w) => w.trim()).filter((w) => w !== '');
  const unknown = names.find((n) => !(WITH_SERVICES as readonly string[]).includes(n));
  if (unknown !== undefined) return `--with: unknown service '${unknown}' (one of ${WITH_SERVICES.join(', ')})`;
  const closers: (() => Promise<void>)[] = [];
  const lines: string[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  if (names.includes('workflow')) {
    const loaded = args['workflow-config'] === undefined ? { ok: true as const, config: DEFAULT_CONFIG } : loadWorkflowConfig(args['workflow-config']);
    if (!loaded.ok) return loaded.error;
    try {
      const service = await startWorkflowService({ config: loaded.config, masterUrl, port: args['workflow-port'], host, logger: logger.child({ service: 'workflow' }) });
      closers.push(() => service.close());
      lines.push(`workflow service at ${service.url} (framework ${service.scheduler.frameworkId})`);
    } catch (e) {
      await close();
      return `cannot start the workflow service: ${(e as Error).message}`;
    }
  }
  return { lines, close };
}
