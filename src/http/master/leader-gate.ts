/**
 * Only the leading master serves: every other master of the group answers
 * each API request (scheduler, operator, read endpoints) with upstream's
 * redirect to the leader, `307` with `Location: //<leader host>:<leader
 * port><the path and query asked>` (protocol-relative), or `503 No leader
 * elected` while an election is on. `/redirect` (and `/master/redirect`)
 * answers the leader's bare address on every master, the leader included.
 * A master whose process is down answers nothing: the connection is
 * closed as soon as a request arrives on it, as a refused connection
 * would be. What is not a master's is served by all of them, down or not:
 * the simulator's control API (`/sim/v1/`), `/health` and `/version`
 * (upstream's version endpoint is a process of its own). A standby's
 * `/metrics/snapshot` (a process of its own too) is its own, not elected,
 * and so are its `/master/metrics/snapshot` and `/metrics`, each behind
 * the `get_endpoints` ACL as the leader's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MasterSeat } from '../../core/master/group.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { renderStandbyMetrics } from '../../wire/v0/metrics.js';
import { principalOf } from '../auth.js';
import { sendError } from '../errors.js';
import { sendJson } from '../v0-replies.js';
import { normalisePath } from '../routing.js';
import { isInProcess } from '../event-stream.js';
import { answeringHook } from '../hooks.js';

const EVERY_MASTER = new Set(['/health', '/version', '/master/health']);
const REDIRECT = new Set(['/redirect', '/master/redirect']);

interface Leadership {
  readonly own: MasterSeat | undefined;
  readonly leader: MasterSeat | undefined;
  readonly hostname: string;
}

/**
 * Puts the gate in front of every route of master `index`'s app; after
 * authentication, as upstream checks the principal first. `listenerPorts`:
 * the port each master's listener got, by index, where the redirect sends
 * clients (the port a master advertises may differ); the MasterInfo's
 * port without.
 */
export function gateToLeader(
  app: FastifyInstance,
  driver: ClusterDriver,
  index: number,
  listenerPorts?: readonly number[],
): void {
  const gate = (req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const path = normalisePath(req.url.split('?', 1)[0] ?? '/');
    if (path.startsWith('/sim/v1/') || EVERY_MASTER.has(path)) return undefined;
    const leadership = driver.read((view): Leadership => {
      const seats = view.masterSeats();
      const leaderIndex = view.leaderIndex();
      return {
        own: seats[index],
        leader: leaderIndex === undefined ? undefined : seats[leaderIndex],
        hostname: view.masterInfo.hostname,
      };
    });
    if (leadership.own?.state === 'down') return refuse(req, reply);
    // The leader serves everything itself, its own `/redirect` included.
    if (leadership.own?.state === 'leading') return undefined;
    const redirect = REDIRECT.has(path);
    // Below its own path the redirect endpoint answers 404 on every master (the route does).
    if (redirect && normalisePath(req.originalUrl.split('?', 1)[0] ?? '/') !== path) return undefined;
    if (path === '/metrics/snapshot' || path === '/master/metrics/snapshot') {
      const refused = driver.read((view) =>
        view.authorizer.refusal('get_endpoints', principalOf(req), '/metrics/snapshot'),
      );
      return refused === undefined
        ? sendJson(req, reply, renderStandbyMetrics(), undefined)
        : sendError(reply, 'FORBIDDEN', refused);
    }
    // Its Prometheus figures are its own too: the route shows a standby's snapshot.
    if (path === '/metrics') return undefined;
    if (leadership.leader === undefined) return sendError(reply, 'NO_LEADER');
    const base = `//${leadership.hostname}:${listenerPorts?.[leadership.leader.index] ?? leadership.leader.port}`;
    return reply
      .code(307)
      .header('location', redirect ? base : `${base}${req.originalUrl}`)
      .header('content-length', '0')
      .send();
  };
  app.addHook('onRequest', answeringHook(gate));
}

/** A master process that is down: no answer, the connection closes. */
function refuse(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  // A request of this process (http/in-process.ts) has no socket: its response goes.
  if (isInProcess(reply.raw)) reply.raw.destroy();
  else req.raw.socket?.destroy();
  return reply;
}
