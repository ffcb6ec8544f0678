/**
 * The orchestration framework as one service: its store, its API listening
 * on `FRAMEWORK_PORT`, and the scheduler subscribed to the master, with
 * `webui_url` the API's `http://host:port`.
 */
import type { AddressInfo } from 'node:net';
import { createApiServer, type ApiTarget } from './api.js';
import type { OrchConfig } from './config.js';
import { Orchestrator, type Log, type OrchestratorOptions } from './framework.js';
import { checkKey, makeAuthority } from './kubeconfig.js';
import { openStore, type KeyValueStore } from './store.js';

export interface OrchestratorService {
  /** The API's base URL (`webui_url`). */
  readonly url: string;
  readonly orchestrator: Orchestrator;
  readonly store: KeyValueStore;
  /** Stops the process's work as a crash would (the master keeps the framework for failover); closes the store unless given. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** The address the API listens on (default all). */
  readonly listen?: string;
  /** A store to use instead of the configuration's (an embedded one kept across restarts in one process). */
  readonly store?: KeyValueStore;
  readonly log?: Log;
  /** The `webui_url` the master is given (default the API's URL): the advertised address when the API listens on another. */
  readonly webuiUrl?: string;
  /** Its pace and task ids (a scenario run conducts it). */
  readonly framework?: OrchestratorOptions;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A log to standard error at the configuration's level. */
export function stderrLog(config: OrchConfig): Log {
  const floor = LEVELS.indexOf(config.logLevel);
  return (level, line) => {
    if (LEVELS.indexOf(level) >= floor)
      process.stderr.write(`${new Date().toISOString()} ${level} ${config.name}: ${line}\n`);
  };
}

/** The CA of the orchestrated cluster: the configured one, or the one in the store, or a new one kept there. */
async function authorityOf(config: OrchConfig, store: KeyValueStore): Promise<string> {
  if (config.sslCrtBase64 !== undefined) {
    if (config.sslKeyBase64 !== undefined) checkKey(Buffer.from(config.sslKeyBase64, 'base64').toString());
    return Buffer.from(config.sslCrtBase64, 'base64').toString();
  }
  const key = `${config.name}:ca`;
  const stored = await store.get(key);
  if (stored !== undefined) return stored;
  const made = makeAuthority(`${config.name}-ca`, new Date()).cert;
  await store.set(key, made);
  return made;
}

export async function startOrchestrator(
  config: OrchConfig,
  options: ServiceOptions = {},
): Promise<OrchestratorService> {
  const log = options.log ?? stderrLog(config);
  const store = options.store ?? (await openStore(config.storeServer, config.storePassword));
  const closeStore = options.store === undefined ? () => store.close() : async () => {};
  let target: ApiTarget | undefined;
  const server = createApiServer(() => target!);
  try {
    const authority = await authorityOf(config, store);
    target = { config, orchestrator: undefined, authority };
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, options.listen ?? '0.0.0.0', () => resolve());
    });
    const url = `http://${config.hostname}:${(server.address() as AddressInfo).port}`;
    const orchestrator = await Orchestrator.start(config, store, options.webuiUrl ?? url, log, options.framework);
    target = { ...target, orchestrator };
    log('info', `API on ${url}`);
    const close = async (): Promise<void> => {
      await orchestrator.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeStore();
    };
    return { url, orchestrator, store, close };
  } catch (e) {
    server.close();
    await closeStore();
    throw e;
  }
}
