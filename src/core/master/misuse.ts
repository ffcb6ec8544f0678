/**
 * The protocol-misuse log: what a real cluster tolerates but a framework
 * should not do, decided from what the master sees, as it happens. The
 * master calls it from a few points (a subscription, a call that passed
 * the stream checks, a refused stream id, an event put on a stream, an
 * offer made or ended, a framework gone); it answers nothing and changes
 * nothing the cluster does. The report (`misuse-report.ts`) is read
 * through the view.
 *
 * Each kind and when it counts (cluster time):
 *
 *   unacknowledged_update     an update with a uuid reaches the framework again (the agent's
 *                             retry) 30 s or more after its first delivery, never acknowledged
 *                             in between: two retries at upstream's 10 s doubling interval.
 *                             Counted once per update, when that retry arrives; the master sees
 *                             nothing of an update whose retries no longer reach the framework
 *   acknowledge_without_uuid  an ACKNOWLEDGE the HTTP layer refused for its uuid (missing or not
 *                             16 bytes), as an update without one would need; upstream answers
 *                             400 and so does the cluster
 *   acknowledge_unknown_update an ACKNOWLEDGE whose uuid is neither the update waiting for the
 *                             task nor one of the framework's last 64 acknowledged uuids (so
 *                             acknowledging a retry twice is no misuse)
 *   accept_invalid_offer      an ACCEPT naming an offer no longer valid: rescinded, declined,
 *                             accepted before, withdrawn (failover, agent lost) or never made
 *   decline_loop              5 declines of one agent's offers within 60 s, each with a refuse
 *                             filter under 10 s (the 5 s default included); DECLINE and an
 *                             ACCEPT that launches nothing (no operations, or LAUNCHes of no
 *                             task) both decline. Counted at the 5th, then the window starts
 *                             again
 *   no_reconcile_after_resubscribe  a SUBSCRIBE with a framework id (after a lost connection, a
 *                             failover of the framework or of the master) and no RECONCILE within
 *                             60 s while the framework has tasks not ended. Counted at the
 *                             60 s mark, once the master knows (a late RECONCILE, a new
 *                             subscription, or a report)
 *   stale_stream_id           a call refused for its Mesos-Stream-Id (missing, or not the
 *                             framework's current stream)
 *   offer_held                an offer outstanding more than 60 s without accept or decline;
 *                             counted at the 60 s mark, once it ends or in a report
 *
 * A framework whose stream falls silent (a stall, a network cut) and does
 * not re-subscribe is not a kind: a real master sees nothing of it. The
 * scheduler API has no answer to a heartbeat, and the master only knows it
 * wrote one to the connection; whether the framework noticed the silence
 * shows only in the framework itself.
 *
 * Memory is bounded: the tally keeps counts and a few examples; the live
 * state (updates waiting per task, the last acknowledged uuids, decline
 * times per agent, outstanding offers, the last ended offers) is dropped
 * as it is answered, capped, or forgotten with its framework.
 */
import type { SimContext } from '../network/context.js';
import { RETRY_MIN_MS } from '../model/messages.js';
import { isTerminal } from '../model/task-state.js';
import type { Operation, SchedulerCall, SchedulerEvent } from '../model/types.js';
import type { Framework } from './framework.js';
import type { Offer } from '../model/records.js';
import { formatSeconds, MisuseTally, type Described, type MisuseKind, type MisuseReport } from './misuse-report.js';

/** First delivery plus the agent's retries 10 s and 20 s later. */
export const UNACKNOWLEDGED_AFTER_MS = 3 * RETRY_MIN_MS;
export const RECONCILE_WITHIN_MS = 60_000;
export const OFFER_HELD_MS = 60_000;
export const DECLINE_LOOP_COUNT = 5;
export const DECLINE_LOOP_WINDOW_MS = 60_000;
/** Declines with a refuse filter under this count towards a loop. */
export const DECLINE_LOOP_REFUSE_MS = 10_000;
/** Acknowledged uuids remembered per framework, so that a repeated acknowledgement is no misuse. */
const RECENT_ACKS = 64;
/** Ended offers remembered (to say how an offer accepted too late ended). */
const ENDED_OFFERS = 1024;
/** Frameworks with a tally kept; past it, the oldest removed ones are forgotten. */
const MAX_FRAMEWORKS = 1000;

interface SentUpdate {
  readonly uuid: string;
  readonly agentId: string | undefined;
  readonly state: string;
  readonly firstMs: number;
  reported: boolean;
}

interface HeldOffer {
  readonly frameworkId: string;
  readonly agentId: string;
  readonly createdMs: number;
}

type OfferEnd = 'rescinded' | 'accepted' | 'declined' | 'withdrawn';

type Call<T extends SchedulerCall['type']> = Extract<SchedulerCall, { type: T }>;

/** What a report needs of the master's frameworks. */
export type FrameworkLookup = (frameworkId: string) => Pick<Framework, 'info' | 'tasks'> | undefined;

export class MisuseLog {
  readonly #tally = new MisuseTally();
  /** Per framework, per task: the update with a uuid the framework has not acknowledged. */
  readonly #updates = new Map<string, Map<string, SentUpdate>>();
  readonly #recentAcks = new Map<string, string[]>();
  /** Outstanding offers, oldest first. */
  readonly #offers = new Map<string, HeldOffer>();
  readonly #ended = new Map<string, { readonly how: OfferEnd; readonly atMs: number }>();
  /** Per framework, per agent: times of recent short declines. */
  readonly #declines = new Map<string, Map<string, number[]>>();
  /** Frameworks that re-subscribed and have not reconciled: when. */
  readonly #reconcile = new Map<string, number>();
  readonly #removed = new Set<string>();

  constructor(private readonly ctx: SimContext) {}

  // ---- hooks of the master ----

  /** A SUBSCRIBE succeeded; `withId`: it named a framework id (a re-subscription). */
  subscribed(fw: Framework, withId: boolean): void {
    this.#closeWatch(fw, 'subscribed again');
    if (withId) this.#reconcile.set(fw.id, this.#now());
  }

  /** The framework's connection broke: a re-subscription restarts the watch for RECONCILE. */
  disconnected(fw: Framework): void {
    this.#closeWatch(fw, 'its connection broke');
  }

  /** An event reached the framework's stream. */
  sent(frameworkId: string, event: SchedulerEvent): void {
    if (event.type !== 'UPDATE' || event.status.uuid === undefined) return;
    const { taskId, uuid, agentId, state } = event.status;
    let tasks = this.#updates.get(frameworkId);
    if (tasks === undefined) this.#updates.set(frameworkId, (tasks = new Map()));
    const sent = tasks.get(taskId);
    const now = this.#now();
    if (sent === undefined || sent.uuid !== uuid) {
      tasks.set(taskId, { uuid, agentId, state, firstMs: now, reported: false });
      return;
    }
    if (sent.reported || now - sent.firstMs < UNACKNOWLEDGED_AFTER_MS) return;
    sent.reported = true;
    const firstMs = sent.firstMs;
    this.#note(frameworkId, 'unacknowledged_update', now, () => ({
      ids: { taskId, ...(agentId === undefined ? {} : { agentId }), uuid },
      detail: `${state} update first sent at ${formatSeconds(firstMs)}, sent again at ${formatSeconds(now)}, never acknowledged`,
    }));
  }

  /** A call that passed the master's framework and stream checks, before it is handled. */
  call(fw: Framework, call: SchedulerCall): void {
    switch (call.type) {
      case 'ACKNOWLEDGE':
        return this.#acknowledge(fw, call);
      case 'RECONCILE':
        return this.#closeWatch(fw, 'it reconciled late');
      case 'ACCEPT':
        this.#acceptInvalid(fw, call.offerIds);
        if (call.operations.every(launchesNothing)) this.#declined(fw, call.offerIds, call.filters.refuseMs);
        return;
      case 'DECLINE':
        return this.#declined(fw, call.offerIds, call.filters.refuseMs);
      default:
        return;
    }
  }

  /** A call refused for its stream id: none, or not the framework's current one. */
  staleStream(fw: Framework, streamId: string | undefined, type: string): void {
    const current = fw.streamId ?? '-';
    this.#note(fw.id, 'stale_stream_id', this.#now(), () => ({
      ids: streamId === undefined ? {} : { streamId },
      detail:
        streamId === undefined
          ? `${type} without a stream id`
          : `${type} on stream '${streamId}' while the framework's stream is '${current}'`,
    }));
  }

  /** An ACKNOWLEDGE the HTTP layer refused for its uuid, from a framework the master knows. */
  acknowledgeRefused(frameworkId: string, taskId: string | undefined, agentId: string | undefined): void {
    this.#note(frameworkId, 'acknowledge_without_uuid', this.#now(), () => ({
      ids: { ...(taskId === undefined ? {} : { taskId }), ...(agentId === undefined ? {} : { agentId }) },
      detail: `ACKNOWLEDGE${taskId === undefined ? '' : ` of task '${taskId}'`} without a 16-byte uuid`,
    }));
  }

  offerMade(offer: Offer): void {
    this.#offers.set(offer.id, { frameworkId: offer.frameworkId, agentId: offer.agentId, createdMs: this.#now() });
  }

  /** An offer left the framework's hands: rescinded, accepted, or withdrawn (declined, failover, removal). */
  offerEnded(offer: Offer, how: OfferEnd): void {
    const held = this.#offers.get(offer.id);
    this.#offers.delete(offer.id);
    const ended = this.#ended.get(offer.id)?.how ?? how;
    this.#remember(offer.id, ended);
    if (held === undefined || this.#now() - held.createdMs <= OFFER_HELD_MS) return;
    const heldMs = this.#now() - held.createdMs;
    this.#note(held.frameworkId, 'offer_held', held.createdMs + OFFER_HELD_MS, () => ({
      ids: { offerId: offer.id, agentId: held.agentId },
      detail: `offer held ${formatSeconds(heldMs)}, then ${ended}`,
    }));
  }

  /** The framework was removed: what waits for it is dropped; its counts stay in the report. */
  frameworkRemoved(frameworkId: string): void {
    this.#updates.delete(frameworkId);
    this.#recentAcks.delete(frameworkId);
    this.#declines.delete(frameworkId);
    this.#reconcile.delete(frameworkId);
    // Only frameworks with counts are worth forgetting later.
    if (this.#tally.has(frameworkId)) this.#removed.add(frameworkId);
  }

  /** A new master leads: the offers of the old one are gone with it. */
  masterChanged(): void {
    this.#offers.clear();
    this.#declines.clear();
  }

  // ---- the report ----

  /** What has happened so far, and what is overdue now (offers held, reconciliations missing). */
  report(lookup: FrameworkLookup): MisuseReport {
    const now = this.#now();
    const tally = this.#tally.copy();
    for (const [offerId, held] of this.#offers) {
      // Oldest first: once one is young enough, so are the rest.
      if (now - held.createdMs <= OFFER_HELD_MS) break;
      tally.note(held.frameworkId, 'offer_held', held.createdMs + OFFER_HELD_MS, () => ({
        ids: { offerId, agentId: held.agentId },
        detail: `offer outstanding for ${formatSeconds(now - held.createdMs)}, not answered`,
      }));
    }
    for (const [frameworkId, sinceMs] of this.#reconcile) {
      const fw = lookup(frameworkId);
      if (fw === undefined || now - sinceMs < RECONCILE_WITHIN_MS || !hasLiveTasks(fw)) continue;
      tally.note(frameworkId, 'no_reconcile_after_resubscribe', sinceMs + RECONCILE_WITHIN_MS, () =>
        missingReconcile(sinceMs, 'no RECONCILE yet'),
      );
    }
    return tally.report(now, (id) => lookup(id)?.info.name);
  }

  // ---- internals ----

  #acknowledge(fw: Framework, call: Call<'ACKNOWLEDGE'>): void {
    const tasks = this.#updates.get(fw.id);
    const sent = tasks?.get(call.taskId);
    const recent = this.#recentAcks.get(fw.id) ?? [];
    if (sent?.uuid === call.uuid) {
      tasks!.delete(call.taskId);
      recent.push(call.uuid);
      if (recent.length > RECENT_ACKS) recent.shift();
      this.#recentAcks.set(fw.id, recent);
      return;
    }
    if (recent.includes(call.uuid)) return;
    this.#note(fw.id, 'acknowledge_unknown_update', this.#now(), () => ({
      ids: { taskId: call.taskId, agentId: call.agentId, uuid: call.uuid },
      detail:
        sent === undefined
          ? `ACKNOWLEDGE of an update never sent to the framework for task '${call.taskId}'`
          : `ACKNOWLEDGE of uuid '${call.uuid}' while the ${sent.state} update waiting has uuid '${sent.uuid}'`,
    }));
  }

  #acceptInvalid(fw: Framework, offerIds: readonly string[]): void {
    // Each offer id once, however often the call names it.
    for (const offerId of offerIds.length === 1 ? offerIds : new Set(offerIds)) {
      if (fw.offers.has(offerId)) continue;
      const ended = this.#ended.get(offerId);
      this.#note(fw.id, 'accept_invalid_offer', this.#now(), () => ({
        ids: { offerId },
        detail:
          ended === undefined
            ? `ACCEPT of offer '${offerId}', unknown to the master`
            : `ACCEPT of offer '${offerId}', ${ended.how} at ${formatSeconds(ended.atMs)}`,
      }));
    }
  }

  #declined(fw: Framework, offerIds: readonly string[], refuseMs: number): void {
    let agents: Set<string> | undefined;
    for (const offerId of offerIds) {
      const offer = fw.offers.get(offerId);
      if (offer === undefined) continue;
      if (!this.#ended.has(offerId)) this.#remember(offerId, 'declined');
      if (refuseMs < DECLINE_LOOP_REFUSE_MS) (agents ??= new Set()).add(offer.agentId);
    }
    if (agents === undefined) return;
    let byAgent = this.#declines.get(fw.id);
    if (byAgent === undefined) this.#declines.set(fw.id, (byAgent = new Map()));
    const now = this.#now();
    for (const agentId of agents) {
      const times = (byAgent.get(agentId) ?? []).filter((t) => now - t < DECLINE_LOOP_WINDOW_MS);
      times.push(now);
      if (times.length < DECLINE_LOOP_COUNT) {
        byAgent.set(agentId, times);
        continue;
      }
      byAgent.delete(agentId);
      this.#note(fw.id, 'decline_loop', now, () => ({
        ids: { agentId },
        detail: `${times.length} declines of the agent's offers from ${formatSeconds(times[0]!)} to ${formatSeconds(now)}, refuse filter ${formatSeconds(refuseMs)}`,
      }));
    }
  }

  /** Ends the wait for a RECONCILE after a re-subscription, noting it if it went past the minute. */
  #closeWatch(fw: Framework, how: string): void {
    const sinceMs = this.#reconcile.get(fw.id);
    if (sinceMs === undefined) return;
    this.#reconcile.delete(fw.id);
    if (this.#now() - sinceMs < RECONCILE_WITHIN_MS || !hasLiveTasks(fw)) return;
    const now = this.#now();
    this.#note(fw.id, 'no_reconcile_after_resubscribe', sinceMs + RECONCILE_WITHIN_MS, () =>
      missingReconcile(sinceMs, `no RECONCILE before ${formatSeconds(now)}, when ${how}`),
    );
  }

  #remember(offerId: string, how: OfferEnd): void {
    this.#ended.delete(offerId);
    this.#ended.set(offerId, { how, atMs: this.#now() });
    if (this.#ended.size > ENDED_OFFERS) this.#ended.delete(this.#ended.keys().next().value!);
  }

  #note(frameworkId: string, kind: MisuseKind, timeMs: number, describe: () => Described): void {
    this.#tally.note(frameworkId, kind, timeMs, describe);
    for (const removed of this.#removed) {
      if (this.#tally.frameworkCount <= MAX_FRAMEWORKS) return;
      this.#removed.delete(removed);
      this.#tally.forget(removed);
    }
  }

  #now(): number {
    return this.ctx.loop.now();
  }
}

function hasLiveTasks(fw: Pick<Framework, 'tasks'>): boolean {
  for (const task of fw.tasks.values()) if (!isTerminal(task.state)) return true;
  return false;
}

function missingReconcile(sinceMs: number, what: string): Described {
  return { ids: {}, detail: `re-subscribed at ${formatSeconds(sinceMs)} with tasks running, ${what}` };
}

/** An operation that uses nothing of the offer: a LAUNCH of no task (the offer is declined all the same). */
function launchesNothing(op: Operation): boolean {
  return op.type === 'LAUNCH' && op.tasks.length === 0;
}
