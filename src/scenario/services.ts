/**
 * Bundled frameworks in a scenario run (the workflow service, the
 * orchestration framework): started beside the cluster by the caller's
 * function, they talk to the master over HTTP as they always do, but on a
 * pace the runner conducts. Their timers run on cluster time and fire when
 * the runner moves it; each reaction waits for a turn the runner grants,
 * services one after another in file order. Their APIs are asked over
 * HTTP, as their users ask them.
 */
import http from 'node:http';
import { ConductedPace, type StreamLink } from '../runtime/pace.js';
import type { ServiceAnswer } from './expect.js';
import type { ServiceRequest, ServiceSpec } from './scenario.js';

/** A bundled framework as the runner needs it. */
export interface ConductedService {
  /** Its API's base URL. */
  readonly url: string;
  link(): StreamLink;
  close(): Promise<void>;
}

export interface ServiceContext {
  readonly masterUrls: readonly string[];
  readonly pace: ConductedPace;
}

/** Starts a service of the file on the cluster (the composition root knows how). */
export type StartService = (spec: ServiceSpec, context: ServiceContext) => Promise<ConductedService>;

/** What the runner reads of the cluster to know a service has taken everything sent to it. */
export interface StreamWatch {
  /** Events (heartbeats too) the master has sent the framework so far. */
  eventsSent(frameworkId: string): number;
  /** Whether the master holds the framework subscribed on this stream. */
  subscribedOn(frameworkId: string, streamId: string | undefined): boolean;
  /** Whether the framework's stream is held by a stall (its events wait in the cluster). */
  stalled(frameworkId: string): boolean;
}

export class ServiceRun {
  readonly pace: ConductedPace;
  #service: ConductedService | undefined;
  /** Events the master sent on streams that ended before they arrived. */
  #lost = 0;

  constructor(
    readonly spec: ServiceSpec,
    clock: () => number,
  ) {
    this.pace = new ConductedPace(clock);
  }

  async start(start: StartService, masterUrls: readonly string[]): Promise<void> {
    this.#service = await start(this.spec, { masterUrls, pace: this.pace });
  }

  /** Its framework id, once it subscribed. */
  get id(): string | undefined {
    return this.#service?.link().frameworkId;
  }

  /**
   * Whether every event the master sent it has arrived (or was lost with a
   * stream that ended), and its stream is the one the master holds.
   */
  synced(watch: StreamWatch): boolean {
    const link = this.#service?.link();
    const id = link?.frameworkId;
    if (link === undefined || id === undefined) return true;
    const sent = watch.eventsSent(id);
    if (link.received + this.#lost < sent) {
      if (link.open) return watch.stalled(id);
      this.#lost = sent - link.received;
      return true;
    }
    // A stream the master let go must be seen to end before anyone acts.
    return !link.open || watch.subscribedOn(id, link.streamId);
  }

  /** Sends a request of the file to the service's API. */
  request(r: ServiceRequest): Promise<ServiceAnswer> {
    return this.#fetch(r.method, r.path, r.body);
  }

  get(path: string): Promise<ServiceAnswer> {
    return this.#fetch('GET', path, undefined);
  }

  /** One request on a connection of its own (none is left open to hold the process when the run ends). */
  #fetch(method: string, path: string, body: unknown): Promise<ServiceAnswer> {
    if (this.#service === undefined) return Promise.resolve({ status: 0, body: `${this.spec.name} is not running` });
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers =
      text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
    return new Promise((resolve) => {
      const req = http.request(new URL(path, this.#service!.url), { method, headers, agent: false }, (res) => {
        let answer = '';
        res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: answer }));
      });
      req.on('error', (error) => resolve({ status: 0, body: error.message }));
      req.end(text);
    });
  }

  /** The run ended: nothing waits for the runner any more, and the service stops. */
  async close(): Promise<void> {
    this.pace.release();
    await this.#service?.close();
  }
}
