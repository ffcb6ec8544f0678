/**
 * The masters' listeners: one app and one listener per master of the
 * group, on consecutive ports from the first (each a free one with port
 * 0). Every app serves the whole API, but only the leader's answers; the
 * others redirect to it (http/master/leader-gate.ts), so that the master elected
 * after a failover serves at once from its own port.
 */
import type { FastifyInstance } from 'fastify';
import { buildMasterApp, type MasterAppOptions } from '../http/master/app.js';
import { controlApiPart, type AddAgentHook } from '../http/sim/part.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { SimControl } from '../runtime/sim-control.js';
import { listen } from './agents.js';

/** The masters' apps' options, and the control API's that every app mounts. */
export type MasterListenOptions = Omit<MasterAppOptions, 'masterIndex' | 'masterPorts' | 'parts'> & {
  readonly driver: ClusterDriver;
  /** The control API's runs and rewinds (one of its own per app without). */
  readonly simControl?: SimControl;
  /** The control API asks for credentials even without `credentials` (http/sim/part.ts). */
  readonly authenticateControlApi?: boolean;
  /** How the control API's `add_agent` goes in (added-agents.ts places the agent). */
  readonly addAgent?: AddAgentHook;
};

export async function listenMasters(
  count: number,
  host: string,
  firstPort: number,
  app: MasterListenOptions,
  servers: FastifyInstance[],
  /** The port the first master advertises, the next ones following (`advertisePorts`); else their listeners'. */
  advertiseFirstPort?: number,
): Promise<string[]> {
  const { simControl, authenticateControlApi, addAgent, ...common } = app;
  const control = controlApiPart({
    driver: app.driver,
    ...(addAgent === undefined ? {} : { addAgent }),
    ...(simControl === undefined ? {} : { control: simControl }),
    ...(app.credentials === undefined ? {} : { credentials: app.credentials }),
    authenticate: authenticateControlApi === true,
  });
  const urls: string[] = [];
  // Filled as the listeners are bound; every app's redirects read it.
  const ports: number[] = [];
  for (let index = 0; index < count; index++) {
    const masterApp = buildMasterApp({ ...common, parts: [control], masterIndex: index, masterPorts: ports });
    servers.push(masterApp);
    const label = count === 1 ? 'the master' : `master ${index + 1} of ${count}`;
    const port = await listen(masterApp, host, firstPort === 0 ? 0 : firstPort + index, { label, option: 'port' });
    ports.push(port);
    // A port of 0 is known only now.
    app.driver.input((c) =>
      c.bindMasterPort(advertiseFirstPort === undefined ? port : advertiseFirstPort + index, index),
    );
    urls.push(`http://${host}:${port}`);
  }
  return urls;
}
