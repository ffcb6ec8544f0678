/**
 * The offers a subscribed scheduler holds, fed from the OFFERS events its
 * client receives, and the bodies of the DECLINE / ACCEPT calls the load
 * generator sends: a live offer id when one is outstanding (each used
 * once), else an id already used, which the master still fully processes
 * and rejects as no longer valid.
 */
import type { JsonEvent, SchedulerClient } from '../../src/client/scheduler-client.js';

export class OfferFeed {
  readonly #live: string[] = [];
  #stale: string[] = [];
  #calls = 0;
  liveCalls = 0;
  staleCalls = 0;

  constructor(
    private readonly frameworkId: string,
    fallbackOfferId: string,
  ) {
    this.#stale.push(fallbackOfferId);
  }

  /** Takes OFFERS from `client` until its stream closes. */
  follow(client: SchedulerClient): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!client.closed) {
        try {
          this.add(await client.next('OFFERS', 60_000));
        } catch {
          // A timeout or the stream closing: the loop condition decides.
        }
      }
    };
    return loop();
  }

  /** An OFFERS event as upstream JSON: `{ type, offers: { offers: [{ id: { value } }] } }`. */
  add(event: JsonEvent): void {
    const offers = (event.offers?.offers ?? []) as { id: { value: string } }[];
    for (const offer of offers) this.#live.push(offer.id.value);
  }

  /** Stops handing out live offers (the cluster is about to close). */
  drain(): void {
    this.#stale.push(...this.#live.splice(0));
  }

  /** Alternates DECLINE and ACCEPT (no operations), both with a zero refuse filter. */
  nextBody(): string {
    const offerId = this.#takeOfferId();
    const filters = { refuse_seconds: 0 };
    const decline = this.#calls++ % 2 === 0;
    const call = decline
      ? { type: 'DECLINE', decline: { offer_ids: [{ value: offerId }], filters } }
      : { type: 'ACCEPT', accept: { offer_ids: [{ value: offerId }], operations: [], filters } };
    return JSON.stringify({ framework_id: { value: this.frameworkId }, ...call });
  }

  #takeOfferId(): string {
    const live = this.#live.shift();
    if (live !== undefined) {
      this.liveCalls++;
      this.#stale.push(live);
      if (this.#stale.length > 64) this.#stale = this.#stale.slice(-32);
      return live;
    }
    this.staleCalls++;
    return this.#stale[this.staleCalls % this.#stale.length]!;
  }
}
