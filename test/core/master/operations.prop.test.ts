/**
 * Property test of offer operations: random sequences of ACCEPTs that
 * reserve, unreserve, create and destroy volumes and launch tasks (on
 * reserved resources and volumes too), DECLINEs, acknowledgements,
 * operator reservations, agent crashes and restarts and time, with after
 * every command:
 *
 *   - the full invariant check (`cluster.checkAllInvariants()`)
 *   - resources conserved: each agent's total, on the master and on the
 *     agent, has the quantities of its resources flag, name by name
 *   - no resource in two outstanding offers (nor in an offer and a task)
 *   - reserved resources offered only to their role
 *   - persistent volumes whole: a volume keeps the size it was created
 *     with, on the master and on the agent, and a task holds all of it
 *     (ACCEPTs and operator calls try to destroy or use a part of one)
 *
 * The seed is printed; set OPERATIONS_PROP_SEED to replay a run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { format, scalarQuantities, contains, type Resources } from '../../../src/core/model/resources.js';
import { isDynamicallyReserved, isPersistentVolume, isReserved } from '../../../src/core/model/conversions.js';
import { rangesSize } from '../../../src/core/model/ranges.js';
import type { Operation } from '../../../src/core/model/types.js';
import {
  commandTask,
  connect,
  makeCluster,
  resources,
  sumDisjoint,
  type TestCluster,
  type TestScheduler,
} from '../helpers.js';
import { op, operationStatuses, reserved, volume } from './operations-helpers.js';

const FLAG = 'cpus:4;mem:2048;disk:1024;ports:[31000-31010];cpus(a):1;disk(a):256';

interface Model {
  readonly agents: number;
}

class Real {
  readonly schedulers: TestScheduler[] = [];
  readonly acked = new Set<string>();
  /** Each volume's size when first seen, by agent, role and persistence id. */
  readonly volumeSizes = new Map<string, number>();
  nextId = 0;
  constructor(readonly cluster: TestCluster) {}

  check(): void {
    const { cluster } = this;
    cluster.checkAllInvariants();
    const flag = quantities(resources(FLAG));
    for (const agent of cluster.agents) {
      const record = cluster.view.agent(agent.id);
      if (record === undefined) continue;
      for (const [where, bag] of [
        ['master', record.info.resources],
        ['agent', cluster.view.agentResources(agent.id) ?? []],
      ] as const) {
        const q = quantities(bag);
        for (const [name, n] of flag)
          if (q.get(name) !== n)
            throw new Error(
              `${where}'s total of '${agent.id}' has ${name} ${q.get(name)}, flag ${n}: {${format(bag)}}`,
            );
      }
      const held: Resources[] = [];
      for (const fw of cluster.view.frameworks()) {
        for (const offer of fw.offers.values()) {
          if (offer.agentId !== agent.id) continue;
          held.push(offer.resources);
          const foreign = offer.resources.find((r) => isReserved(r) && r.role !== offer.role);
          if (foreign !== undefined)
            throw new Error(`offer '${offer.id}' to role '${offer.role}' holds ${format([foreign])}`);
        }
        for (const task of fw.tasks.values())
          if (task.agentId === agent.id && !task.resourcesRecovered) held.push(task.resources);
      }
      this.checkVolumesWhole(agent.id, [record.info.resources, cluster.view.agentResources(agent.id) ?? [], ...held]);
      const result = sumDisjoint(held);
      if ('overlap' in result) throw new Error(`agent '${agent.id}': ${result.overlap}`);
      if (!contains(record.info.resources, result.sum))
        throw new Error(`agent '${agent.id}' holds {${format(result.sum)}} beyond its total`);
    }
  }

  /** Every volume in the bags has the size it had when first seen (ids are never reused). */
  checkVolumesWhole(agentId: string, bags: readonly Resources[]): void {
    for (const v of bags.flat().filter(isPersistentVolume)) {
      const key = `${agentId}/${v.role}/${v.disk!.persistence!.id}`;
      const size = this.volumeSizes.get(key);
      if (size === undefined) this.volumeSizes.set(key, v.milli ?? 0);
      else if (size !== v.milli)
        throw new Error(`volume ${format([v])} on '${agentId}' was ${size / 1000} when first seen`);
    }
  }

  /** Acknowledges every task and operation status with a uuid. */
  acknowledgeAll(): void {
    for (const s of this.schedulers) {
      s.acknowledgeAll();
      for (const status of operationStatuses(s.sink)) {
        if (status.uuid === undefined || this.acked.has(status.uuid) || s.framework?.state !== 'subscribed') continue;
        this.acked.add(status.uuid);
        s.call({
          type: 'ACKNOWLEDGE_OPERATION_STATUS',
          agentId: status.agentId!,
          operationId: status.operationId!,
          uuid: status.uuid,
        });
      }
    }
  }
}

/** Scalar milli and range sizes by name, reservations and volumes ignored. */
function quantities(bag: Resources): Map<string, number> {
  const out = scalarQuantities(bag);
  for (const r of bag) if (r.type === 'RANGES') out.set(r.name, (out.get(r.name) ?? 0) + rangesSize(r.ranges ?? []));
  return out;
}

type Step =
  | 'reserve'
  | 'unreserve'
  | 'create'
  | 'destroy'
  | 'destroy-part'
  | 'launch'
  | 'launch-reserved'
  | 'launch-part'
  | 'reserve-other-role';

/** One ACCEPT, its operations built from what the chosen offer holds, so that most are valid. */
class Accept implements fc.Command<Model, Real> {
  constructor(
    readonly fw: number,
    readonly steps: readonly Step[],
    readonly withIds: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  run(_m: Model, r: Real): void {
    const s = r.schedulers[this.fw % r.schedulers.length]!;
    const offer = s.offers()[0];
    if (offer !== undefined) {
      const ops = this.steps
        .map((step) => this.operation(step, offer.resources, offer.role, offer.agentId, r))
        .filter((o) => o !== undefined);
      s.call({ type: 'ACCEPT', offerIds: [offer.id], operations: ops, filters: { refuseMs: 1_000 } });
    }
    r.check();
  }
  operation(step: Step, offered: Resources, role: string, agentId: string, r: Real): Operation | undefined {
    const id = this.withIds ? `op-${r.nextId++}` : undefined;
    const plain = (name: string) => offered.filter((x) => x.name === name && !isReserved(x) && x.type === 'SCALAR');
    const dynamic = offered.filter((x) => isDynamicallyReserved(x) && !isPersistentVolume(x) && x.type === 'SCALAR');
    const disk = offered.filter((x) => x.name === 'disk' && isReserved(x) && !isPersistentVolume(x));
    const volumes = offered.filter(isPersistentVolume);
    const part = (bag: Resources) => bag.slice(0, 1).map((x) => ({ ...x, milli: Math.min(x.milli ?? 0, 500) }));
    // A volume named with a size other than its own: half of it, or one thousandth more.
    const resized = volumes
      .slice(0, 1)
      .map((x) => ({ ...x, milli: (x.milli ?? 0) > 1 ? Math.floor((x.milli ?? 0) / 2) : (x.milli ?? 0) + 1 }));
    switch (step) {
      case 'reserve':
        return op('RESERVE', reserved(part([...plain('cpus'), ...plain('disk')]), role, 'p'), id);
      case 'reserve-other-role':
        return op('RESERVE', reserved(part(plain('mem')), 'elsewhere', 'p'), id);
      case 'unreserve':
        return op('UNRESERVE', part(dynamic), id);
      case 'create':
        return disk.length === 0 ? undefined : op('CREATE', volume(part(disk), `v${r.nextId++}`, 'data', 'p'), id);
      case 'destroy':
        return volumes.length === 0 ? undefined : op('DESTROY', volumes.slice(0, 1), id);
      case 'destroy-part':
        return resized.length === 0 ? undefined : op('DESTROY', resized, id);
      case 'launch':
      case 'launch-reserved':
      case 'launch-part': {
        const extra =
          step === 'launch-reserved'
            ? [...volumes.slice(0, 1), ...part(dynamic)]
            : step === 'launch-part'
              ? resized
              : [];
        const task = commandTask(`t${r.nextId++}`, agentId, 'sleep 2', 'cpus:0.1;mem:32');
        return { type: 'LAUNCH', tasks: [{ ...task, resources: [...task.resources, ...extra] }] };
      }
    }
  }
  toString(): string {
    return `accept(fw ${this.fw}, ${this.steps.join(' ')}${this.withIds ? ', ids' : ''})`;
  }
}

class Act implements fc.Command<Model, Real> {
  constructor(
    readonly what:
      | 'decline'
      | 'ack'
      | 'crash'
      | 'restart'
      | 'operator-reserve'
      | 'operator-unreserve'
      | 'operator-destroy-part',
    readonly index: number,
    readonly ms: number,
  ) {}
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const agentId = r.cluster.agents[this.index % m.agents]!.id;
    const s = r.schedulers[this.index % r.schedulers.length]!;
    if (this.what === 'decline')
      s.decline(
        s.offers().map((o) => o.id),
        this.ms,
      );
    if (this.what === 'ack') r.acknowledgeAll();
    if (this.what === 'crash' && r.cluster.view.agentProcessState(agentId) !== 'crashed') r.cluster.crashAgent(agentId);
    if (this.what === 'restart' && r.cluster.view.agentProcessState(agentId) === 'crashed')
      r.cluster.restartAgent(agentId);
    if (this.what === 'operator-reserve')
      r.cluster.operatorOperation('RESERVE', agentId, reserved('mem:64', 'b', 'ops'));
    if (this.what === 'operator-unreserve')
      r.cluster.operatorOperation('UNRESERVE', agentId, reserved('mem:64', 'b', 'ops'));
    if (this.what === 'operator-destroy-part') this.destroyPart(r, agentId);
    r.cluster.advance(this.ms);
    r.check();
  }
  /** The operator destroys half of a volume the agent has (refused), then, every other time, all of it (unless a task uses it). */
  destroyPart(r: Real, agentId: string): void {
    const v = (r.cluster.view.agent(agentId)?.info.resources ?? []).find(isPersistentVolume);
    if (v === undefined) return;
    if (r.cluster.operatorOperation('DESTROY', agentId, [{ ...v, milli: Math.floor(v.milli! / 2) }]).ok)
      throw new Error(`the operator destroyed half of ${format([v])}`);
    exercised.partRefused++;
    if (this.index % 2 === 0 && r.cluster.operatorOperation('DESTROY', agentId, [v]).ok) exercised.wholeDestroyed++;
  }
  toString(): string {
    return `${this.what}(${this.index}, then ${this.ms} ms)`;
  }
}

const step = fc.constantFrom<Step>(
  'reserve',
  'reserve',
  'unreserve',
  'create',
  'destroy',
  'destroy-part',
  'launch',
  'launch-reserved',
  'launch-reserved',
  'launch-reserved',
  'launch-part',
  'reserve-other-role',
);
const accept = fc
  .tuple(fc.nat(3), fc.array(step, { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([fw, steps, ids]) => new Accept(fw, steps, ids));
const act = fc
  .tuple(
    fc.constantFrom(
      'decline',
      'ack',
      'ack',
      'crash',
      'restart',
      'restart',
      'operator-reserve',
      'operator-unreserve',
      'operator-destroy-part',
      'operator-destroy-part' as const,
    ),
    fc.nat(5),
    fc.constantFrom(0, 500, 1_500, 12_000),
  )
  .map(([what, index, ms]) => new Act(what, index, ms));

/** What the runs did, so that a test that exercises nothing fails. */
const exercised = { applied: 0, dropped: 0, onReserved: 0, wholeDestroyed: 0, partRefused: 0 };

const SEED =
  process.env['OPERATIONS_PROP_SEED'] === undefined ? 20_240_601 : Number(process.env['OPERATIONS_PROP_SEED']);

describe('offer operations under random sequences', () => {
  it('conserve resources, never offer a resource twice, offer reservations only to their role', () => {
    console.log(`operations property test: seed ${SEED} (OPERATIONS_PROP_SEED replays it)`);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.constantFrom(0, 0, 5),
        fc.commands([fc.oneof({ arbitrary: accept, weight: 3 }, { arbitrary: act, weight: 2 })], { maxCommands: 40 }),
        (agents, seed, networkLatencyMs, cmds) => {
          const cluster = makeCluster({ agents: 0, seed, networkLatencyMs });
          for (let i = 0; i < agents; i++) {
            cluster.addAgent({
              hostname: `agent${i + 1}`,
              ip: '127.0.0.1',
              port: 5051 + i,
              resources: resources(FLAG),
              attributes: [],
            });
          }
          const setup = () => {
            const real = new Real(cluster);
            real.schedulers.push(
              connect(cluster, { name: 'x', roles: ['a'], capabilities: ['MULTI_ROLE'], principal: 'p' }),
            );
            real.schedulers.push(
              connect(cluster, {
                name: 'y',
                roles: ['a', 'b'],
                capabilities: ['MULTI_ROLE', 'RESERVATION_REFINEMENT'],
                principal: 'p',
              }),
            );
            return { model: { agents }, real };
          };
          fc.modelRun(setup, cmds);
          const kinds = cluster.trace.entries().map((e) => e.kind);
          exercised.applied += kinds.filter((k) => k === 'operation:apply').length;
          exercised.dropped += kinds.filter((k) => k === 'operation:drop').length;
          for (const fw of cluster.view.frameworks()) {
            for (const t of [...fw.tasks.values(), ...fw.completedTasks])
              if (t.resources.some(isReserved)) exercised.onReserved++;
          }
        },
      ),
      { numRuns: 150, seed: SEED },
    );
    console.log(`operations property test: ${JSON.stringify(exercised)}`);
    expect(exercised.applied).toBeGreaterThan(100);
    expect(exercised.dropped).toBeGreaterThan(10);
    expect(exercised.onReserved).toBeGreaterThan(3);
    expect(exercised.wholeDestroyed).toBeGreaterThan(0);
    expect(exercised.partRefused).toBeGreaterThan(0);
  });
});
