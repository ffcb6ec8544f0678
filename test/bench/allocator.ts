/**
 * The allocator alone, on a core context: one allocation pass for
 * 1k/10k/50k agents (cpus:4;mem:8192;disk:16384;ports:[31000-32000], a tenth
 * of them with cpus and mem reserved to a role) x 10/100/1k frameworks in
 * ten roles (two with quota limits, two weighted, a tenth of the frameworks
 * suppressed). Per size it times:
 *
 *   first     the pass after every agent and framework joined (all free)
 *   quiet     a pass when nothing changed
 *   work      a pass after a tenth of the agents' offers were declined
 *             without a filter (what the allocation interval batches)
 *   filtered  a pass where every agent's offer was just declined with a
 *             long filter and most frameworks had filtered most agents
 *   revive    then one of those frameworks revives
 *
 * and the ratios as agents and frameworks grow. The filtered state costs
 * agents x frameworks declines to build, so it is built only where that
 * product is at most BENCH_ALLOCATOR_FILTERED_MAX (default 1e6).
 * Also the core: a Cluster of 10,000 agents added one by one, then 100
 * frameworks subscribed, timed end to end.
 */
import { Allocator, type OfferDecision } from '../../src/core/allocator/allocator.js';
import type { SimContext } from '../../src/core/network/context.js';
import { EventLoop } from '../../src/core/kernel/event-loop.js';
import { Network } from '../../src/core/network/network.js';
import { allocate as withAllocationRole, parseResources, type Resources } from '../../src/core/model/resources.js';
import { Rng } from '../../src/core/kernel/rng.js';
import { Trace } from '../../src/core/kernel/trace.js';
import { CoreBench, FRAMEWORK_INFO } from './core-harness.js';
import { num, progress, table } from './stats.js';

const ROLES = Array.from({ length: 10 }, (_, i) => `role${i}`);
const HOUR_MS = 3_600_000;

export interface AllocatorRow {
  readonly agents: number;
  readonly frameworks: number;
  readonly firstMs: number;
  readonly firstOffers: number;
  readonly quietMs: number;
  readonly workMs: number;
  readonly workOffers: number;
  readonly filteredMs?: number;
  readonly filteredOffers?: number;
  readonly filteredShare?: number;
  readonly reviveMs?: number;
  readonly reviveOffers?: number;
}

function parsed(text: string): Resources {
  const r = parseResources(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

function context(): SimContext {
  const loop = new EventLoop();
  const rng = new Rng('bench');
  const trace = new Trace(loop);
  return { loop, rng, trace, network: new Network(loop, trace, rng.fork('network')), epochMs: 0 };
}

/** Holds what each framework was offered, as the master's offers would. */
class Held {
  readonly offers: OfferDecision[] = [];
  take(decisions: readonly OfferDecision[]): number {
    this.offers.push(...decisions);
    return decisions.length;
  }
  /** Declines the offers chosen by `which`, with a filter of `refuseMs`. */
  decline(allocator: Allocator, which: (d: OfferDecision, i: number) => boolean, refuseMs: number): void {
    const kept: OfferDecision[] = [];
    this.offers.forEach((d, i) => {
      if (which(d, i))
        allocator.recoverResources(d.frameworkId, d.agentId, withAllocationRole(d.resources, d.role), refuseMs);
      else kept.push(d);
    });
    this.offers.length = 0;
    this.offers.push(...kept);
  }
}

function build(agents: number, frameworks: number): { allocator: Allocator; frameworkIds: string[] } {
  const allocator = new Allocator(context(), () => {});
  const plain = parsed('cpus:4;mem:8192;disk:16384;ports:[31000-32000]');
  for (let i = 0; i < agents; i++) {
    const reserved =
      i % 10 === 0
        ? parsed(
            `cpus:3;mem:6144;cpus(${ROLES[i % 30 === 0 ? 1 : 2]}):1;mem(${ROLES[1]}):2048;disk:16384;ports:[31000-32000]`,
          )
        : plain;
    allocator.addAgent(`agent-${i}`, reserved, { hostname: `agent${i}`, attributes: [] });
  }
  // A tenth of the cluster's cpus and mem for role0, a twentieth for role1.
  const cpus = agents * 4000;
  const mem = agents * 8192_000;
  allocator.setQuota(ROLES[0]!, {
    limits: new Map([
      ['cpus', cpus / 10],
      ['mem', mem / 10],
    ]),
    guarantees: new Map(),
  });
  allocator.setQuota(ROLES[1]!, { limits: new Map([['cpus', cpus / 20]]), guarantees: new Map() });
  allocator.setWeights(
    new Map([
      [ROLES[3]!, 2],
      [ROLES[4]!, 0.5],
    ]),
  );
  const frameworkIds: string[] = [];
  for (let i = 0; i < frameworks; i++) {
    const id = `fw-${String(i).padStart(4, '0')}`;
    const role = ROLES[i % ROLES.length]!;
    allocator.addFramework(id, { roles: [role], suppressedRoles: i % 10 === 9 ? [role] : [] });
    frameworkIds.push(id);
  }
  return { allocator, frameworkIds };
}

function timed<T>(run: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const out = run();
  return [out, Number(process.hrtime.bigint() - start) / 1e6];
}

function filteredState(
  allocator: Allocator,
  held: Held,
  frameworks: number,
): { ms: number; offers: number; share: number } {
  // Rounds of "offer everything, decline everything for an hour" until most
  // frameworks hold filters on most agents; the last round is the one timed.
  const rounds = Math.ceil(frameworks * 0.9);
  let last = { ms: 0, offers: 0 };
  for (let round = 0; round < rounds; round++) {
    held.decline(allocator, () => true, HOUR_MS);
    const [decisions, ms] = timed(() => allocator.allocate());
    last = { ms, offers: held.take(decisions) };
    if (last.offers === 0) break;
  }
  return { ...last, share: rounds / frameworks };
}

export function benchAllocatorSize(agents: number, frameworks: number, filteredMax: number): AllocatorRow {
  const { allocator, frameworkIds } = build(agents, frameworks);
  const held = new Held();
  const [first, firstMs] = timed(() => allocator.allocate());
  const firstOffers = held.take(first);
  const [, quietMs] = timed(() => allocator.allocate());
  held.decline(allocator, (_d, i) => i % 10 === 0, 0);
  const [work, workMs] = timed(() => allocator.allocate());
  const workOffers = held.take(work);
  const row: AllocatorRow = { agents, frameworks, firstMs, firstOffers, quietMs, workMs, workOffers };
  if (agents * frameworks > filteredMax) return row;
  const filtered = filteredState(allocator, held, frameworks);
  // A framework of an unlimited role (role5), so that quota does not stop it.
  allocator.revive(frameworkIds[5 % frameworkIds.length]!, []);
  const [revived, reviveMs] = timed(() => allocator.allocate());
  return {
    ...row,
    filteredMs: filtered.ms,
    filteredOffers: filtered.offers,
    filteredShare: filtered.share,
    reviveMs,
    reviveOffers: revived.length,
  };
}

/** A core Cluster: 10,000 agents added one by one, then 100 frameworks subscribed. */
export function benchCoreScaling(agents: number, frameworks: number): { agentsMs: number; subscribeMs: number } {
  const [bench, agentsMs] = timed(() => new CoreBench({ agents, checkInvariants: true }));
  const [, subscribeMs] = timed(() => {
    for (let i = 0; i < frameworks; i++)
      bench.subscribe(() => {}, { ...FRAMEWORK_INFO, name: `bench-${i}`, role: ROLES[i % 3]! });
  });
  return { agentsMs, subscribeMs };
}

export function allocatorTables(rows: readonly AllocatorRow[]): string {
  const cell = (ms: number | undefined, offers: number | undefined) =>
    ms === undefined ? '-' : `${num(ms, 1)} (${num(offers ?? 0)})`;
  const body = rows.map((r) => [
    `${num(r.agents)} x ${num(r.frameworks)}`,
    cell(r.firstMs, r.firstOffers),
    num(r.quietMs, 3),
    cell(r.workMs, r.workOffers),
    cell(r.filteredMs, r.filteredOffers),
    cell(r.reviveMs, r.reviveOffers),
  ]);
  const lines = [
    table(
      [
        'agents x frameworks',
        'first ms (offers)',
        'quiet ms',
        'work ms (offers)',
        'filtered ms (offers)',
        'revive ms (offers)',
      ],
      body,
    ),
  ];
  const find = (a: number, f: number) => rows.find((r) => r.agents === a && r.frameworks === f);
  const agentSizes = [...new Set(rows.map((r) => r.agents))];
  const fwSizes = [...new Set(rows.map((r) => r.frameworks))];
  const ratio = (x: AllocatorRow | undefined, y: AllocatorRow | undefined, pick: (r: AllocatorRow) => number) =>
    x === undefined || y === undefined ? '-' : `${num(pick(x) / pick(y), 2)}x`;
  for (const f of fwSizes) {
    const [a0, a1] = [agentSizes[0]!, agentSizes[agentSizes.length - 1]!];
    const [small, large] = [find(a0, f), find(a1, f)];
    lines.push(
      `${num(f)} frameworks, ${num(a1)} / ${num(a0)} agents (${num(a1 / a0)}x): first ${ratio(large, small, (r) => r.firstMs)}, work ${ratio(large, small, (r) => r.workMs)}`,
    );
  }
  for (const a of agentSizes) {
    const [f0, f1] = [fwSizes[0]!, fwSizes[fwSizes.length - 1]!];
    const [small, large] = [find(a, f0), find(a, f1)];
    lines.push(
      `${num(a)} agents, ${num(f1)} / ${num(f0)} frameworks (${num(f1 / f0)}x): first ${ratio(large, small, (r) => r.firstMs)}, work ${ratio(large, small, (r) => r.workMs)}`,
    );
  }
  return lines.join('\n');
}

export function benchAllocator(
  agentSizes: readonly number[],
  frameworkSizes: readonly number[],
  filteredMax: number,
): AllocatorRow[] {
  const rows: AllocatorRow[] = [];
  // Warm-up, discarded: the first passes run before V8 has optimised the allocator.
  benchAllocatorSize(10_000, 100, 0);
  for (const agents of agentSizes) {
    for (const frameworks of frameworkSizes) {
      progress(`allocator: ${agents} agents x ${frameworks} frameworks`);
      rows.push(benchAllocatorSize(agents, frameworks, filteredMax));
    }
  }
  return rows;
}
