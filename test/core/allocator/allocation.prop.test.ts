/**
 * Allocation under random sequences of subscriptions, launches (alone, or
 * after reserving resources and creating a volume in the same ACCEPT),
 * declines with filters, suppression, revival, quota and weight updates,
 * agents joining, crashing, restarting and marked gone, and time. After
 * every command:
 *
 *   - resources are conserved (`cluster.checkAllInvariants()`), and per
 *     agent no resource is in two outstanding offers or tasks
 *   - no role holds (consumed plus offered) more than its limit, except a
 *     role a forced update left above it, which gets no more of what it is
 *     over until it is back under
 *   - a suppressed role gets no new offer
 *   - an agent a framework declined with a filter is not offered to it
 *     again for that role, with no more than was declined, before the
 *     filter expires or a REVIVE clears it
 *
 * fast-check prints the seed and the shrunk command list on failure; pass
 * them back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, contains, format, scalarQuantities, type Resources } from '../../../src/core/model/resources.js';
import type { Offer } from '../../../src/core/model/records.js';
import type { OfferView, Operation, TaskSpec } from '../../../src/core/model/types.js';
import {
  AGENT_RESOURCES,
  commandTask,
  connect,
  makeCluster,
  resources,
  sumDisjoint,
  traceKinds,
  type TestCluster,
  type TestScheduler,
} from '../helpers.js';
import { reserved, volume } from '../master/operations-helpers.js';

const ROLES = ['a', 'b', 'c'] as const;
const PRINCIPAL = 'ops';

interface Model {
  frameworks: number;
}

interface Filter {
  readonly frameworkId: string;
  readonly agentId: string;
  readonly role: string;
  readonly resources: Resources;
  readonly untilMs: number;
}

class Real {
  readonly schedulers: TestScheduler[] = [];
  readonly read = new Map<TestScheduler, number>();
  filters: Filter[] = [];
  /** Roles a forced quota update left above their limits. */
  readonly forced = new Set<string>();
  nextTask = 0;

  constructor(readonly cluster: TestCluster) {}

  pick(index: number): TestScheduler | undefined {
    return this.schedulers[index % Math.max(1, this.schedulers.length)];
  }

  /** A framework by index, and one of its outstanding offers by index. */
  offer(fw: number, index: number): { s: TestScheduler | undefined; offer: Offer | undefined } {
    const s = this.pick(fw);
    const offers = s?.offers() ?? [];
    return { s, offer: offers[index % Math.max(1, offers.length)] };
  }

  check(): void {
    this.cluster.checkAllInvariants();
    this.#disjoint();
    this.#quotas();
    this.#newOffers();
  }

  #disjoint(): void {
    for (const agent of this.cluster.view.agents()) {
      const held: Resources[] = [];
      for (const fw of this.cluster.view.frameworks()) {
        for (const offer of fw.offers.values()) if (offer.agentId === agent.id) held.push(offer.resources);
        for (const task of fw.tasks.values())
          if (task.agentId === agent.id && !task.resourcesRecovered) held.push(task.resources);
      }
      const sum = sumDisjoint(held);
      if ('overlap' in sum) throw new Error(`agent '${agent.id}': ${sum.overlap}`);
      if (!contains(agent.info.resources, sum.sum))
        throw new Error(`agent '${agent.id}' holds more than it has: ${format(sum.sum)}`);
    }
  }

  #quotas(): void {
    for (const quota of this.cluster.view.quotas()) {
      const consumed = this.cluster.view.consumedQuota(quota.role);
      const offered = new Map<string, number>();
      for (const fw of this.cluster.view.frameworks()) {
        for (const offer of fw.offers.values()) {
          if (offer.role !== quota.role) continue;
          // Reserved resources are consumed already, offered or not.
          for (const [name, milli] of scalarQuantities(offer.resources.filter((res) => res.role === '*')))
            offered.set(name, (offered.get(name) ?? 0) + milli);
        }
      }
      let over = false;
      for (const [name, limit] of quota.limits) {
        const used = consumed.get(name) ?? 0;
        const more = offered.get(name) ?? 0;
        if (used > limit) {
          over = true;
          if (!this.forced.has(quota.role))
            throw new Error(`role '${quota.role}' consumes ${used} ${name} over its limit ${limit} without force`);
          if (more > 0) throw new Error(`role '${quota.role}' is over its ${name} limit and still offered ${more}`);
        } else if (used + more > limit) {
          throw new Error(
            `role '${quota.role}': consumed ${used} + offered ${more} ${name} exceeds the limit ${limit}`,
          );
        }
      }
      if (!over) this.forced.delete(quota.role);
    }
  }

  #newOffers(): void {
    const now = this.cluster.now();
    for (const s of this.schedulers) {
      const events = s.sink.events;
      const fresh = events.slice(this.read.get(s) ?? 0).flatMap((e) => (e.type === 'OFFERS' ? e.offers : []));
      this.read.set(s, events.length);
      const suppressed = s.framework?.suppressedRoles ?? new Set<string>();
      for (const offer of fresh) {
        const role = offer.allocationRole ?? '*';
        expect(suppressed.has(role), `offer ${offer.id} to suppressed role '${role}'`).toBe(false);
        const filter = this.filters.find((f) => matches(f, s.frameworkId, offer, now));
        expect(filter, `offer ${offer.id} within a decline filter`).toBeUndefined();
      }
    }
  }
}

function matches(f: Filter, frameworkId: string, offer: OfferView, now: number): boolean {
  return (
    f.frameworkId === frameworkId &&
    f.agentId === offer.agentId &&
    f.role === (offer.allocationRole ?? '*') &&
    now < f.untilMs &&
    contains(f.resources, allocate(offer.resources, undefined))
  );
}

type Cmd = fc.Command<Model, Real>;

abstract class Step implements Cmd {
  check(): boolean {
    return true;
  }
  run(_m: Model, r: Real): void {
    this.act(r);
    r.check();
  }
  abstract act(r: Real): void;
  abstract toString(): string;
}

class Subscribe implements Cmd {
  constructor(
    readonly roles: readonly string[],
    readonly suppressed: readonly string[],
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.frameworks < 4;
  }
  run(m: Model, r: Real): void {
    m.frameworks++;
    const suppressedRoles = this.suppressed.filter((role) => this.roles.includes(role));
    const info = {
      name: `fw${r.schedulers.length}`,
      principal: PRINCIPAL,
      roles: [...this.roles],
      capabilities: ['MULTI_ROLE' as const, 'RESERVATION_REFINEMENT' as const],
    };
    const s = connect(r.cluster, info, { suppressedRoles });
    r.schedulers.push(s);
    r.check();
  }
  toString(): string {
    return `subscribe([${this.roles.join(',')}], suppressed [${this.suppressed.join(',')}])`;
  }
}

class Accept extends Step {
  constructor(
    readonly fw: number,
    readonly offer: number,
    readonly how: 'launch' | 'reserve' | 'volume',
    readonly cpusTenths: readonly number[],
    readonly refuseSeconds: number,
  ) {
    super();
  }
  act(r: Real): void {
    const { s, offer } = r.offer(this.fw, this.offer);
    if (s === undefined || offer === undefined) return;
    const tasks = this.cpusTenths.map((tenths) =>
      commandTask(`t${r.nextTask++}`, offer.agentId, 'sleep 20', `cpus:${tenths / 10};mem:64`),
    );
    s.call({
      type: 'ACCEPT',
      offerIds: [offer.id],
      operations: this.#operations(offer.role, tasks),
      filters: { refuseMs: this.refuseSeconds * 1000 },
    });
  }
  /** Launches; or reserves a cpu (and 100 MB of disk for a volume) to the offer's role first, then launches on what is left. */
  #operations(role: string, tasks: TaskSpec[]): Operation[] {
    if (this.how === 'launch') return [{ type: 'LAUNCH', tasks }];
    const disk = reserved(resources('disk:100'), role, PRINCIPAL);
    const reserve: Operation = {
      type: 'RESERVE',
      resources: allocate([...reserved(resources('cpus:1'), role, PRINCIPAL), ...disk], role),
    };
    if (this.how === 'reserve') return [reserve, { type: 'LAUNCH', tasks: tasks.slice(1) }];
    return [
      reserve,
      { type: 'CREATE', resources: allocate(volume(disk, `v${this.offer}`, 'data', PRINCIPAL), role) },
      { type: 'LAUNCH', tasks: tasks.slice(1) },
    ];
  }
  toString(): string {
    return `accept(fw ${this.fw}, offer ${this.offer}, ${this.how}, cpus [${this.cpusTenths.map((t) => t / 10).join(',')}], refuse ${this.refuseSeconds} s)`;
  }
}

class Decline extends Step {
  constructor(
    readonly fw: number,
    readonly offer: number,
    readonly refuseSeconds: number,
  ) {
    super();
  }
  act(r: Real): void {
    const { s, offer } = r.offer(this.fw, this.offer);
    if (s === undefined || offer === undefined) return;
    const refuseMs = this.refuseSeconds * 1000;
    if (s.decline([offer.id], refuseMs).ok && refuseMs > 0) {
      const untilMs = r.cluster.now() + refuseMs;
      r.filters.push({
        frameworkId: s.frameworkId,
        agentId: offer.agentId,
        role: offer.role,
        resources: allocate(offer.resources, undefined),
        untilMs,
      });
    }
  }
  toString(): string {
    return `decline(fw ${this.fw}, offer ${this.offer}, refuse ${this.refuseSeconds} s)`;
  }
}

class SuppressOrRevive extends Step {
  constructor(
    readonly fw: number,
    readonly what: 'SUPPRESS' | 'REVIVE',
    readonly roles: readonly string[],
  ) {
    super();
  }
  act(r: Real): void {
    const s = r.pick(this.fw);
    if (s === undefined) return;
    const own = s.framework?.roles() ?? [];
    const roles = this.roles.filter((role) => own.includes(role));
    if (!s.call({ type: this.what, roles }).ok || this.what === 'SUPPRESS') return;
    const cleared = roles.length === 0 ? own : roles;
    r.filters = r.filters.filter((f) => f.frameworkId !== s.frameworkId || !cleared.includes(f.role));
  }
  toString(): string {
    return `${this.what.toLowerCase()}(fw ${this.fw}, [${this.roles.join(',')}])`;
  }
}

class Quota extends Step {
  constructor(
    readonly role: string,
    readonly cpus: number | undefined,
    readonly mem: number | undefined,
    readonly force: boolean,
  ) {
    super();
  }
  act(r: Real): void {
    const limits = new Map<string, number>();
    if (this.cpus !== undefined) limits.set('cpus', this.cpus);
    if (this.mem !== undefined) limits.set('mem', this.mem);
    const outcome = r.cluster.updateQuota({
      force: this.force,
      configs: [{ role: this.role, limits, guarantees: new Map() }],
    });
    if (outcome.ok && this.force) r.forced.add(this.role);
  }
  toString(): string {
    return `quota(${this.role}, cpus ${this.cpus ?? '-'}, mem ${this.mem ?? '-'}${this.force ? ', force' : ''})`;
  }
}

class Weight extends Step {
  constructor(
    readonly role: string,
    readonly weight: number,
  ) {
    super();
  }
  act(r: Real): void {
    expect(r.cluster.updateWeights([{ role: this.role, weight: this.weight }]).ok).toBe(true);
  }
  toString(): string {
    return `weight(${this.role}, ${this.weight})`;
  }
}

class AgentStep extends Step {
  constructor(
    readonly what: 'add' | 'crash' | 'restart' | 'gone',
    readonly agent: number,
  ) {
    super();
  }
  act(r: Real): void {
    const { agents } = r.cluster;
    if (this.what === 'add') {
      if (agents.length >= 5) return;
      const n = agents.length + 1;
      r.cluster.addAgent({
        hostname: `agent${n}`,
        ip: '127.0.0.1',
        port: 5050 + n,
        resources: resources(AGENT_RESOURCES),
        attributes: [],
      });
      return;
    }
    const agentId = agents[this.agent % agents.length]!.id;
    if (this.what === 'gone') {
      expect(r.cluster.operator({ type: 'MARK_AGENT_GONE', agentId }).ok).toBe(true);
      return;
    }
    if (r.cluster.view.agent(agentId) === undefined) return;
    const state = r.cluster.view.agentProcessState(agentId);
    if (this.what === 'crash' && state !== 'crashed') r.cluster.crashAgent(agentId);
    if (this.what === 'restart' && state === 'crashed') r.cluster.restartAgent(agentId);
  }
  toString(): string {
    return `${this.what}-agent(${this.agent})`;
  }
}

class Advance extends Step {
  constructor(readonly ms: number) {
    super();
  }
  act(r: Real): void {
    r.cluster.advance(this.ms);
  }
  toString(): string {
    return `advance(${this.ms} ms)`;
  }
}

const fw = fc.nat(3);
const role = fc.constantFrom(...ROLES);
const roles = fc.subarray([...ROLES]);
const commands = fc.commands(
  [
    fc.oneof(
      {
        arbitrary: fc
          .tuple(
            fw,
            fc.nat(4),
            fc.constantFrom('launch', 'launch', 'reserve', 'volume' as const),
            fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 3 }),
            fc.constantFrom(0, 5),
          )
          .map((a) => new Accept(...a)),
        weight: 5,
      },
      { arbitrary: fc.tuple(fw, fc.nat(4), fc.constantFrom(0, 1, 5, 60)).map((a) => new Decline(...a)), weight: 3 },
      {
        arbitrary: fc
          .tuple(fw, fc.constantFrom('SUPPRESS', 'REVIVE' as const), roles)
          .map((a) => new SuppressOrRevive(...a)),
        weight: 2,
      },
      {
        arbitrary: fc
          .tuple(
            role,
            fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
            fc.option(fc.constantFrom(0, 256, 4096, 20000), { nil: undefined }),
            fc.boolean(),
          )
          .map((a) => new Quota(...a)),
        weight: 2,
      },
      { arbitrary: fc.tuple(role, fc.constantFrom(0.5, 1, 2, 5)).map((a) => new Weight(...a)), weight: 1 },
      {
        arbitrary: fc
          .tuple(fc.constantFrom('add', 'crash', 'restart', 'restart', 'gone' as const), fc.nat(4))
          .map((a) => new AgentStep(...a)),
        weight: 1,
      },
      {
        arbitrary: fc.tuple(fc.subarray([...ROLES], { minLength: 1 }), roles).map((a) => new Subscribe(...a)),
        weight: 1,
      },
      { arbitrary: fc.integer({ min: 0, max: 30_000 }).map((ms) => new Advance(ms)), weight: 3 },
    ),
  ],
  { maxCommands: 40, size: '+1' },
);

describe('allocation under random calls, quota, weights and agent changes', () => {
  it('keeps resources, quota limits, suppression and filters', () => {
    const seen = { applied: 0, dropped: 0, gone: 0 };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 1, max: 3 }),
        commands,
        (seed, agents, cmds) => {
          let cluster: TestCluster | undefined;
          const setup = () => ({ model: { frameworks: 0 }, real: new Real((cluster = makeCluster({ agents, seed }))) });
          fc.modelRun(setup, cmds);
          for (const kind of traceKinds(cluster!)) {
            if (kind === 'operation:apply') seen.applied++;
            if (kind === 'operation:drop') seen.dropped++;
            if (kind === 'agent:gone') seen.gone++;
          }
        },
      ),
      { numRuns: 200 },
    );
    // The runs reserved, created volumes and removed agents, not only launched.
    expect(seen.applied).toBeGreaterThan(50);
    expect(seen.gone).toBeGreaterThan(10);
  });
});
