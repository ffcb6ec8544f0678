/**
 * The simulated network between nodes (master, agents, executors). A
 * message is data, delivered to the node with its id after the link's
 * latency, unless a rule or a cut link says otherwise, and only while the
 * node is up. Faults are therefore ordinary inputs: rules and partitions
 * are properties of the network, crashes of the nodes.
 *
 * Latency: nodes on one host (an agent and its executors) talk at once;
 * other links take `latencyMs` one way. Each link is a connection, in
 * order like TCP: a delayed message holds back the ones behind it on the
 * same link, so rules reorder messages only across links. Rules apply in
 * the order added:
 *
 *   drop       the message is lost
 *   delay      it arrives `delayMs` (plus up to `jitterMs`) later; jitter reorders
 *   duplicate  it arrives twice, the copy `delayMs` after the original
 *
 * each with a `probability` (default 1) drawn from the `network` stream.
 */
import type { EventLoop } from '../kernel/event-loop.js';
import { messageSummary, type Message, type MessageType, type SimNode } from '../model/messages.js';
import type { Rng } from '../kernel/rng.js';
import type { Trace } from '../kernel/trace.js';

export interface NetworkOptions {
  /** One-way latency between hosts, in milliseconds. */
  readonly latencyMs?: number;
}

/** Pings given without messages, and what must end them (see `Network.reportQuietPings`). */
export interface QuietPings {
  /** When the node was last pinged without messages. */
  lastPingMs(nodeId: string): number | undefined;
  /** Whether its pings are quiet now (`Network.quietPingsEnded` tells when they end). */
  goOn(nodeId: string): boolean;
  /** Something that could delay or lose messages touched the links between `a` and `b` (undefined: any node). */
  linkChanged(a: string | undefined, b: string | undefined): void;
}

export interface NetworkRule {
  /** Sender node id; any sender when absent. */
  readonly from?: string;
  /** Receiver node id; any receiver when absent. */
  readonly to?: string;
  /** Message types the rule applies to; all when absent. */
  readonly types?: readonly MessageType[];
  readonly action: 'drop' | 'delay' | 'duplicate';
  readonly delayMs?: number;
  readonly jitterMs?: number;
  /** Chance in [0, 1] that the rule fires for a matching message (default 1). */
  readonly probability?: number;
}

interface Attached {
  readonly node: SimNode;
  readonly host: string;
  up: boolean;
}

export class Network {
  readonly #nodes = new Map<string, Attached>();
  readonly #cut = new Set<string>();
  readonly #rules = new Map<number, NetworkRule>();
  /** Per link, by sender then receiver: when its last message arrives, which later ones may not precede. */
  readonly #lastArrivalMs = new Map<string, Map<string, number>>();
  /**
   * The latest arrival any link holds back: once the clock has passed it,
   * no link holds back anything and sending needs no look-up of its link.
   */
  #latestArrivalMs = 0;
  readonly #latencyMs: number;
  #nextRuleId = 1;
  /** The master's quiet pings (agent-health.ts): told of every change on links, asked by the agents. */
  #quietPings: QuietPings | undefined;
  /** What wakes each node's watch on its pings when its quiet pings end. */
  readonly #quietEnded = new Map<string, () => void>();
  /** What a message's arrival runs: one function for all of them. */
  readonly #deliverer = (from: string, to: string, message: Message): void => this.#deliver(from, to, message);

  constructor(
    private readonly loop: EventLoop,
    private readonly trace: Trace,
    private readonly rng: Rng,
    options: NetworkOptions = {},
  ) {
    this.#latencyMs = options.latencyMs ?? 0;
  }

  /** Puts a node on the network (up), on `host` (its own id by default). */
  attach(node: SimNode, host = node.nodeId): void {
    this.#nodes.set(node.nodeId, { node, host, up: true });
    this.#quietPings?.linkChanged(node.nodeId, undefined);
  }

  detach(nodeId: string): void {
    this.#nodes.delete(nodeId);
    this.#quietPings?.linkChanged(nodeId, undefined);
    for (const to of this.#lastArrivalMs.get(nodeId)?.keys() ?? []) this.#lastArrivalMs.get(to)?.delete(nodeId);
    this.#lastArrivalMs.delete(nodeId);
  }

  /** A crashed node receives nothing until it is up again. */
  setUp(nodeId: string, up: boolean): void {
    const attached = this.#nodes.get(nodeId);
    if (attached !== undefined) attached.up = up;
    this.#quietPings?.linkChanged(nodeId, undefined);
  }

  addRule(rule: NetworkRule): number {
    const id = this.#nextRuleId++;
    this.#rules.set(id, rule);
    this.#quietPings?.linkChanged(rule.from, rule.to);
    this.trace.append('net:rule-add', { ruleId: id, ...rule });
    return id;
  }

  removeRule(id: number): void {
    if (this.#rules.delete(id)) this.trace.append('net:rule-remove', { ruleId: id });
  }

  /** Messages between `a` and `b` are lost both ways until `heal`. */
  cut(a: string, b: string): void {
    this.#cut.add(linkKey(a, b));
    this.#quietPings?.linkChanged(a, b);
    this.trace.append('net:cut', { a, b });
  }

  heal(a: string, b: string): void {
    if (this.#cut.delete(linkKey(a, b))) this.trace.append('net:heal', { a, b });
  }

  isCut(a: string, b: string): boolean {
    return this.#cut.size > 0 && this.#cut.has(linkKey(a, b));
  }

  /** Sends `message` from `from` to `to`, subject to latency, rules and cuts. */
  send(from: string, to: string, message: Message): void {
    let delayMs = this.#latency(from, to);
    /** Extra delays of the duplicates, after the original. */
    let copies: number[] | undefined;
    if (this.#rules.size > 0)
      for (const [ruleId, rule] of this.#rules) {
        if (!matches(rule, from, to, message) || !this.#fires(rule)) continue;
        if (rule.action === 'drop') {
          this.trace.append('net:drop', { ruleId, from, to, message: message.type, ...messageSummary(message) });
          return;
        }
        const extraMs = (rule.delayMs ?? 0) + (rule.jitterMs === undefined ? 0 : this.rng.int(rule.jitterMs + 1));
        if (rule.action === 'delay') delayMs += extraMs;
        else (copies ??= []).push(extraMs);
        this.trace.append(`net:${rule.action}`, { ruleId, from, to, message: message.type, extraMs });
      }
    const now = this.loop.now();
    const label = deliveryLabel(message.type);
    this.#put(from, to, message, label, now + delayMs, now);
    if (copies !== undefined)
      for (const extraMs of copies) this.#put(from, to, message, label, now + delayMs + extraMs, now);
  }

  /** Schedules a message's arrival, for `earliestMs` or later (`#arrival`). */
  #put(from: string, to: string, message: Message, label: string, earliestMs: number, now: number): void {
    const arrivalMs = this.#arrival(from, to, earliestMs, now);
    this.loop.schedule(arrivalMs - now, label, new Delivery(this.#deliverer, from, to, message));
  }

  /**
   * When a message sent now for `earliestMs` arrives: not before the last
   * one on its link. Only arrivals later than now are kept: a message
   * arriving now holds back nothing that is sent from now on.
   */
  #arrival(from: string, to: string, earliestMs: number, now: number): number {
    if (earliestMs <= now && this.#latestArrivalMs <= now) return now;
    const links = this.#links(from, to);
    const arrivalMs = Math.max(earliestMs, links.get(to) ?? 0);
    if (arrivalMs > now) {
      links.set(to, arrivalMs);
      if (arrivalMs > this.#latestArrivalMs) this.#latestArrivalMs = arrivalMs;
    }
    return arrivalMs;
  }

  /**
   * Delivers `message` inside this call when nothing could tell it from one
   * sent now: both ends attached and up, no latency between them, the link
   * not cut and holding nothing back, and no rule for it. Otherwise it sends
   * nothing and returns false, and the caller sends it as usual. Only for
   * messages whose handling does not depend on the messages already on
   * their way (the health pings): this one overtakes them.
   */
  sendNow(from: string, to: string, message: Message): boolean {
    const source = this.#nodes.get(from);
    const target = this.#nodes.get(to);
    if (source === undefined || target === undefined || !source.up || !target.up) return false;
    if (this.#latency(from, to) !== 0 || this.#holdsBack(from, to) || this.isCut(from, to)) return false;
    for (const rule of this.#rules.values()) if (matches(rule, from, to, message)) return false;
    target.node.receive(from, message);
    return true;
  }

  /**
   * The master's health checks skip the messages of pings that nothing
   * could delay or lose (agent-health.ts): the network tells it of every
   * change on links (a rule added, a cut, a node attached, up or down;
   * healing and removing a rule lose nothing), and agents ask it when their
   * master last pinged them so.
   */
  reportQuietPings(quietPings: QuietPings): void {
    // Another master's pings: whatever the one before gave ends here, kept by the nodes as heard.
    if (this.#quietPings !== undefined) for (const wake of [...this.#quietEnded.values()]) wake();
    this.#quietPings = quietPings;
  }

  quietPingMs(nodeId: string): number | undefined {
    return this.#quietPings?.lastPingMs(nodeId);
  }

  /** Whether the node's master pings it without messages now. */
  quietPingsGoOn(nodeId: string): boolean {
    return this.#quietPings?.goOn(nodeId) ?? false;
  }

  /** `wake` runs when the node's quiet pings end: they are loud again, or stopped. */
  onQuietPingsEnded(nodeId: string, wake: () => void): void {
    this.#quietEnded.set(nodeId, wake);
  }

  quietPingsEnded(nodeId: string): void {
    this.#quietEnded.get(nodeId)?.();
  }

  /** Whether a message on the link arrives later than now. */
  #holdsBack(from: string, to: string): boolean {
    const now = this.loop.now();
    return this.#latestArrivalMs > now && (this.#lastArrivalMs.get(from)?.get(to) ?? 0) > now;
  }

  #deliver(from: string, to: string, message: Message): void {
    const target = this.#nodes.get(to);
    if (target === undefined || !target.up || this.isCut(from, to)) {
      this.trace.append('net:lost', { from, to, message: message.type });
      return;
    }
    target.node.receive(from, message);
  }

  /**
   * The sender's links, registered under both ends so that detaching a node
   * forgets its links in time proportional to its own links.
   */
  #links(from: string, to: string): Map<string, number> {
    let out = this.#lastArrivalMs.get(from);
    if (out === undefined) this.#lastArrivalMs.set(from, (out = new Map()));
    let back = this.#lastArrivalMs.get(to);
    if (back === undefined) this.#lastArrivalMs.set(to, (back = new Map()));
    if (!back.has(from)) back.set(from, 0);
    return out;
  }

  #latency(from: string, to: string): number {
    if (this.#latencyMs === 0) return 0;
    const a = this.#nodes.get(from)?.host ?? from;
    const b = this.#nodes.get(to)?.host ?? to;
    return a === b ? 0 : this.#latencyMs;
  }

  #fires(rule: NetworkRule): boolean {
    const p = rule.probability ?? 1;
    return p >= 1 || (p > 0 && this.rng.next() < p);
  }
}

/** A message on its way: its arrival timer's action (an object of four fields, no closure per message). */
class Delivery {
  constructor(
    private readonly deliver: (from: string, to: string, message: Message) => void,
    private readonly from: string,
    private readonly to: string,
    private readonly message: Message,
  ) {}

  onTimer(): void {
    this.deliver(this.from, this.to, this.message);
  }
}

/** The label of each message type's arrival timers (`net:<type>`), made once. */
const DELIVERY_LABELS = new Map<string, string>();

function deliveryLabel(type: string): string {
  let label = DELIVERY_LABELS.get(type);
  if (label === undefined) DELIVERY_LABELS.set(type, (label = `net:${type}`));
  return label;
}

function matches(rule: NetworkRule, from: string, to: string, message: Message): boolean {
  return (
    (rule.from === undefined || rule.from === from) &&
    (rule.to === undefined || rule.to === to) &&
    (rule.types === undefined || rule.types.includes(message.type))
  );
}

function linkKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
