/**
 * `/health` (and `/master/health`): upstream's master answers `200` with an
 * empty body, and so does this one, unless the request names JSON itself
 * (`Accept: application/json`; a wildcard such as curl's default keeps the
 * empty answer): then the body says what a health check or a person wants
 * to know. `healthy` is whether this master's process runs (a crashed
 * master of a group still answers here, as every master serves `/health`;
 * its `healthy` is false); `leader` is the leading master's advertised
 * address, null during an election.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterView } from '../../core/view.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { decodeQuery, toV0Json } from '../../wire/v0/index.js';
import { sendError } from '../errors.js';
import { JSON_TYPE, namesType } from '../negotiate.js';

export interface HealthBody {
  readonly healthy: boolean;
  readonly master: { readonly index: number; readonly state: string };
  readonly leader: string | null;
  readonly agents: { readonly active: number; readonly inactive: number; readonly unreachable: number };
  readonly frameworks: { readonly active: number; readonly inactive: number };
}

export function healthRoute(driver: ClusterDriver, masterIndex: number) {
  return (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const query = decodeQuery(req.url);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    if (!namesType(req.headers.accept, JSON_TYPE)) return reply.code(200).header('content-length', '0').send();
    const body = driver.read((view) => healthOf(view, masterIndex));
    return reply
      .code(200)
      .header('content-type', JSON_TYPE)
      .send(Buffer.from(toV0Json(body)));
  };
}

function healthOf(view: ClusterView, masterIndex: number): HealthBody {
  const seats = view.masterSeats();
  const state = seats[masterIndex]?.state ?? 'leading';
  const leaderIndex = view.leaderIndex();
  const leader = leaderIndex === undefined ? undefined : seats[leaderIndex];
  const leading = state === 'leading';
  const agents = leading ? [...view.agents()] : [];
  const frameworks = leading ? [...view.frameworks()] : [];
  const activeAgents = agents.filter((a) => a.active).length;
  const activeFrameworks = frameworks.filter((f) => f.state === 'subscribed').length;
  return {
    healthy: state !== 'down',
    master: { index: masterIndex, state },
    leader: leader === undefined ? null : `${view.masterInfo.hostname}:${leader.port}`,
    agents: {
      active: activeAgents,
      inactive: agents.length - activeAgents,
      unreachable: leading ? view.unreachableAgentCount() : 0,
    },
    frameworks: { active: activeFrameworks, inactive: frameworks.length - activeFrameworks },
  };
}
