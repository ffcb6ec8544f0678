/**
 * Model-based property test: random sequences of scheduler calls, faults
 * (agents crashing and restarting, partitions, and network rules that
 * drop, delay, reorder or duplicate messages) and time on a small
 * cluster, with the full invariant check after every command:
 *
 *   - resources are conserved (`cluster.checkAllInvariants()`)
 *   - no resource is in two live offers: per agent, offers, live tasks and
 *     executors are disjoint and fit the agent's total
 *   - frameworks that are not subscribed hold no offers
 *   - every task's states, as its framework sees them, follow `canTransition`
 *
 * fast-check prints the seed and the shrunk command list on failure; pass
 * them back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TestCluster } from './helpers.js';
import { contains, format, type Resources } from '../../src/core/model/resources.js';
import { canTransition } from '../../src/core/model/task-state.js';
import type { Capability, TaskSpec, TaskState } from '../../src/core/model/types.js';
import {
  commandTask,
  connect,
  customExecutor,
  defaultExecutor,
  executorTask,
  makeCluster,
  type RecordingSink,
  sumDisjoint,
  type TestScheduler,
} from './helpers.js';

const COMMANDS = [
  'sleep 3',
  'sleep 0.5',
  'sleep 30',
  'exit 2',
  'echo hi',
  'true',
  'false',
  'false || echo x',
  'sleep 1 && exit 3',
  './serve --forever',
] as const;

interface Model {
  schedulers: number;
}

/** What one framework has seen: the last state of each task and the uuids already counted. */
interface Seen {
  readonly last: Map<string, TaskState>;
  readonly uuids: Set<string>;
}

class Real {
  readonly schedulers: TestScheduler[] = [];
  /** Every stream ever opened, with how far it has been read. */
  readonly streams: { frameworkId: string; sink: RecordingSink; read: number }[] = [];
  readonly seen = new Map<string, Seen>();
  readonly launched = new Map<string, string[]>();
  readonly violations: string[] = [];
  /** Network rules in force. */
  readonly rules: number[] = [];
  nextTask = 0;

  constructor(readonly cluster: TestCluster) {}

  pick(index: number): TestScheduler | undefined {
    return this.schedulers.length === 0 ? undefined : this.schedulers[index % this.schedulers.length];
  }

  track(s: TestScheduler): void {
    this.streams.push({ frameworkId: s.frameworkId, sink: s.sink, read: 0 });
  }

  /** Feeds new UPDATE events to the per-task state machines. */
  observe(): void {
    for (const stream of this.streams) {
      const seen = this.seen.get(stream.frameworkId) ?? { last: new Map(), uuids: new Set() };
      this.seen.set(stream.frameworkId, seen);
      for (const event of stream.sink.events.slice(stream.read)) {
        if (event.type !== 'UPDATE') continue;
        const { status } = event;
        // Reconciliation answers report what the master knows; they are not transitions.
        if (status.reason === 'REASON_RECONCILIATION') continue;
        if (status.uuid !== undefined) {
          if (seen.uuids.has(status.uuid)) continue;
          seen.uuids.add(status.uuid);
        }
        const from = seen.last.get(status.taskId) ?? 'TASK_STAGING';
        if (!canTransition(from, status.state)) {
          this.violations.push(`framework '${stream.frameworkId}' task '${status.taskId}': ${from} -> ${status.state}`);
        }
        seen.last.set(status.taskId, status.state);
      }
      stream.read = stream.sink.events.length;
    }
  }

  check(): void {
    this.cluster.checkAllInvariants();
    for (const agent of this.cluster.agents) {
      const held: Resources[] = [];
      for (const fw of this.cluster.view.frameworks()) {
        for (const offer of fw.offers.values()) if (offer.agentId === agent.id) held.push(offer.resources);
        for (const task of fw.tasks.values())
          if (task.agentId === agent.id && !task.resourcesRecovered) held.push(task.resources);
        for (const e of fw.executors.values()) if (e.agentId === agent.id) held.push(e.resources);
      }
      const registered = this.cluster.view.agent(agent.id);
      if (registered === undefined) continue;
      const result = sumDisjoint(held);
      if ('overlap' in result) throw new Error(`agent '${agent.id}': ${result.overlap}`);
      if (!contains(registered.info.resources, result.sum)) {
        throw new Error(
          `agent '${agent.id}': holds {${format(result.sum)}} beyond {${format(registered.info.resources)}}`,
        );
      }
    }
    for (const fw of this.cluster.view.frameworks()) {
      if (fw.state !== 'subscribed' && fw.offers.size > 0)
        throw new Error(`framework '${fw.id}' is ${fw.state} but holds offers`);
    }
    this.observe();
    expect(this.violations).toEqual([]);
  }
}

type Cmd = fc.Command<Model, Real>;

/** A command that acts on one framework, chosen by index at run time. */
abstract class OnFramework implements Cmd {
  constructor(readonly fw: number) {}
  check(m: Readonly<Model>): boolean {
    return m.schedulers > 0;
  }
  run(_m: Model, r: Real): void {
    const s = r.pick(this.fw);
    if (s !== undefined) this.act(s, r);
    r.check();
  }
  abstract act(s: TestScheduler, r: Real): void;
  abstract toString(): string;
}

class Subscribe implements Cmd {
  constructor(
    readonly capabilities: Capability[],
    readonly failoverTimeoutMs: number,
    readonly checkpoint: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.schedulers < 3;
  }
  run(m: Model, r: Real): void {
    m.schedulers++;
    const roles = this.capabilities.includes('MULTI_ROLE') ? ['a', 'b'] : [];
    const name = `fw${r.schedulers.length}`;
    const { capabilities, failoverTimeoutMs, checkpoint } = this;
    const s = connect(r.cluster, { name, capabilities, failoverTimeoutMs, roles, checkpoint });
    r.schedulers.push(s);
    r.track(s);
    r.check();
  }
  toString(): string {
    return `subscribe(${this.capabilities.join('|')}, failover ${this.failoverTimeoutMs} ms${this.checkpoint ? ', checkpoint' : ''})`;
  }
}

interface TaskPlan {
  readonly command: (typeof COMMANDS)[number];
  readonly cpusTenths: number;
  readonly memMib: number;
  readonly port: boolean;
}

class Accept extends OnFramework {
  constructor(
    fw: number,
    readonly offer: number,
    readonly how: 'LAUNCH' | 'CUSTOM' | 'GROUP',
    readonly tasks: readonly TaskPlan[],
    readonly refuseSeconds: number,
    readonly stale: boolean,
  ) {
    super(fw);
  }
  act(s: TestScheduler, r: Real): void {
    const offers = this.stale ? s.sink.of('OFFERS').flatMap((e) => e.offers) : s.offers();
    const offer = offers[this.offer % Math.max(1, offers.length)];
    if (offer === undefined) return;
    const ports = offer.resources.find((res) => res.name === 'ports')?.ranges?.[0];
    const specs = this.tasks.map((t, i): TaskSpec => {
      const taskId = `t${r.nextTask++}`;
      const port =
        t.port && ports !== undefined && ports[0] + i <= ports[1] ? `;ports:[${ports[0] + i}-${ports[0] + i}]` : '';
      const res = `cpus:${t.cpusTenths / 10};mem:${t.memMib}${port}`;
      const list = r.launched.get(s.frameworkId) ?? [];
      list.push(taskId);
      r.launched.set(s.frameworkId, list);
      return this.how === 'CUSTOM'
        ? executorTask(taskId, offer.agentId, customExecutor(`x-${s.frameworkId.slice(-4)}`), res)
        : commandTask(taskId, offer.agentId, t.command, res);
    });
    const refuseMs = this.refuseSeconds * 1000;
    if (this.how === 'GROUP') s.launchGroup(offer.id, defaultExecutor(`g${r.nextTask}`), specs, refuseMs);
    else s.accept(offer.id, specs, refuseMs);
  }
  toString(): string {
    const tasks = this.tasks.map((t) => `${t.command}@${t.cpusTenths / 10}/${t.memMib}${t.port ? '+port' : ''}`);
    return `accept(fw ${this.fw}, offer ${this.offer}${this.stale ? ' stale' : ''}, ${this.how} [${tasks.join(', ')}], refuse ${this.refuseSeconds} s)`;
  }
}

class Decline extends OnFramework {
  constructor(
    fw: number,
    readonly offer: number,
    readonly refuseSeconds: number,
  ) {
    super(fw);
  }
  act(s: TestScheduler): void {
    const offers = s.offers();
    const offer = offers[this.offer % Math.max(1, offers.length)];
    if (offer !== undefined) s.decline([offer.id], this.refuseSeconds * 1000);
  }
  toString(): string {
    return `decline(fw ${this.fw}, offer ${this.offer}, refuse ${this.refuseSeconds} s)`;
  }
}

class Kill extends OnFramework {
  constructor(
    fw: number,
    readonly task: number,
  ) {
    super(fw);
  }
  act(s: TestScheduler, r: Real): void {
    const ids = r.launched.get(s.frameworkId) ?? [];
    const taskId = ids[this.task % Math.max(1, ids.length)] ?? 'ghost';
    s.kill(taskId, s.framework?.tasks.get(taskId)?.agentId);
  }
  toString(): string {
    return `kill(fw ${this.fw}, task ${this.task})`;
  }
}

class Simple extends OnFramework {
  constructor(
    fw: number,
    readonly what:
      | 'ack'
      | 'reconcile-all'
      | 'reconcile-some'
      | 'suppress'
      | 'revive'
      | 'shutdown'
      | 'update-roles'
      | 'teardown'
      | 'disconnect'
      | 'resubscribe',
  ) {
    super(fw);
  }
  act(s: TestScheduler, r: Real): void {
    switch (this.what) {
      case 'ack':
        return s.acknowledgeAll();
      case 'reconcile-all':
        s.call({ type: 'RECONCILE', tasks: [] });
        return;
      case 'reconcile-some':
        s.call({
          type: 'RECONCILE',
          tasks: (r.launched.get(s.frameworkId) ?? []).slice(-3).map((taskId) => ({ taskId })),
        });
        return;
      case 'suppress':
        s.call({ type: 'SUPPRESS', roles: [] });
        return;
      case 'revive':
        s.call({ type: 'REVIVE', roles: [] });
        return;
      case 'shutdown': {
        const executor = [...(s.framework?.executors.values() ?? [])][0];
        if (executor !== undefined)
          s.call({ type: 'SHUTDOWN', executorId: executor.executorId, agentId: executor.agentId });
        return;
      }
      case 'update-roles': {
        const info = s.framework?.info;
        if (info === undefined || !info.capabilities.includes('MULTI_ROLE')) return;
        const roles = info.roles.length === 1 ? ['a', 'b'] : ['a'];
        s.call({ type: 'UPDATE_FRAMEWORK', subscription: { info: { ...info, roles }, suppressedRoles: [] } });
        return;
      }
      case 'teardown':
        s.call({ type: 'TEARDOWN' });
        return;
      case 'disconnect':
        return s.disconnect();
      case 'resubscribe':
        if (s.framework === undefined) return;
        s.resubscribe();
        r.track(s);
        return;
    }
  }
  toString(): string {
    return `${this.what}(fw ${this.fw})`;
  }
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  run(_m: Model, r: Real): void {
    r.cluster.advance(this.ms);
    r.check();
  }
  toString(): string {
    return `advance(${this.ms} ms)`;
  }
}

/** A fault on an agent, chosen by index at run time. */
class AgentFault implements Cmd {
  constructor(
    readonly agent: number,
    readonly what: 'crash' | 'restart' | 'partition' | 'heal',
  ) {}
  check(): boolean {
    return true;
  }
  run(_m: Model, r: Real): void {
    const { agents } = r.cluster;
    const agentId = agents[this.agent % agents.length]!.id;
    const state = r.cluster.view.agentProcessState(agentId);
    if (this.what === 'crash' && state !== 'crashed') r.cluster.crashAgent(agentId);
    if (this.what === 'restart' && state === 'crashed') r.cluster.restartAgent(agentId);
    if (this.what === 'partition') r.cluster.partition(agentId, 'master');
    if (this.what === 'heal') r.cluster.heal(agentId, 'master');
    r.check();
  }
  toString(): string {
    return `${this.what}(agent ${this.agent})`;
  }
}

/** A network rule on master <-> agent traffic: lose, delay or repeat some messages. */
class NetworkFault implements Cmd {
  constructor(
    readonly action: 'drop' | 'delay' | 'duplicate' | 'clear',
    readonly probability: number,
    readonly delayMs: number,
  ) {}
  check(): boolean {
    return true;
  }
  run(_m: Model, r: Real): void {
    if (this.action === 'clear') {
      for (const id of r.rules.splice(0)) r.cluster.removeNetworkRule(id);
    } else {
      const rule = {
        action: this.action,
        probability: this.probability,
        delayMs: this.delayMs,
        jitterMs: this.delayMs,
      };
      r.rules.push(r.cluster.addNetworkRule(rule));
    }
    r.check();
  }
  toString(): string {
    return this.action === 'clear' ? 'clear-rules' : `${this.action}(p ${this.probability}, ${this.delayMs} ms)`;
  }
}

const fwIndex = fc.nat(2);
const taskPlan = fc.record({
  command: fc.constantFrom(...COMMANDS),
  cpusTenths: fc.integer({ min: 1, max: 15 }),
  memMib: fc.integer({ min: 8, max: 512 }),
  port: fc.boolean(),
});
const subscription = fc.record({
  capabilities: fc.subarray<Capability>(['TASK_KILLING_STATE', 'PARTITION_AWARE', 'MULTI_ROLE']),
  failoverTimeoutMs: fc.constantFrom(0, 5_000, 60_000),
  checkpoint: fc.boolean(),
});

const subscribe = subscription.map(
  ({ capabilities, failoverTimeoutMs, checkpoint }) => new Subscribe(capabilities, failoverTimeoutMs, checkpoint),
);
const accept = fc
  .tuple(
    fwIndex,
    fc.nat(5),
    fc.constantFrom('LAUNCH', 'LAUNCH', 'CUSTOM', 'GROUP' as const),
    fc.array(taskPlan, { minLength: 1, maxLength: 3 }),
    fc.constantFrom(0, 1, 5, 30),
    fc.nat(9).map((n) => n === 0),
  )
  .map(([fw, offer, how, tasks, refuse, stale]) => new Accept(fw, offer, how, tasks, refuse, stale));
const decline = fc
  .tuple(fwIndex, fc.nat(5), fc.integer({ min: 0, max: 60 }))
  .map(([fw, offer, refuse]) => new Decline(fw, offer, refuse));
const kill = fc.tuple(fwIndex, fc.nat(20)).map(([fw, task]) => new Kill(fw, task));
const simple = (...what: Simple['what'][]) =>
  fc.tuple(fwIndex, fc.constantFrom(...what)).map(([fw, w]) => new Simple(fw, w));
const agentFault = fc
  .tuple(fc.nat(2), fc.constantFrom('crash', 'restart', 'restart', 'partition', 'heal', 'heal' as const))
  .map(([agent, what]) => new AgentFault(agent, what));
const networkFault = fc
  .tuple(
    fc.constantFrom('drop', 'delay', 'duplicate', 'clear', 'clear' as const),
    fc.constantFrom(0.1, 0.5, 1),
    fc.constantFrom(0, 20, 3_000),
  )
  .map(([action, p, ms]) => new NetworkFault(action, p, ms));
const advance = fc
  .oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 2_000, max: 40_000 }))
  .map((ms) => new Advance(ms));

/** Weighted so that tasks get launched, acknowledged and run, with faults now and then. */
const commands = fc.commands(
  [
    fc.oneof(
      { arbitrary: accept, weight: 5 },
      { arbitrary: simple('ack'), weight: 5 },
      { arbitrary: advance, weight: 5 },
      { arbitrary: kill, weight: 2 },
      { arbitrary: decline, weight: 2 },
      {
        arbitrary: simple('reconcile-all', 'reconcile-some', 'suppress', 'revive', 'shutdown', 'update-roles'),
        weight: 2,
      },
      { arbitrary: simple('teardown', 'disconnect', 'resubscribe'), weight: 1 },
      { arbitrary: subscribe, weight: 1 },
      { arbitrary: agentFault, weight: 1 },
      { arbitrary: networkFault, weight: 1 },
    ),
  ],
  { maxCommands: 50, size: '+1' },
);

describe('invariants under random calls, faults and time', () => {
  it('hold after every command', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.constantFrom(0, 50),
        fc.constantFrom(0, 0, 3),
        fc.array(subscription, { minLength: 1, maxLength: 3 }),
        commands,
        (agents, seed, taskLaunchDelayMs, networkLatencyMs, initial, cmds) => {
          const cluster = makeCluster({ agents, seed, taskLaunchDelayMs, networkLatencyMs });
          const setup = () => {
            const model: Model = { schedulers: 0 };
            const real = new Real(cluster);
            for (const { capabilities, failoverTimeoutMs, checkpoint } of initial) {
              new Subscribe(capabilities, failoverTimeoutMs, checkpoint).run(model, real);
            }
            return { model, real };
          };
          fc.modelRun(setup, cmds);
        },
      ),
      { numRuns: 250 },
    );
  });
});
