/**
 * The control API as a part of the master's app (http/app.ts `AppPart`):
 * its guard among the request hooks, its routes and its event stream with
 * the app's own. The composition root mounts it; the master's server does
 * not know it.
 */
import type { ClusterDriver } from '../../runtime/driver.js';
import type { SimControl } from '../../runtime/sim-control.js';
import type { AppPart } from '../app.js';
import type { Credentials } from '../auth.js';
import { guardControlApi } from './auth.js';
import { registerSimEvents } from './events.js';
import { registerSimRoutes, type AddAgentHook } from './routes.js';

export type { AddAgentHook } from './routes.js';

export interface ControlApiOptions {
  readonly driver: ClusterDriver;
  /** The control API's runs and rewinds (each app one of its own over `driver` without). */
  readonly control?: SimControl;
  /** `--credentials`: then the control API always asks for them. */
  readonly credentials?: Credentials;
  /**
   * HTTP Basic on the control API without `credentials` (an authentication
   * that has none, `--authenticate-http-executors`): then nobody can use it.
   */
  readonly authenticate?: boolean;
  /**
   * Injects an `add_agent` fault where the composition root places the
   * agent itself (an ephemeral port where the agents took ephemeral ones);
   * without, the fault goes in as the others do.
   */
  readonly addAgent?: AddAgentHook;
}

export function controlApiPart(options: ControlApiOptions): AppPart {
  const credentials = options.credentials ?? (options.authenticate === true ? new Map<string, string>() : undefined);
  return {
    guard: (app) => guardControlApi(app, options.driver, credentials),
    routes: (app) => {
      registerSimRoutes(app, options.driver, options.control, options.addAgent);
      registerSimEvents(app, options.driver);
    },
  };
}
