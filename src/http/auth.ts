/**
 * HTTP Basic authentication of the master's APIs (`--credentials`), as
 * upstream's basic authenticator does it:
 *
 *   no `Authorization` header                      401
 *   not exactly `Basic <token>` (one space)        401
 *   token not base64                               401
 *   decoded not exactly `principal:secret`         401 (so a secret holding ':' never authenticates)
 *   unknown principal, or another secret           401
 *   otherwise                                      the principal
 *
 * A 401 carries `WWW-Authenticate: Basic realm="<realm>"`, the realm being
 * upstream's for the endpoint, and upstream's default body. Authentication
 * comes before every other check of the request, the method included, and
 * its refusal closes the connection: the body is not read, and it may have
 * been a SUBSCRIBE waiting for its stream. Read endpoints stay open, as
 * upstream's are without `--authenticate_http_readonly`; with it
 * (`--authenticate-http-readonly`), those upstream puts in its read-only
 * realm ask for credentials too (read-routes.ts lists them).
 *
 * The principal reaches the core with the input (`cluster.subscribe(...,
 * principal)`), which asks the ACLs; no decision is made here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { httpError, send, type HttpError } from './errors.js';
import { routePathOf } from './methods.js';
import { answeringHook } from './hooks.js';

/** Secrets by principal. */
export type Credentials = ReadonlyMap<string, string>;

/** Upstream's realm of the scheduler API (`DEFAULT_HTTP_FRAMEWORK_AUTHENTICATION_REALM`). */
export const SCHEDULER_REALM = 'mesos-master-scheduler';
/** Upstream's realm of the master's read-write endpoints, the operator API among them. */
export const READWRITE_REALM = 'mesos-master-readwrite';
/** Upstream's realm of the master's read-only endpoints (`/state`, `/flags`, ...) and of `/metrics/snapshot`. */
export const READONLY_REALM = 'mesos-master-readonly';

/** Upstream's realm of an agent's read-write endpoints, its operator API among them. */
export const AGENT_READWRITE_REALM = 'mesos-agent-readwrite';

/** An agent's routes that require authentication with `--authenticate-http-readwrite`. */
export const AGENT_READWRITE_ROUTES: ReadonlyMap<string, string> = new Map([
  ['/api/v1', AGENT_READWRITE_REALM],
  ['/slave(1)/api/v1', AGENT_READWRITE_REALM],
]);

/** Upstream's realm of an agent's read-only endpoints, its files API among them. */
export const AGENT_READONLY_REALM = 'mesos-agent-readonly';

/** The files API's endpoints (files.ts), in the read-only realm of the master and of each agent. */
export const FILES_PATHS = ['/files/browse', '/files/read', '/files/download', '/files/debug'] as const;

/** With `--authenticate-http-readonly`: an agent's files API. */
export const AGENT_READONLY_ROUTES: ReadonlyMap<string, string> = new Map(
  FILES_PATHS.map((url) => [url, AGENT_READONLY_REALM]),
);

/** The routes that require authentication, by their URL, with their realm. */
export const AUTHENTICATED_ROUTES: ReadonlyMap<string, string> = new Map([
  ['/api/v1/scheduler', SCHEDULER_REALM],
  ['/master/api/v1/scheduler', SCHEDULER_REALM],
  ['/api/v1', READWRITE_REALM],
  ['/master/api/v1', READWRITE_REALM],
]);

export type Authentication =
  | { readonly ok: true; readonly principal: string }
  | { readonly ok: false; readonly error: HttpError; readonly challenge: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The principal an `Authorization` header proves, or the 401 to answer with. */
export function authenticate(
  authorization: string | undefined,
  credentials: Credentials,
  realm: string,
): Authentication {
  const refused: Authentication = { ok: false, error: httpError('UNAUTHORIZED'), challenge: `Basic realm="${realm}"` };
  if (authorization === undefined) return refused;
  const parts = authorization.split(' ');
  if (parts.length !== 2 || parts[0] !== 'Basic' || !BASE64.test(parts[1]!)) return refused;
  const pair = Buffer.from(parts[1]!, 'base64').toString('utf8').split(':');
  if (pair.length !== 2) return refused;
  const [principal, secret] = pair as [string, string];
  return credentials.get(principal) === secret ? { ok: true, principal } : refused;
}

export function sendUnauthorized(reply: FastifyReply, refusal: Extract<Authentication, { ok: false }>): FastifyReply {
  return send(reply.header('www-authenticate', refusal.challenge).header('connection', 'close'), refusal.error);
}

const principals = new WeakMap<FastifyRequest, string>();

/** The principal the request authenticated as; undefined when authentication is off (or the route is open). */
export function principalOf(req: FastifyRequest): string | undefined {
  return principals.get(req);
}

/** Notes the principal a request authenticated as (for hooks of their own, as the control API's). */
export function setPrincipal(req: FastifyRequest, principal: string): void {
  principals.set(req, principal);
}

/**
 * Authenticates every request to the routes of `routes` (by URL), before
 * any route hook or handler runs; other paths, unknown ones included, are
 * left alone. Install before the routes.
 */
export function requireAuthentication(
  app: FastifyInstance,
  credentials: Credentials,
  routes = AUTHENTICATED_ROUTES,
): void {
  app.addHook(
    'onRequest',
    answeringHook((req, reply) => {
      const realm = routes.get(routePathOf(req) ?? '');
      if (realm === undefined) return undefined;
      const result = authenticate(req.headers.authorization, credentials, realm);
      if (!result.ok) return sendUnauthorized(reply, result);
      setPrincipal(req, result.principal);
      return undefined;
    }),
  );
}
