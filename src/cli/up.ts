/** `clustersim up`: a cluster on real sockets, in real time, until a signal. */
import type { Argv } from 'yargs';
import { createLogger, LOG_LEVELS, type LogLevel } from '../runtime/logging.js';
import { DEFAULT_AGENT_RESOURCES, startCluster, StartError } from '../start.js';

export interface UpArgs {
  host: string;
  port: number;
  agents: number;
  'agent-resources': string;
  'agent-attributes': string;
  'agent-port': number;
  seed: string;
  'heartbeat-interval': number;
  'allocation-interval': number;
  'log-level': LogLevel;
}

export function upOptions(y: Argv): Argv<UpArgs> {
  return y
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address the master and agents listen on' })
    .option('port', { type: 'number', default: 5050, describe: 'Master port (0 picks a free port)' })
    .option('agents', { type: 'number', default: 3, describe: 'Number of agents' })
    .option('agent-resources', { type: 'string', default: DEFAULT_AGENT_RESOURCES, describe: 'Resources of each agent' })
    .option('agent-attributes', { type: 'string', default: '', describe: "Attributes of each agent, e.g. 'rack:r1;zone:z1'" })
    .option('agent-port', { type: 'number', default: 0, describe: 'Port of the first agent, the next ones follow (0 = ephemeral)' })
    .option('seed', { type: 'string', default: '0', describe: 'Seed of every random choice (ids, allocation order)' })
    .option('heartbeat-interval', { type: 'number', default: 15, describe: 'Seconds between HEARTBEAT events' })
    .option('allocation-interval', { type: 'number', default: 1, describe: 'Seconds between batched allocations of declined and freed resources' })
    .option('log-level', { choices: LOG_LEVELS, default: 'info' as LogLevel, describe: 'Log level (logs go to stderr)' })
    .example('$0 up', 'A master on 127.0.0.1:5050 with 3 agents')
    .example("$0 up --port 0 --agents 1 --agent-attributes 'rack:r1'", 'One agent, any free port') as unknown as Argv<UpArgs>;
}

export async function runUp(args: UpArgs): Promise<void> {
  const logger = createLogger(args['log-level']);
  let running;
  try {
    running = await startCluster({
      host: args.host,
      port: args.port,
      agents: args.agents,
      agentResources: args['agent-resources'],
      agentAttributes: args['agent-attributes'],
      agentPort: args['agent-port'],
      seed: args.seed,
      heartbeatIntervalSeconds: args['heartbeat-interval'],
      allocationIntervalSeconds: args['allocation-interval'],
      time: 'realtime',
      logger,
      // A failed core is a bug: the fatal line is logged; stop with a non-zero status.
      onFailure: (failure) => {
        process.stderr.write(`clustersim: ${failure.message}\n`);
        process.exit(70);
      },
    });
  } catch (error) {
    const message = error instanceof StartError ? error.message : `Cannot start: ${(error as Error).message}`;
    process.stderr.write(`clustersim: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`clustersim: master at ${running.masterUrl} with ${running.agents.length} agents\n`);
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    void running.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
