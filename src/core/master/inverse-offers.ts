/**
 * Inverse offers, as upstream's master and allocator make them: an agent
 * on a DRAINING machine is asked back from every subscribed framework that
 * uses resources on it, one outstanding inverse offer per framework and
 * agent, carrying the machine's unavailability. A framework answers with
 * ACCEPT_INVERSE_OFFERS or DECLINE_INVERSE_OFFERS: the answer is kept for
 * `/maintenance/status`, the inverse offer ends, and the filters of the
 * call (`refuse_seconds`, 5 s by default) hold the next one back that
 * long. When the machine's unavailability changes, or the agent leaves,
 * its inverse offers are rescinded (RESCIND_INVERSE_OFFER) and the answers
 * forgotten.
 *
 * Inverse offers are made after every input (`afterInput`) and when a
 * refusal filter ends; a framework that disconnected or was removed loses
 * its own then. Nothing happens while no machine is scheduled.
 */
import { done, type Outcome } from '../model/errors.js';
import { wallTimeMs } from '../network/context.js';
import type { InverseOfferView } from '../model/types.js';
import type { Framework } from './framework.js';
import type { InverseOfferAnswer, InverseOfferRecord } from './maintenance-state.js';
import { removeOffer } from './offers.js';
import type { MasterOps } from './ops.js';

const filterKey = (agentId: string, frameworkId: string): string => `${agentId}\u0000${frameworkId}`;

/** An agent's unavailability changed (or it left): its offers and inverse offers are rescinded, its answers forgotten. */
export function unavailabilityChanged(m: MasterOps, agentId: string): void {
  const mt = m.maintenance;
  for (const fw of m.frameworks.values())
    for (const offer of [...fw.offers.values()])
      if (offer.agentId === agentId) removeOffer(m, offer, { rescind: true });
  for (const io of [...mt.inverseOffers.values()]) if (io.agentId === agentId) removeInverseOffer(m, io, true);
  mt.statuses.delete(agentId);
  for (const key of [...mt.filters.keys()]) if (key.startsWith(`${agentId}\u0000`)) mt.filters.delete(key);
}

/** Ends an inverse offer; a rescinded one is told to its framework. */
export function removeInverseOffer(m: MasterOps, io: InverseOfferRecord, rescind: boolean): void {
  m.maintenance.inverseOffers.delete(io.id);
  m.ctx.trace.append(rescind ? 'inverse-offer:rescind' : 'inverse-offer:remove', { inverseOfferId: io.id });
  if (rescind) m.frameworks.get(io.frameworkId)?.send({ type: 'RESCIND_INVERSE_OFFER', inverseOfferId: io.id });
}

/** The inverse offers due now: to each framework using an agent of a DRAINING machine, unless one is out or refused. */
export function makeInverseOffers(m: MasterOps): void {
  const mt = m.maintenance;
  if (!mt.active) return;
  // A framework that is no longer subscribed loses its inverse offers, as upstream's master drops them on deactivation.
  for (const io of [...mt.inverseOffers.values()])
    if (m.frameworks.get(io.frameworkId)?.state !== 'subscribed') removeInverseOffer(m, io, false);
  const now = m.ctx.loop.now();
  const outstanding = new Set<string>();
  for (const io of mt.inverseOffers.values()) outstanding.add(filterKey(io.agentId, io.frameworkId));
  const batches = new Map<Framework, InverseOfferView[]>();
  for (const record of m.agents.values()) {
    const machine = record.active ? mt.machineOfAgent(record.info) : undefined;
    if (machine?.mode !== 'DRAINING' || machine.unavailability === undefined) continue;
    for (const fw of m.frameworks.values()) {
      const key = filterKey(record.id, fw.id);
      if (fw.state !== 'subscribed' || outstanding.has(key) || (mt.filters.get(key) ?? -1) > now) continue;
      if (m.ledger.frameworkOn(fw.id, record.id).used.length === 0) continue;
      const io: InverseOfferRecord = {
        id: m.ids.offer(),
        frameworkId: fw.id,
        agentId: record.id,
        unavailability: machine.unavailability,
      };
      mt.inverseOffers.set(io.id, io);
      recordUnknown(m, io);
      m.ctx.trace.append('inverse-offer:create', { inverseOfferId: io.id, frameworkId: fw.id, agentId: record.id });
      const batch = batches.get(fw) ?? [];
      batch.push(io);
      batches.set(fw, batch);
    }
  }
  for (const [fw, inverseOffers] of batches) fw.send({ type: 'INVERSE_OFFERS', inverseOffers });
}

/**
 * ACCEPT_INVERSE_OFFERS, DECLINE_INVERSE_OFFERS: 202 whatever the ids, as
 * upstream's (an unknown or another framework's inverse offer is ignored).
 */
export function answerInverseOffers(
  m: MasterOps,
  fw: Framework,
  inverseOfferIds: readonly string[],
  answer: Exclude<InverseOfferAnswer, 'UNKNOWN'>,
  refuseMs: number,
): Outcome {
  const mt = m.maintenance;
  for (const id of inverseOfferIds) {
    const io = mt.inverseOffers.get(id);
    if (io === undefined || io.frameworkId !== fw.id) continue;
    const answers = mt.statuses.get(io.agentId) ?? new Map();
    answers.set(fw.id, { frameworkId: fw.id, status: answer, timestampMs: wallTimeMs(m.ctx) });
    mt.statuses.set(io.agentId, answers);
    const key = filterKey(io.agentId, fw.id);
    const until = m.ctx.loop.now() + refuseMs;
    mt.filters.set(key, until);
    m.ctx.loop.schedule(refuseMs, 'inverse-offer:filter-expired', () => {
      if (mt.filters.get(key) !== until) return;
      mt.filters.delete(key);
      makeInverseOffers(m);
    });
    removeInverseOffer(m, io, false);
  }
  return done;
}

/** A framework asked about an agent for the first time has answered nothing yet: UNKNOWN, as upstream's allocator records it. */
function recordUnknown(m: MasterOps, io: InverseOfferRecord): void {
  const answers = m.maintenance.statuses.get(io.agentId) ?? new Map();
  if (!answers.has(io.frameworkId))
    answers.set(io.frameworkId, { frameworkId: io.frameworkId, status: 'UNKNOWN', timestampMs: wallTimeMs(m.ctx) });
  m.maintenance.statuses.set(io.agentId, answers);
}
