/**
 * A whole simulated cluster behind one port: one event loop, one seed, one
 * trace, a master and its agents on a simulated network. The methods of
 * `Cluster` are the only way in; each input runs what it made due at the
 * current instant, checks the invariants on what it touched, and returns
 * its outcome as data. Events for subscribers wait in the outbox until the
 * caller drains it. Reads go through `view`, the read model. The bodies
 * behind the inputs: cluster-agents.ts (agents, executors, containers),
 * cluster-masters.ts (the leader's), faults/inject.ts; the gate every
 * input goes through, input-gate.ts; how the parts are built, cluster-parts.ts.
 *
 *   scheduler   subscribe, call, disconnect, acknowledgeRefused (for the misuse report)
 *   operators   operator (every operator call the read model cannot answer), subscribeOperator (and disconnect),
 *               updateContainerMemoryLimit (on an agent)
 *   executors   executorSubscribe, executorCall, containerExited, containerLaunchFailed (and disconnect)
 *   containers  launchNestedContainer, attachContainerOutput, containerInput, waitContainer, killContainer, removeContainer
 *   cluster     addAgent
 *   faults      inject (any Fault of faults/vocabulary.ts), and its parts crashAgent, restartAgent,
 *               addNetworkRule, removeNetworkRule, partition, heal, crashMaster, restartMaster;
 *               the faults of streams, executors, tasks and the wall clock are faults/actions.ts's
 *   masters     bindMasterPort, masters (the group: seats, leader; master/group.ts)
 *   clock       advance, advanceTo
 *   output      drainOutbox, answerFirst (the next input's answer before what it made due)
 */
import type {
  ContainerTermination,
  ExecutorAuthorizer,
  ExecutorCallEnvelope,
  RecoverMode,
} from './model/executor-api.js';
import type { NestedLaunch } from './agent/nested-containers.js';
import type { SimContext } from './network/context.js';
import type { Outcome } from './model/errors.js';
import type { Fault, FaultResult } from './faults/vocabulary.js';
import type { FaultActions } from './faults/actions.js';
import { injectFault } from './faults/inject.js';
import type { AgentFaultTarget } from './faults/agents.js';
import type { EventLoop } from './kernel/event-loop.js';
import { assertInvariants } from './invariants.js';
import type { Master, Subscribed } from './master/master.js';
import type { MasterGroup } from './master/group.js';
import type { NetworkRule } from './network/network.js';
import { Outbox, type ContainerRecord, type OutboxRecord } from './network/outbox.js';
import type { Trace } from './kernel/trace.js';
import { Probes } from './kernel/probes.js';
import type { InputRecord } from './input-record.js';
import type { InputGate } from './input-gate.js';
import { watchCondition, type Condition } from './conditions.js';
import type { Subscription } from './model/types.js';
import type { OperatorCall, OperatorValue } from './model/operator-types.js';
import type { ClusterView } from './view.js';
import type { ClusterAgents } from './cluster-agents.js';
import { assembleCluster } from './cluster-parts.js';
import { type AnySchedulerCall, MasterInputs } from './cluster-masters.js';
import { DEFAULT_EPOCH_MS, type AddedAgent, type AgentSpec, type ClusterOptions } from './cluster-options.js';

export { DEFAULT_EPOCH_MS, type AddedAgent, type AgentSpec, type ClusterOptions };

export class Cluster {
  readonly seed: string;
  /** What the cluster was built with: the same options and the recorded inputs build it again. */
  readonly options: ClusterOptions;
  readonly view: ClusterView;
  readonly #ctx: SimContext;
  readonly #loop: EventLoop;
  readonly #masters: MasterGroup;
  readonly #outbox = new Outbox();
  /** Where the runtime times the core's work (runtime/metrics.ts). */
  readonly probes = new Probes();
  readonly #agents: ClusterAgents;
  readonly #faults: FaultActions;
  /** The masters' side of the inputs, each to the leader. */
  readonly #onMasters: MasterInputs;
  /** Every input goes through it (`#input`). */
  readonly #gate: InputGate;

  constructor(options: ClusterOptions) {
    this.seed = String(options.seed ?? 0);
    this.options = options;
    const parts = assembleCluster(options, this.seed, this.#outbox, this.probes);
    this.#agents = parts.agents;
    this.#ctx = parts.ctx;
    this.#loop = parts.ctx.loop;
    this.#masters = parts.masters;
    this.#onMasters = new MasterInputs(parts.masters, this.#outbox, parts.ctx.trace);
    this.view = parts.view;
    this.#faults = parts.faults;
    this.#gate = parts.gate;
  }

  /** The leading master, or the one that led last while an election is on. */
  get #master(): Master {
    return this.#masters.current;
  }

  get trace(): Trace {
    return this.#ctx.trace;
  }

  get epochMs(): number {
    return this.#ctx.epochMs;
  }

  /** Cluster time, in milliseconds since the cluster started. */
  now(): number {
    return this.#ctx.loop.now();
  }

  /** Whether a framework's event stream is stalled by a fault (`stall_heartbeats`): what it is sent waits. */
  streamStalled(frameworkId: string): boolean {
    return this.#faults.stalled(frameworkId);
  }

  /** When the next timer falls due, or undefined when nothing is scheduled. */
  nextDueMs(): number | undefined {
    return this.#loop.nextDueMs();
  }

  // ---- inputs: schedulers ----

  /**
   * SUBSCRIBE on a new connection; a refusal (an invalid FrameworkInfo,
   * roles the ACLs refuse) is an ERROR and a close in the outbox.
   * `principal`: the one the request authenticated as, if authentication is on.
   */
  subscribe(connectionId: string, sub: Subscription, principal?: string): Subscribed {
    return this.#input('subscribe', [connectionId, sub, principal], () =>
      this.#onMasters.subscribe(connectionId, sub, principal),
    );
  }

  /** A scheduler call other than SUBSCRIBE; `principal` as for `subscribe`. */
  call(frameworkId: string, streamId: string | undefined, call: AnySchedulerCall, principal?: string): Outcome {
    return this.#input('call', [frameworkId, streamId, call, principal], () =>
      this.#onMasters.call(frameworkId, streamId, call, principal),
    );
  }

  /**
   * An ACKNOWLEDGE the HTTP layer refused for its uuid (missing, or not 16
   * bytes): the answer stays the layer's 400; the misuse report counts it.
   */
  acknowledgeRefused(frameworkId: string, taskId?: string, agentId?: string): void {
    this.#input('acknowledgeRefused', [frameworkId, taskId, agentId], () =>
      this.#onMasters.acknowledgeRefused(frameworkId, taskId, agentId),
    );
  }

  /** A subscriber's connection closed (a scheduler's, an operator's or an executor's). */
  disconnect(connectionId: string): void {
    this.#input('disconnect', [connectionId], () => {
      this.#faults.connectionClosed(connectionId);
      if (!this.#agents.disconnected(connectionId)) this.#masters.leader?.disconnected(connectionId);
    });
  }

  // ---- inputs: executors ----

  /**
   * An executor's SUBSCRIBE on a new connection to its agent's
   * `/api/v1/executor`; on success its events follow in the outbox, first
   * SUBSCRIBED (or SHUTDOWN, for an executor being shut down).
   */
  executorSubscribe(
    connectionId: string,
    agentId: string,
    envelope: ExecutorCallEnvelope,
    authorize?: ExecutorAuthorizer,
  ): Outcome {
    return this.#input('executorSubscribe', [connectionId, agentId, envelope, authorize], () =>
      this.#agents.executorSubscribe(connectionId, agentId, envelope, authorize),
    );
  }

  /**
   * An executor's UPDATE or MESSAGE on its agent. `authorize`: with
   * executor authentication on, the check of the caller's token against
   * the executor found (for SUBSCRIBE too).
   */
  executorCall(agentId: string, envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return this.#input('executorCall', [agentId, envelope, authorize], () =>
      this.#agents.get(agentId).executorCall(envelope, authorize),
    );
  }

  // ---- inputs: containers (the agent operator API) ----

  /**
   * LAUNCH_NESTED_CONTAINER_SESSION (with `output`, the connection its
   * stdout and stderr go to) or LAUNCH_NESTED_CONTAINER (without): a
   * command in the small shell, inside a live executor's container.
   */
  launchNestedContainer(agentId: string, launch: NestedLaunch, output?: string): Outcome {
    return this.#input('launchNestedContainer', [agentId, launch, output], () =>
      this.#agents.launchNested(agentId, launch, output),
    );
  }

  /** ATTACH_CONTAINER_OUTPUT: `connectionId` hears a running nested container's output until it ends. */
  attachContainerOutput(agentId: string, containerId: string, connectionId: string): Outcome {
    return this.#input('attachContainerOutput', [agentId, containerId, connectionId], () =>
      this.#agents.attachOutput(agentId, containerId, connectionId),
    );
  }

  /** The process outside the core running an external nested container (an engine exec) ended. */
  nestedContainerExited(agentId: string, containerId: string, exitStatus: number): Outcome {
    return this.#input('nestedContainerExited', [agentId, containerId, exitStatus], () =>
      this.#agents.nested(agentId, (n) => n.externalExited(containerId, exitStatus)),
    );
  }

  /** ATTACH_CONTAINER_INPUT: standard input for a nested container; `undefined` ends it. */
  containerInput(agentId: string, containerId: string, data: string | undefined): Outcome {
    return this.#input('containerInput', [agentId, containerId, data], () =>
      this.#agents.nested(agentId, (n) => n.input(containerId, data)),
    );
  }

  /**
   * WAIT_CONTAINER: an ended container's termination at once; for a running
   * one undefined, and the answer goes to `connectionId` in the outbox.
   */
  waitContainer(connectionId: string, agentId: string, containerId: string): Outcome<ContainerTermination | undefined> {
    return this.#input('waitContainer', [connectionId, agentId, containerId], () =>
      this.#agents.wait(connectionId, agentId, containerId),
    );
  }

  /** KILL_CONTAINER: a signal to a nested container. */
  killContainer(agentId: string, containerId: string, signal: number): Outcome {
    return this.#input('killContainer', [agentId, containerId, signal], () =>
      this.#agents.nested(agentId, (n) => n.kill(containerId, signal)),
    );
  }

  /** REMOVE_CONTAINER: forgets an ended nested container. */
  removeContainer(agentId: string, containerId: string): Outcome {
    return this.#input('removeContainer', [agentId, containerId], () =>
      this.#agents.nested(agentId, (n) => n.remove(containerId)),
    );
  }

  /** The process of a spawned executor exited, with its wait(2) status. */
  containerExited(agentId: string, containerId: string, waitStatus: number): void {
    this.#input('containerExited', [agentId, containerId, waitStatus], () =>
      this.#agents.get(agentId).containerExited(containerId, waitStatus),
    );
  }

  /** The process of a spawned executor could not be started (its user, say); `message` is the agent's reason. */
  containerLaunchFailed(agentId: string, containerId: string, message: string): void {
    this.#input('containerLaunchFailed', [agentId, containerId, message], () =>
      this.#agents.get(agentId).containerLaunchFailed(containerId, message),
    );
  }

  // ---- inputs: operators ----

  /**
   * A master operator call that changes the cluster or reads what only the
   * core knows; `principal`: the one the request authenticated as, if
   * authentication is on (the ACLs decide TEARDOWN and UPDATE_QUOTA by it).
   */
  operator(call: OperatorCall, principal?: string): Outcome<OperatorValue | undefined> {
    return this.#input('operator', [call, principal], () => this.#onMasters.operator(call, principal));
  }

  /**
   * UPDATE_CONTAINER_MEMORY_LIMIT on an agent: both memory files of a
   * running task container set to `mib` MiB (positive and finite, checked
   * by the caller), until the agent computes them again (agent/cgroups.ts).
   * Nothing the master books changes.
   */
  updateContainerMemoryLimit(agentId: string, containerId: string, mib: number): Outcome {
    return this.#input('updateContainerMemoryLimit', [agentId, containerId, mib], () =>
      this.#agents.updateMemoryLimit(agentId, containerId, mib),
    );
  }

  /** SUBSCRIBE to the operator event stream on a new connection: SUBSCRIBED, then events and heartbeats. */
  subscribeOperator(connectionId: string): void {
    this.#input('subscribeOperator', [connectionId], () => this.#onMasters.subscribeOperator(connectionId));
  }

  // ---- inputs: the cluster and its faults ----

  /** Master `index`'s listener is bound: its port goes into its MasterInfo and pid. */
  bindMasterPort(port: number, index = 0): void {
    this.#input('bindMasterPort', [port, index], () => this.#masters.bindPort(index, port));
  }

  /** The masters: their seats (index, port, state) and which one leads. */
  get masters(): Pick<MasterGroup, 'seats' | 'leaderIndex'> {
    return this.#masters;
  }

  /** Boots an agent; with no network latency it is registered when this returns. */
  addAgent(spec: AgentSpec): AddedAgent {
    return this.#input('addAgent', [spec], () => this.#agents.add(spec, this.#master.ids.agent()));
  }

  /**
   * Applies a fault. A node it names that does not exist is NOT_FOUND (so
   * is a framework, executor, task or container) and changes nothing; one
   * applied appears in the trace as `fault:<type>` with its parameters.
   */
  inject(fault: Fault): Outcome<FaultResult> {
    // The inputs a fault is made of run as parts of this one.
    return this.#input('inject', [fault], () =>
      injectFault(this, this.#agentFaultTarget(), this.#masters, this.#faults, this.trace, fault),
    );
  }

  /** What the faults that add and remove agents act on. */
  #agentFaultTarget(): AgentFaultTarget {
    return { agents: this.#agents.all, leader: this.#masters.leader, addAgent: (spec) => this.addAgent(spec) };
  }

  /** Whether an agent of this id was ever added (a crashed one too). */
  hasAgent(agentId: string): boolean {
    return this.#agents.all.has(agentId);
  }

  /** A master process dies (the leader when no index is given); see master/group.ts. */
  crashMaster(index?: number): void {
    this.#input('crashMaster', [index], () => this.#onMasters.crash(index));
  }

  /** A master process that is down starts again, as a standby contender. */
  restartMaster(index: number): void {
    this.#input('restartMaster', [index], () => this.#masters.restart(index));
  }

  /** The agent process dies; its connection to the master breaks. An agent not running is left as it is. */
  crashAgent(agentId: string): void {
    this.#input('crashAgent', [agentId], () => this.#agents.crash(agentId));
  }

  /** The agent process starts again from its checkpoint (see `Agent.restart` for the recover modes); a running one is left as it is. */
  restartAgent(agentId: string, recover: RecoverMode = 'reconnect'): void {
    this.#input('restartAgent', [agentId, recover], () => this.#agents.restart(agentId, recover));
  }

  addNetworkRule(rule: NetworkRule): number {
    return this.#input('addNetworkRule', [rule], () => this.#ctx.network.addRule(rule));
  }

  removeNetworkRule(ruleId: number): void {
    this.#input('removeNetworkRule', [ruleId], () => this.#ctx.network.removeRule(ruleId));
  }

  /** Messages between two nodes are lost both ways until `heal`. */
  partition(a: string, b: string): void {
    this.#input('partition', [a, b], () => this.#ctx.network.cut(a, b));
  }

  heal(a: string, b: string): void {
    this.#input('heal', [a, b], () => this.#ctx.network.heal(a, b));
  }

  // ---- inputs: the clock ----

  /** Moves virtual time forward by `ms`, running every timer on the way. */
  advance(ms: number): void {
    this.advanceTo(this.#loop.now() + ms);
  }

  /** Moves virtual time to `timeMs` (never backwards). */
  advanceTo(timeMs: number): void {
    this.#input('advanceTo', [timeMs], () => this.#loop.runUntil(timeMs));
  }

  /**
   * Runs the cluster until it is idle: no timer left but heartbeats, pings
   * and retries waiting for an answer from outside (`BACKGROUND_TIMERS`),
   * or until `untilMs`. True when idle, the clock at the last timer run.
   */
  runUntilIdle(untilMs: number): boolean {
    return this.#input('runUntilIdle', [untilMs], () => this.#loop.runUntilQuiet(Math.max(untilMs, this.now())));
  }

  /**
   * Runs the cluster until `condition` holds at the end of an instant
   * (true, the clock there) or until `untilMs` (false). Conditions are
   * data (conditions.ts), evaluated over the read model.
   */
  runUntil(condition: Condition, untilMs: number): boolean {
    return this.#input('runUntil', [condition, untilMs], () => {
      const watch = watchCondition(condition, this.view, this.#ctx.trace);
      try {
        return this.#loop.runUntilHolds(Math.max(untilMs, this.now()), watch.holds);
      } finally {
        watch.stop();
      }
    });
  }

  // ---- replay ----

  /** Every input so far, in order, when recording them (`recordInputs`); else empty. */
  inputs(): readonly InputRecord[] {
    return this.#gate.kept ?? [];
  }

  /** Whether inputs are kept (`recordInputs: true`), so the cluster can be rebuilt. */
  get recordsInputs(): boolean {
    return this.#gate.kept !== undefined;
  }

  /** Whether inputs are written into the trace (`recordInputs`, kept or not), so that it replays. */
  get tracesInputs(): boolean {
    return this.#gate.traces;
  }

  /** Inputs taken so far while writing them into the trace (kept or not). */
  get inputCount(): number {
    return this.#gate.count;
  }

  // ---- output ----

  /**
   * The next input hands its result to `hook` as soon as it is applied,
   * before what it made due at this instant runs; `undefined` takes a
   * hook back. The runtime answers a caller first, as upstream's master
   * sends SUBSCRIBED before its allocator makes offers: the allocation
   * a subscription starts covers every agent. It changes no state, only
   * when the caller hears: the trace is the same either way.
   */
  answerFirst(hook: ((result: unknown) => void) | undefined): void {
    this.#gate.answerFirst(hook);
  }

  /** Events and closes for subscribers' connections since the last drain. */
  drainOutbox(): OutboxRecord[] {
    return this.#outbox.drain();
  }

  /** Executor containers to start or destroy since the last drain (spawn mode). */
  drainContainers(): ContainerRecord[] {
    return this.#outbox.drainContainers();
  }

  /**
   * The full check: every book recomputed from the records, every agent.
   * Tests and scenarios run it; inputs run the check of what they touched.
   */
  checkAllInvariants(): void {
    const leader = this.#masters.leader;
    if (leader === undefined) return;
    assertInvariants(leader, this.#master, this.#agents.all, 'full', this.seed, this.#loop.now());
  }

  // ---- internals ----

  /**
   * Every input goes through here by its method's name and arguments: it is
   * recorded (when recording), applied, what it made due runs, and the
   * invariants are checked (input-gate.ts). A fault (`inject`) is one
   * input whose parts run inside it.
   */
  #input<K extends keyof Cluster & string, T>(name: K, args: InputArgs<K>, apply: () => T): T {
    return this.#gate.run(name, args, apply);
  }
}

/** The arguments of the input `K`: the method's own, in order, so that a replay can call it with them. */
type InputArgs<K extends keyof Cluster> = Cluster[K] extends (...args: infer P) => unknown ? Readonly<P> : never;
