/**
 * Who may use the control API (`/sim/v1/`). Open while the cluster has no
 * authentication at all; once any is on (`--credentials`, and so
 * `--authenticate-http-readonly` and `--authenticate-http-readwrite`, or
 * `--authenticate-http-executors`), every control route asks for HTTP
 * Basic credentials, before anything else is looked at, as the master's
 * other endpoints do (auth.ts):
 *
 *   the reads (clock, trace, events, misuse)  realm mesos-master-readonly
 *   every other route (the changes)           realm mesos-master-readwrite
 *
 * With executor authentication alone there are no credentials to give, so
 * every control route answers 401: `--credentials` opens it.
 *
 * A change (advance, faults, runs, snapshot, restore, reset) must then be
 * allowed by the ACL action `control_simulation` (objects ANY or NONE),
 * asked about the authenticated principal, or about none (ANY) when
 * authentication is off: refused, 403 with one line and nothing changed.
 * Without `--acls`, or with `permissive` and no rule that matches, it is
 * allowed. What the reads show each reader is the routes' (wire/sim/view.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import {
  authenticate,
  principalOf,
  READONLY_REALM,
  READWRITE_REALM,
  sendUnauthorized,
  setPrincipal,
  type Credentials,
} from '../auth.js';
import { sendError } from '../errors.js';
import { routePathOf } from '../methods.js';
import { answeringHook } from '../hooks.js';

/** The control API's routes that change nothing; every other one under `/sim/v1/` is a change. */
export const SIM_READ_ROUTES: ReadonlySet<string> = new Set([
  '/sim/v1/clock',
  '/sim/v1/trace',
  '/sim/v1/events',
  '/sim/v1/misuse',
  '/sim/v1/agents',
]);

const PREFIX = '/sim/v1/';

export const CONTROL_FORBIDDEN = "Not authorized to control the simulation: the ACLs' control_simulation refuses it";

/**
 * Guards the control API's routes; `credentials` undefined while
 * authentication is off. Install before the routes.
 */
export function guardControlApi(
  app: FastifyInstance,
  driver: ClusterDriver,
  credentials: Credentials | undefined,
): void {
  const guard = (req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const url = routePathOf(req);
    if (url === undefined || !url.startsWith(PREFIX)) return undefined;
    const read = SIM_READ_ROUTES.has(url);
    if (credentials !== undefined) {
      const result = authenticate(req.headers.authorization, credentials, read ? READONLY_REALM : READWRITE_REALM);
      if (!result.ok) return sendUnauthorized(reply, result);
      setPrincipal(req, result.principal);
    }
    if (read) return undefined;
    // The ACLs are the cluster's options: asked without waiting for the cluster.
    const allowed = driver.cluster.view.authorizer.mayControlSimulation(principalOf(req));
    if (allowed) return undefined;
    // The body is left unread: close, as the other refusals before the body do.
    reply.header('connection', 'close');
    return sendError(reply, 'FORBIDDEN', CONTROL_FORBIDDEN);
  };
  app.addHook('onRequest', answeringHook(guard));
}
