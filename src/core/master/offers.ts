/**
 * The master's offers, and the one place they change: made from the
 * allocator's decisions (and timed out after `--offer_timeout` when one is
 * set), shown to their framework, and ended: rescinded or withdrawn, their
 * resources going back to the allocator (with a refuse filter for a
 * decline), or used by an ACCEPT. Each change is booked in the ledger and
 * told to the misuse log.
 */
import type { OfferDecision } from '../allocator/allocator.js';
import { allocate as withAllocationRole } from '../model/resources.js';
import type { Offer } from '../model/records.js';
import type { OfferView } from '../model/types.js';
import type { Framework } from './framework.js';
import type { MasterOps } from './ops.js';

/** The allocator's decisions become offers, sent to each framework in one OFFERS event. */
export function makeOffers(m: MasterOps, decisions: readonly OfferDecision[]): void {
  const batches = new Map<Framework, OfferView[]>();
  for (const d of decisions) {
    const fw = m.frameworks.get(d.frameworkId);
    if (fw === undefined) throw new Error(`allocator offered to unknown framework '${d.frameworkId}'`);
    const offer: Offer = {
      id: m.ids.offer(),
      frameworkId: fw.id,
      agentId: d.agentId,
      role: d.role,
      resources: withAllocationRole(d.resources, d.role),
    };
    fw.offers.set(offer.id, offer);
    m.misuse.offerMade(offer);
    m.ledger.hold('offered', offer, offer.resources);
    if (m.options.offerTimeoutMs !== undefined) {
      offer.timer = m.ctx.loop.schedule(m.options.offerTimeoutMs, 'offer:timeout', () =>
        removeOffer(m, offer, { rescind: true }),
      );
    }
    m.ctx.trace.append('offer:create', { offerId: offer.id, frameworkId: fw.id, agentId: d.agentId, role: d.role });
    const batch = batches.get(fw) ?? [];
    batch.push(offerView(m, fw, offer));
    batches.set(fw, batch);
  }
  for (const [fw, offers] of batches) fw.send({ type: 'OFFERS', offers });
}

/** What the framework sees of an offer. */
export function offerView(m: MasterOps, fw: Framework, offer: Offer): OfferView {
  const { info } = m.agents.get(offer.agentId)!;
  const multiRole = fw.has('MULTI_ROLE');
  // One pass, no copies: a framework may run thousands of executors, and every offer looks.
  const machine = m.maintenance.machineOfAgent(info);
  const executorIds: string[] = [];
  for (const e of fw.executors.values()) if (e.agentId === offer.agentId) executorIds.push(e.executorId);
  return {
    id: offer.id,
    frameworkId: fw.id,
    agentId: offer.agentId,
    hostname: info.hostname,
    ...(multiRole ? { allocationRole: offer.role } : {}),
    resources: multiRole ? offer.resources : withAllocationRole(offer.resources, undefined),
    reservationRefinement: fw.has('RESERVATION_REFINEMENT'),
    attributes: info.attributes,
    executorIds,
    url: { scheme: 'http', hostname: info.hostname, ip: info.ip, port: info.port, path: '/slave(1)' },
    ...(machine?.unavailability === undefined ? {} : { unavailability: machine.unavailability }),
  };
}

/** Takes an offer away; its resources go back to the allocator. */
export function removeOffer(
  m: MasterOps,
  offer: Offer,
  how: { readonly rescind: boolean; readonly refuseMs?: number },
): void {
  const fw = m.frameworks.get(offer.frameworkId);
  dropOffer(m, offer);
  m.misuse.offerEnded(offer, how.rescind ? 'rescinded' : 'withdrawn');
  m.allocator.recoverResources(offer.frameworkId, offer.agentId, offer.resources, how.refuseMs ?? 0);
  m.ctx.trace.append(how.rescind ? 'offer:rescind' : 'offer:remove', { offerId: offer.id });
  if (how.rescind) fw?.send({ type: 'RESCIND', offerId: offer.id });
}

/** Takes an offer out of the framework's hands for an ACCEPT; the caller reuses its resources. */
export function useOffer(m: MasterOps, offer: Offer): void {
  dropOffer(m, offer);
  m.misuse.offerEnded(offer, 'accepted');
  m.ctx.trace.append('offer:use', { offerId: offer.id });
}

function dropOffer(m: MasterOps, offer: Offer): void {
  m.ctx.loop.cancel(offer.timer);
  m.frameworks.get(offer.frameworkId)?.offers.delete(offer.id);
  m.ledger.release('offered', offer, offer.resources);
}
