import { expect } from 'vitest';
import { canTransition, isTerminal } from '../../src/core/model/task-state.js';
import { Cluster, type AddedAgent, type AgentSpec } from '../../src/core/cluster.js';
import type { Outcome } from '../../src/core/model/errors.js';
import type { AgentFlags } from '../../src/core/agent/flags.js';
import type { ExecutorCallEnvelope, ExecutorEvent, RecoverMode } from '../../src/core/model/executor-api.js';
import type { Offer } from '../../src/core/model/records.js';
import type { Acls } from '../../src/core/model/authz.js';
import type { NetworkRule } from '../../src/core/network/network.js';
import type { Fault, FaultResult } from '../../src/core/faults/vocabulary.js';
import type { FrameworkView } from '../../src/core/view.js';
import { Connections } from '../../src/http/connections.js';
import type { OperatorCall, OperatorEvent, OperatorValue } from '../../src/core/model/operator-types.js';
import {
  add,
  allocate,
  format,
  parseResources,
  type Resource,
  type Resources,
} from '../../src/core/model/resources.js';
import { normaliseRanges, rangesSize } from '../../src/core/model/ranges.js';
import type {
  ExecutorSpec,
  FrameworkInfo,
  QuotaUpdate,
  ResourceOperationType,
  SchedulerCall,
  SchedulerEvent,
  Subscription,
  TaskSpec,
  TaskState,
  TaskStatus,
  WeightInfo,
} from '../../src/core/model/types.js';

export const AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';

export function resources(text: string): Resources {
  const parsed = parseResources(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

export interface TestClusterOptions {
  readonly agents?: number;
  readonly seed?: string | number;
  readonly taskLaunchDelayMs?: number;
  readonly offerTimeoutMs?: number;
  readonly networkLatencyMs?: number;
  readonly weights?: ReadonlyMap<string, number>;
  readonly acls?: Acls;
  /** The agents' flags (`customExecutors: 'await'` for executors driven by the test). */
  readonly agentFlags?: Partial<AgentFlags>;
}

/**
 * A cluster whose outbox goes to recording sinks after every input, as the
 * HTTP layer's streams get it: tests subscribe with a sink and read what
 * the framework saw. The agents added are listed in order.
 */
export class TestCluster extends Cluster {
  readonly agents: AddedAgent[] = [];
  /** The HTTP layer's own routing of outbox records, with sinks for streams. */
  readonly #connections = new Connections();

  /** SUBSCRIBE on a new connection whose events go to `sink`. */
  subscribeWith(
    sub: Subscription,
    sink: RecordingSink,
  ): { frameworkId: string; streamId: string; connectionId: string } {
    const connectionId = this.#connections.open(sink);
    return { ...this.subscribe(connectionId, sub), connectionId };
  }

  override subscribe(connectionId: string, sub: Subscription, principal?: string) {
    return this.#routed(() => super.subscribe(connectionId, sub, principal));
  }

  override call(
    frameworkId: string,
    streamId: string | undefined,
    call: SchedulerCall | { readonly type: 'UNKNOWN' },
    principal?: string,
  ): Outcome {
    return this.#routed(() => super.call(frameworkId, streamId, call, principal));
  }

  override operator(call: OperatorCall, principal?: string): Outcome<OperatorValue | undefined> {
    return this.#routed(() => super.operator(call, principal));
  }

  /** SUBSCRIBE to the operator event stream on a new connection whose events go to `sink`. */
  subscribeOperatorWith(sink: OperatorSink): string {
    const connectionId = this.#connections.open(sink);
    this.#routed(() => super.subscribeOperator(connectionId));
    return connectionId;
  }

  override disconnect(connectionId: string): void {
    this.#routed(() => super.disconnect(connectionId));
    this.#connections.forget(connectionId);
  }

  /** UPDATE_QUOTA through the operator input. */
  updateQuota(update: QuotaUpdate, principal?: string): Outcome {
    return this.operator({ type: 'UPDATE_QUOTA', ...update }, principal) as Outcome;
  }

  /** UPDATE_WEIGHTS through the operator input. */
  updateWeights(weights: readonly WeightInfo[]): Outcome {
    return this.operator({ type: 'UPDATE_WEIGHTS', weights }) as Outcome;
  }

  /** RESERVE_RESOURCES, UNRESERVE_RESOURCES, CREATE_VOLUMES or DESTROY_VOLUMES through the operator input. */
  operatorOperation(type: ResourceOperationType, agentId: string, resources: Resources): Outcome {
    const calls = {
      RESERVE: { type: 'RESERVE_RESOURCES', agentId, source: [], resources },
      UNRESERVE: { type: 'UNRESERVE_RESOURCES', agentId, resources },
      CREATE: { type: 'CREATE_VOLUMES', agentId, volumes: resources },
      DESTROY: { type: 'DESTROY_VOLUMES', agentId, volumes: resources },
    } as const;
    return this.operator(calls[type]) as Outcome;
  }

  override addAgent(spec: AgentSpec): AddedAgent {
    const agent = this.#routed(() => super.addAgent(spec));
    this.agents.push(agent);
    return agent;
  }

  override updateContainerMemoryLimit(agentId: string, containerId: string, mib: number): Outcome {
    return this.#routed(() => super.updateContainerMemoryLimit(agentId, containerId, mib));
  }

  override inject(fault: Fault): Outcome<FaultResult> {
    return this.#routed(() => super.inject(fault));
  }

  override crashAgent(agentId: string): void {
    this.#routed(() => super.crashAgent(agentId));
  }

  override restartAgent(agentId: string, recover?: RecoverMode): void {
    this.#routed(() => super.restartAgent(agentId, recover));
  }

  /** An executor's SUBSCRIBE on a new connection whose events go to `sink`; the connection id on success. */
  executorSubscribeWith(agentId: string, envelope: ExecutorCallEnvelope, sink: ExecutorSink): Outcome<string> {
    const connectionId = this.#connections.open(sink);
    const outcome = this.executorSubscribe(connectionId, agentId, envelope);
    if (!outcome.ok) this.#connections.forget(connectionId);
    return outcome.ok ? { ok: true, value: connectionId } : outcome;
  }

  override executorSubscribe(connectionId: string, agentId: string, envelope: ExecutorCallEnvelope): Outcome {
    return this.#routed(() => super.executorSubscribe(connectionId, agentId, envelope));
  }

  override executorCall(agentId: string, envelope: ExecutorCallEnvelope): Outcome {
    return this.#routed(() => super.executorCall(agentId, envelope));
  }

  override addNetworkRule(rule: NetworkRule): number {
    return this.#routed(() => super.addNetworkRule(rule));
  }

  override removeNetworkRule(ruleId: number): void {
    this.#routed(() => super.removeNetworkRule(ruleId));
  }

  override partition(a: string, b: string): void {
    this.#routed(() => super.partition(a, b));
  }

  override heal(a: string, b: string): void {
    this.#routed(() => super.heal(a, b));
  }

  override advanceTo(timeMs: number): void {
    this.#routed(() => super.advanceTo(timeMs));
  }

  #routed<T>(apply: () => T): T {
    try {
      return apply();
    } finally {
      this.#connections.deliver(this.drainOutbox());
    }
  }
}

export function makeCluster(options: TestClusterOptions = {}): TestCluster {
  const cluster = new TestCluster({
    seed: options.seed ?? 1,
    recordTrace: true,
    networkLatencyMs: options.networkLatencyMs ?? 0,
    master: {
      hostname: 'localhost',
      ip: '127.0.0.1',
      port: 5050,
      version: '1.11.0',
      taskLaunchDelayMs: options.taskLaunchDelayMs ?? 0,
      ...(options.offerTimeoutMs === undefined ? {} : { offerTimeoutMs: options.offerTimeoutMs }),
      ...(options.weights === undefined ? {} : { weights: options.weights }),
      ...(options.acls === undefined ? {} : { acls: options.acls }),
    },
  });
  for (let i = 0; i < (options.agents ?? 1); i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [{ name: 'rack', type: 'TEXT', text: `r${i + 1}` }],
      ...(options.agentFlags === undefined ? {} : { flags: options.agentFlags }),
    });
  }
  return cluster;
}

/** Two masters (the first leading) and `agents` agents of AGENT_RESOURCES, the trace recorded: failover tests. */
export function twoMasters(agents: number, seed = 11): TestCluster {
  const cluster = new TestCluster({
    seed,
    recordTrace: true,
    masters: 2,
    master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0', taskLaunchDelayMs: 0 },
  });
  for (let i = 0; i < agents; i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
  }
  return cluster;
}

/** Records what an executor's event stream receives. */
export class ExecutorSink {
  readonly events: ExecutorEvent[] = [];
  closed = false;
  send(event: ExecutorEvent): void {
    this.events.push(event);
  }
  close(): void {
    this.closed = true;
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

/** Records what an operator event stream receives. */
export class OperatorSink {
  readonly events: OperatorEvent[] = [];
  closed = false;
  send(event: OperatorEvent): void {
    this.events.push(event);
  }
  close(): void {
    this.closed = true;
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

export class RecordingSink {
  readonly events: SchedulerEvent[] = [];
  closed = false;
  send(event: SchedulerEvent): void {
    if (this.closed) throw new Error('send after close');
    this.events.push(event);
  }
  close(): void {
    this.closed = true;
  }
  of<T extends SchedulerEvent['type']>(type: T): Extract<SchedulerEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
  }
  updates(): TaskStatus[] {
    return this.of('UPDATE').map((e) => e.status);
  }
  lastOffers() {
    const offers = this.of('OFFERS');
    return offers[offers.length - 1]?.offers ?? [];
  }
}

export function frameworkInfo(extra: Partial<FrameworkInfo> = {}): FrameworkInfo {
  return {
    user: 'root',
    name: 'test',
    failoverTimeoutMs: 0,
    checkpoint: false,
    roles: [],
    capabilities: [],
    labels: [],
    ...extra,
  };
}

export function subscribe(cluster: TestCluster, info: Partial<FrameworkInfo> = {}, extra: Partial<Subscription> = {}) {
  const sink = new RecordingSink();
  const sub = cluster.subscribeWith({ info: frameworkInfo(info), suppressedRoles: [], ...extra }, sink);
  return { sink, ...sub };
}

export function commandTask(taskId: string, agentId: string, command: string, res = 'cpus:1;mem:128'): TaskSpec {
  return {
    taskId,
    name: taskId,
    agentId,
    resources: resources(res),
    command: { shell: true, value: command, arguments: [] },
    labels: [],
  };
}

export function customExecutor(executorId: string, res = 'cpus:0.1;mem:32'): ExecutorSpec {
  return {
    executorId,
    type: 'CUSTOM',
    resources: resources(res),
    command: { shell: true, value: './my-executor', arguments: [] },
  };
}

export function defaultExecutor(executorId: string, res = 'cpus:0.1;mem:32'): ExecutorSpec {
  return { executorId, type: 'DEFAULT', resources: resources(res) };
}

/** A task run by the framework's own executor rather than a command. */
export function executorTask(
  taskId: string,
  agentId: string,
  executor: ExecutorSpec,
  res = 'cpus:1;mem:128',
): TaskSpec {
  return { taskId, name: taskId, agentId, resources: resources(res), executor, labels: [] };
}

/**
 * A scheduler driving the master directly: every call goes through
 * `cluster.input`, so whatever it makes due runs before the call returns.
 */
export class TestScheduler {
  readonly #acked = new Set<string>();

  constructor(
    readonly cluster: TestCluster,
    public sink: RecordingSink,
    readonly frameworkId: string,
    public streamId: string,
    public connectionId: string,
  ) {}

  /** The master's record, while the framework is known. */
  get framework(): FrameworkView | undefined {
    return this.cluster.view.framework(this.frameworkId);
  }

  call(call: SchedulerCall): Outcome {
    return this.cluster.call(this.frameworkId, this.streamId, call);
  }

  /** Outstanding offers, as the master holds them. */
  offers(): Offer[] {
    return [...(this.framework?.offers.values() ?? [])];
  }

  firstOffer(): Offer {
    const offer = this.offers()[0];
    if (offer === undefined) throw new Error(`framework '${this.frameworkId}' holds no offer`);
    return offer;
  }

  accept(offerIds: string | readonly string[], tasks: readonly TaskSpec[], refuseMs = 0): Outcome {
    return this.call({
      type: 'ACCEPT',
      offerIds: typeof offerIds === 'string' ? [offerIds] : offerIds,
      operations: tasks.length === 0 ? [] : [{ type: 'LAUNCH', tasks }],
      filters: { refuseMs },
    });
  }

  launchGroup(offerId: string, executor: ExecutorSpec, tasks: readonly TaskSpec[], refuseMs = 0): Outcome {
    return this.call({
      type: 'ACCEPT',
      offerIds: [offerId],
      operations: [{ type: 'LAUNCH_GROUP', executor, tasks }],
      filters: { refuseMs },
    });
  }

  decline(offerIds: readonly string[], refuseMs: number): Outcome {
    return this.call({ type: 'DECLINE', offerIds, filters: { refuseMs } });
  }

  kill(taskId: string, agentId?: string): Outcome {
    return this.call({ type: 'KILL', taskId, ...(agentId === undefined ? {} : { agentId }) });
  }

  /** Acknowledges every update with a uuid, including those that the acks release. */
  acknowledgeAll(): void {
    for (;;) {
      const fresh = this.sink.updates().filter((u) => u.uuid !== undefined && !this.#acked.has(u.uuid));
      if (fresh.length === 0 || this.framework?.state !== 'subscribed') return;
      for (const u of fresh) {
        // A retried update appears more than once; acknowledge it once.
        if (this.#acked.has(u.uuid!)) continue;
        this.#acked.add(u.uuid!);
        this.call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid! });
      }
    }
  }

  /** States of a task as the framework saw them, retries counted once. */
  states(taskId: string): TaskState[] {
    const seen = new Set<string>();
    const out: TaskState[] = [];
    for (const u of this.sink.updates()) {
      if (u.taskId !== taskId) continue;
      if (u.uuid !== undefined) {
        if (seen.has(u.uuid)) continue;
        seen.add(u.uuid);
      }
      out.push(u.state);
    }
    return out;
  }

  /** Subscribes again with the same id on a new stream (failover). */
  resubscribe(info: Partial<FrameworkInfo> = {}): RecordingSink {
    const old = this.framework?.info ?? frameworkInfo();
    const sink = new RecordingSink();
    const sub = this.cluster.subscribeWith(
      { info: { ...old, ...info, id: this.frameworkId }, suppressedRoles: [] },
      sink,
    );
    this.sink = sink;
    this.streamId = sub.streamId;
    this.connectionId = sub.connectionId;
    return sink;
  }

  /** The subscription connection breaks. */
  disconnect(): void {
    this.cluster.disconnect(this.connectionId);
  }
}

export function connect(
  cluster: TestCluster,
  info: Partial<FrameworkInfo> = {},
  extra: Partial<Subscription> = {},
): TestScheduler {
  const { sink, frameworkId, streamId, connectionId } = subscribe(cluster, info, extra);
  return new TestScheduler(cluster, sink, frameworkId, streamId, connectionId);
}

/**
 * Every task's states in `updates` (as a framework saw them, in order)
 * follow the task state table, and nothing follows a terminal state;
 * reconciliation answers are skipped.
 */
export function expectLegalTransitions(updates: readonly TaskStatus[]): void {
  const last = new Map<string, TaskState>();
  for (const u of updates) {
    if (u.reason === 'REASON_RECONCILIATION') continue;
    const before = last.get(u.taskId);
    if (before !== undefined && before !== u.state && !isTerminal(before)) {
      expect(canTransition(before, u.state), `${u.taskId}: ${before} -> ${u.state}`).toBe(true);
    }
    if (before === undefined || !isTerminal(before)) last.set(u.taskId, u.state);
  }
}

/** Kinds of the trace entries, in order. */
export function traceKinds(cluster: Cluster): string[] {
  return cluster.trace.entries().map((e) => e.kind);
}

/**
 * Sums bags that must not overlap, as the offers and tasks of one agent:
 * scalars add up, but a range or a set item may be held only once. Returns
 * the sum (without allocation roles), or the first overlap found.
 */
export function sumDisjoint(bags: readonly Resources[]): { sum: Resources } | { overlap: string } {
  let sum: Resources = [];
  for (const bag of bags) {
    const plain = allocate(bag, undefined);
    for (const r of plain) {
      const held = sum.find((h) => h.name === r.name && h.role === r.role && h.type === r.type);
      if (held !== undefined && overlaps(held, r)) return { overlap: `${format([r])} overlaps ${format([held])}` };
    }
    sum = add(sum, plain);
  }
  return { sum };
}

function overlaps(a: Resource, b: Resource): boolean {
  switch (a.type) {
    case 'SCALAR':
      return false;
    case 'RANGES': {
      const both = normaliseRanges([...(a.ranges ?? []), ...(b.ranges ?? [])]);
      return rangesSize(both) < rangesSize(a.ranges ?? []) + rangesSize(b.ranges ?? []);
    }
    case 'SET':
      return (b.set ?? []).some((item) => a.set?.includes(item));
  }
}
