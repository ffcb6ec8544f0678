/**
 * A whole simulated cluster behind one port: one event loop, one seed, one
 * trace, a master and its agents on a simulated network. The methods of
 * `Cluster` are the only way in; each input runs what it made due at the
 * current instant, checks the invariants on what it touched, and returns
 * its outcome as data. Events for subscribers wait in the outbox until the
 * caller drains it. Reads go through `view`, the read model.
 *
 *   scheduler   subscribe, call, disconnect, acknowledgeRefused (for the misuse report)
 *   operators   operator (every operator call the read model cannot answer), subscribeOperator (and disconnect),
 *               updateContainerMemoryLimit (on an agent)
 *   executors   executorSubscribe, executorCall, containerExited, containerLaunchFailed (and disconnect)
 *   containers  launchNestedContainer, containerInput, waitContainer, killContainer, removeContainer
 *   cluster     addAgent
 *   faults      inject (any Fault of faults/vocabulary.ts), and its parts crashAgent, restartAgent,
 *               addNetworkRule, removeNetworkRule, partition, heal, crashMaster, restartMaster;
 *               the faults of streams, executors, tasks and the wall clock are faults/actions.ts's
 *   masters     bindMasterPort, masters (the group: seats, leader; master/group.ts)
 *   clock       advance, advanceTo
 *   output      drainOutbox, answerFirst (the next input's answer before what it made due)
 */
import { Agent } from './agent/agent.js';
import { DEFAULT_AGENT_FLAGS, type AgentFlags } from './agent/flags.js';
import type { ContainerTermination, ExecutorAuthorizer, ExecutorCallEnvelope, RecoverMode } from './model/executor-api.js';
import { AGENT_NOT_RECOVERED } from './agent/executor-calls.js';
import { NestedContainers, parentContainer, waitExecutorContainer, type NestedLaunch } from './agent/nested-containers.js';
import type { SimContext } from './network/context.js';
import { fail, ok, type Outcome } from './model/errors.js';
import type { Fault, FaultResult } from './faults/vocabulary.js';
import { FaultActions, isNodeFault } from './faults/actions.js';
import { injectMasterFault, isMasterFault, NO_LEADER } from './faults/master.js';
import { injectNetworkFault } from './faults/network.js';
import { EventLoop } from './kernel/event-loop.js';
import { checkAgents, InvariantError } from './invariants.js';
import { MASTER_NODE } from './model/messages.js';
import { Master, type MasterOptions, type Subscribed } from './master/master.js';
import { MisuseLog } from './master/misuse.js';
import { DEFAULT_ELECTION_DELAY_MS, MasterGroup } from './master/group.js';
import { Network, type NetworkRule } from './network/network.js';
import { Outbox, type ContainerRecord, type OutboxRecord } from './network/outbox.js';
import type { Attribute } from './model/types.js';
import type { Resources } from './model/resources.js';
import { Rng } from './kernel/rng.js';
import { Trace } from './kernel/trace.js';
import { Probes } from './kernel/probes.js';
import { encodeArgs, encodeValue, INPUT_KIND_PREFIX, startRecord, type InputRecord } from './input-record.js';
import { watchCondition, type Condition } from './conditions.js';
import type { ResourceOperationType, SchedulerCall, Subscription } from './model/types.js';
import type { OperatorCall, OperatorValue } from './model/operator-types.js';
import { ClusterView } from './view.js';

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
  readonly #agents = new Map<string, Agent>();
  readonly #outbox = new Outbox();
  /** Where the runtime times the core's work (runtime/metrics.ts). */
  readonly probes = new Probes();
  readonly #agentFlags = new WeakMap<Partial<AgentFlags>, AgentFlags>();
  /** Container sessions' output streams and WAIT_CONTAINER waiters, by connection, and their agent. */
  readonly #containerConnections = new Map<string, string>();
  /** Open executor streams, by connection, and the agent each is on. */
  readonly #executorConnections = new Map<string, string>();
  readonly #checkInvariants: boolean;
  readonly #faults: FaultActions;
  /** The input running now, if any. */
  #inInput: string | undefined;
  /** Told the next input's result once it is applied (`answerFirst`). */
  #answerFirst: ((result: unknown) => void) | undefined;
  /** Every input so far, when recording them. */
  readonly #inputs: InputRecord[] | undefined;
  /** Whether each input is written into the trace (`recordInputs`, kept or not), and how many were. */
  readonly #traceInputs: boolean;
  #inputCount = 0;

  constructor(options: ClusterOptions) {
    this.seed = String(options.seed ?? 0);
    this.options = options;
    const loop = new EventLoop();
    const rng = new Rng(this.seed);
    const window = options.traceWindow === undefined ? {} : { tailSize: options.traceWindow };
    const trace = new Trace(loop, { record: options.recordTrace ?? false, ...window });
    const network = new Network(loop, trace, rng.fork('network'), { latencyMs: options.networkLatencyMs ?? 0 });
    const wallClock = { stepMs: 0 };
    this.#ctx = { loop, rng, trace, network, epochMs: options.epochMs ?? DEFAULT_EPOCH_MS, wallClock, probes: this.probes };
    this.#loop = loop;
    this.#checkInvariants = options.checkInvariants ?? true;
    const inputs = options.recordInputs ?? options.recordTrace ?? false;
    this.#inputs = inputs === true ? [] : undefined;
    this.#traceInputs = inputs !== false;
    // As plain data (maps tagged), so that log lines show its fields.
    trace.append('cluster:start', JSON.parse(encodeValue(startRecord(this.seed, this.#ctx.epochMs, options))) as Record<string, unknown>);
    // One misuse log across failovers: what a framework did to the old leader still counts.
    const misuse = new MisuseLog(this.#ctx);
    this.#masters = new MasterGroup(this.#ctx, options.master, this.#outbox, {
      seed: this.seed,
      count: options.masters ?? 1,
      electionDelayMs: options.electionDelayMs ?? DEFAULT_ELECTION_DELAY_MS,
      create: (ctx, master) => new Master(ctx, master, this.#outbox, misuse),
      elected: () => {
        misuse.masterChanged();
        for (const agent of this.#agents.values()) agent.masterDetected();
      },
    });
    this.view = new ClusterView(() => this.#masters.current, this.#agents, this.#ctx, this.#masters);
    const masters = this.#masters;
    // The faults act on whichever master leads when they come.
    this.#faults = new FaultActions({
      ctx: this.#ctx,
      wallClock,
      get master() {
        return masters.current;
      },
      agents: this.#agents,
      outbox: this.#outbox,
    });
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
    return this.#input('subscribe', [connectionId, sub, principal], () => {
      const leader = this.#masters.leader;
      if (leader !== undefined) return leader.subscribe(connectionId, sub, principal);
      this.#outbox.close(connectionId, NO_LEADER);
      return { frameworkId: sub.info.id ?? '', streamId: '' };
    });
  }

  /** A scheduler call other than SUBSCRIBE; `principal` as for `subscribe`. */
  call(frameworkId: string, streamId: string | undefined, call: SchedulerCall | { readonly type: 'UNKNOWN' }, principal?: string): Outcome {
    return this.#input('call', [frameworkId, streamId, call, principal], () => this.#masters.leader?.call(frameworkId, streamId, call, principal) ?? fail('UNAVAILABLE', NO_LEADER));
  }

  /**
   * An ACKNOWLEDGE the HTTP layer refused for its uuid (missing, or not 16
   * bytes): the answer stays the layer's 400; the misuse report counts it.
   */
  acknowledgeRefused(frameworkId: string, taskId?: string, agentId?: string): void {
    this.#input('acknowledgeRefused', [frameworkId, taskId, agentId], () => {
      this.#ctx.trace.append('call:acknowledge-refused', { frameworkId, taskId, agentId });
      if (this.#master.frameworks.has(frameworkId)) this.#master.misuse.acknowledgeRefused(frameworkId, taskId, agentId);
    });
  }

  /** A subscriber's connection closed (a scheduler's, an operator's or an executor's). */
  disconnect(connectionId: string): void {
    this.#input('disconnect', [connectionId], () => {
      this.#faults.connectionClosed(connectionId);
      const containerAgent = this.#containerConnections.get(connectionId);
      if (containerAgent !== undefined) {
        this.#containerConnections.delete(connectionId);
        const nested = this.#agents.get(containerAgent)?.nested;
        if (nested?.outputClosed(connectionId) !== true) nested?.waiterClosed(connectionId);
        return;
      }
      const agentId = this.#executorConnections.get(connectionId);
      if (agentId === undefined) return this.#masters.leader?.disconnected(connectionId);
      this.#executorConnections.delete(connectionId);
      this.#agents.get(agentId)?.executorDisconnected(connectionId);
    });
  }

  // ---- inputs: executors ----

  /**
   * An executor's SUBSCRIBE on a new connection to its agent's
   * `/api/v1/executor`; on success its events follow in the outbox, first
   * SUBSCRIBED (or SHUTDOWN, for an executor being shut down).
   */
  executorSubscribe(connectionId: string, agentId: string, envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return this.#input('executorSubscribe', [connectionId, agentId, envelope, authorize], () => {
      const outcome = this.#agent(agentId).executorSubscribe(connectionId, envelope, authorize);
      if (outcome.ok) this.#executorConnections.set(connectionId, agentId);
      return outcome;
    });
  }

  /**
   * An executor's UPDATE or MESSAGE on its agent. `authorize`: with
   * executor authentication on, the check of the caller's token against
   * the executor found (for SUBSCRIBE too).
   */
  executorCall(agentId: string, envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return this.#input('executorCall', [agentId, envelope, authorize], () => this.#agent(agentId).executorCall(envelope, authorize));
  }

  // ---- inputs: containers (the agent operator API) ----

  /**
   * LAUNCH_NESTED_CONTAINER_SESSION (with `output`, the connection its
   * stdout and stderr go to) or LAUNCH_NESTED_CONTAINER (without): a
   * command in the small shell, inside a live executor's container.
   */
  launchNestedContainer(agentId: string, launch: NestedLaunch, output?: string): Outcome {
    return this.#input('launchNestedContainer', [agentId, launch, output], () => {
      const agent = this.#agent(agentId);
      if (agent.state === 'crashed') return fail('UNAVAILABLE', AGENT_NOT_RECOVERED);
      const parent = parentContainer(agent, launch.parentId);
      if (!parent.ok) return parent;
      const nested = (agent.nested ??= new NestedContainers(this.#ctx, this.#outbox));
      const outcome = nested.launch(launch, parent.value, output);
      if (outcome.ok && output !== undefined) this.#containerConnections.set(output, agentId);
      return outcome;
    });
  }

  /** The process outside the core running an external nested container (an engine exec) ended. */
  nestedContainerExited(agentId: string, containerId: string, exitStatus: number): Outcome {
    return this.#input('nestedContainerExited', [agentId, containerId, exitStatus], () => this.#nested(agentId, (n) => n.externalExited(containerId, exitStatus)));
  }

  /** ATTACH_CONTAINER_INPUT: standard input for a nested container; `undefined` ends it. */
  containerInput(agentId: string, containerId: string, data: string | undefined): Outcome {
    return this.#input('containerInput', [agentId, containerId, data], () => this.#nested(agentId, (n) => n.input(containerId, data)));
  }

  /**
   * WAIT_CONTAINER: an ended container's termination at once; for a running
   * one undefined, and the answer goes to `connectionId` in the outbox.
   */
  waitContainer(connectionId: string, agentId: string, containerId: string): Outcome<ContainerTermination | undefined> {
    return this.#input('waitContainer', [connectionId, agentId, containerId], () => {
      const outcome = this.#nested(agentId, (n) => (n.has(containerId) ? n.wait(connectionId, containerId) : waitExecutorContainer(this.#agent(agentId), n, connectionId, containerId)));
      if (outcome.ok && outcome.value === undefined) this.#containerConnections.set(connectionId, agentId);
      return outcome;
    });
  }

  /** KILL_CONTAINER: a signal to a nested container. */
  killContainer(agentId: string, containerId: string, signal: number): Outcome {
    return this.#input('killContainer', [agentId, containerId, signal], () => this.#nested(agentId, (n) => n.kill(containerId, signal)));
  }

  /** REMOVE_CONTAINER: forgets an ended nested container. */
  removeContainer(agentId: string, containerId: string): Outcome {
    return this.#input('removeContainer', [agentId, containerId], () => this.#nested(agentId, (n) => n.remove(containerId)));
  }

  /** The process of a spawned executor exited, with its wait(2) status. */
  containerExited(agentId: string, containerId: string, waitStatus: number): void {
    this.#input('containerExited', [agentId, containerId, waitStatus], () => this.#agent(agentId).containerExited(containerId, waitStatus));
  }

  /** The process of a spawned executor could not be started (its user, say); `message` is the agent's reason. */
  containerLaunchFailed(agentId: string, containerId: string, message: string): void {
    this.#input('containerLaunchFailed', [agentId, containerId, message], () => this.#agent(agentId).containerLaunchFailed(containerId, message));
  }

  // ---- inputs: operators ----

  /**
   * A master operator call that changes the cluster or reads what only the
   * core knows; `principal`: the one the request authenticated as, if
   * authentication is on (the ACLs decide TEARDOWN and UPDATE_QUOTA by it).
   */
  operator(call: OperatorCall, principal?: string): Outcome<OperatorValue | undefined> {
    return this.#input('operator', [call, principal], () => this.#masters.leader?.operator(call, principal) ?? fail('UNAVAILABLE', NO_LEADER));
  }

  /**
   * UPDATE_CONTAINER_MEMORY_LIMIT on an agent: both memory files of a
   * running task container set to `mib` MiB (positive and finite, checked
   * by the caller), until the agent computes them again (agent/cgroups.ts).
   * Nothing the master books changes.
   */
  updateContainerMemoryLimit(agentId: string, containerId: string, mib: number): Outcome {
    return this.#input('updateContainerMemoryLimit', [agentId, containerId, mib], () => {
      const agent = this.#agent(agentId);
      if (agent.state === 'crashed') return fail('UNAVAILABLE', 'Agent has not finished recovery');
      return agent.cgroups.updateMemoryLimit(containerId, mib);
    });
  }

  /** SUBSCRIBE to the operator event stream on a new connection: SUBSCRIBED, then events and heartbeats. */
  subscribeOperator(connectionId: string): void {
    this.#input('subscribeOperator', [connectionId], () => {
      if (this.#masters.leader === undefined) this.#outbox.close(connectionId, NO_LEADER);
      else this.#masters.leader.subscribeOperator(connectionId);
    });
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
    return this.#input('addAgent', [spec], () => {
      const { flags, ...machine } = spec;
      const config = { ...machine, id: this.#master.ids.agent(), flags: this.#flags(flags) };
      const agent = new Agent(this.#ctx, config, this.#outbox);
      this.#agents.set(agent.id, agent);
      this.#ctx.network.attach(agent);
      agent.start();
      return { id: agent.id, pid: agent.pid };
    });
  }

  /**
   * Applies a fault. A node it names that does not exist is NOT_FOUND (so
   * is a framework, executor, task or container) and changes nothing; one
   * applied appears in the trace as `fault:<type>` with its parameters.
   */
  inject(fault: Fault): Outcome<FaultResult> {
    return this.#input('inject', [fault], () => this.#inject(fault));
  }

  /** A fault applied: the inputs it is made of run as parts of it. */
  #inject(fault: Fault): Outcome<FaultResult> {
    if (isMasterFault(fault)) {
      const outcome = injectMasterFault(this, this.#masters, fault);
      const { type, ...parameters } = fault;
      if (outcome.ok) this.#ctx.trace.append(`fault:${type}`, { ...parameters, master: outcome.value.master });
      return outcome;
    }
    if (isNodeFault(fault)) return this.#faults.apply(fault);
    return injectNetworkFault(this, this.#ctx.trace, fault);
  }

  /** Whether an agent of this id was ever added (a crashed one too). */
  hasAgent(agentId: string): boolean {
    return this.#agents.has(agentId);
  }

  /** A master process dies (the leader when no index is given); see master/group.ts. */
  crashMaster(index?: number): void {
    this.#input('crashMaster', [index], () => {
      const target = index ?? this.#masters.leaderIndex();
      if (target !== undefined) this.#masters.crash(target);
    });
  }

  /** A master process that is down starts again, as a standby contender. */
  restartMaster(index: number): void {
    this.#input('restartMaster', [index], () => this.#masters.restart(index));
  }

  /** The agent process dies; its connection to the master breaks. An agent not running is left as it is. */
  crashAgent(agentId: string): void {
    this.#input('crashAgent', [agentId], () => {
      const agent = this.#agent(agentId);
      if (agent.state === 'crashed') return;
      agent.crash();
      this.#ctx.network.setUp(agentId, false);
      if (!this.#ctx.network.isCut(agentId, MASTER_NODE)) {
        this.#ctx.network.send(agentId, MASTER_NODE, { type: 'EXITED', node: agentId });
      }
    });
  }

  /** The agent process starts again from its checkpoint (see `Agent.restart` for the recover modes); a running one is left as it is. */
  restartAgent(agentId: string, recover: RecoverMode = 'reconnect'): void {
    this.#input('restartAgent', [agentId, recover], () => {
      const agent = this.#agent(agentId);
      if (agent.state !== 'crashed') return;
      this.#ctx.network.setUp(agentId, true);
      agent.restart(recover);
    });
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
    return this.#inputs ?? [];
  }

  /** Whether inputs are kept (`recordInputs: true`), so the cluster can be rebuilt. */
  get recordsInputs(): boolean {
    return this.#inputs !== undefined;
  }

  /** Whether inputs are written into the trace (`recordInputs`, kept or not), so that it replays. */
  get tracesInputs(): boolean {
    return this.#traceInputs;
  }

  /** Inputs taken so far while writing them into the trace (kept or not). */
  get inputCount(): number {
    return this.#inputCount;
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
    this.#answerFirst = hook;
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
    if (leader !== undefined) this.#check(checkAgents(leader, this.#agentTotals(), 'full'));
  }

  // ---- internals ----

  /**
   * Every input goes through here by its method's name and arguments: it is
   * recorded (when recording), applied, what it made due runs, and the
   * invariants are checked. A fault (`inject`) is one input whose parts
   * run inside it.
   */
  #input<K extends keyof Cluster & string, T>(name: K, args: InputArgs<K>, apply: () => T): T {
    if (this.#inInput !== undefined) {
      if (this.#inInput === 'inject') return apply();
      throw new Error('cluster: an input started while another was running');
    }
    this.#inInput = name;
    try {
      this.view.settleReads();
      if (this.#traceInputs) this.#record(name, args);
      const result = apply();
      const first = this.#answerFirst;
      this.#answerFirst = undefined;
      first?.(result);
      this.#loop.runDue();
      const leader = this.#masters.leader;
      leader?.afterInput();
      if (this.#checkInvariants && leader !== undefined) this.#check(checkAgents(leader, this.#agentTotals(), 'touched'));
      return result;
    } finally {
      this.#inInput = undefined;
    }
  }

  #record(name: string, args: readonly unknown[]): void {
    this.#inputCount++;
    this.#inputs?.push({ name, args, timeMs: this.#ctx.loop.now() });
    this.#ctx.trace.appendText(INPUT_KIND_PREFIX + name, encodeArgs(args));
  }

  #check(failure: string | undefined): void {
    if (failure !== undefined) throw new InvariantError(this.seed, this.#loop.now(), failure);
  }

  /**
   * Each agent's total as the master knows it: operations change it on the
   * master first, and the agent follows when their message arrives.
   */
  #agentTotals(): (agentId: string) => Resources | undefined {
    return (agentId) => {
      const record = this.#master.agents.get(agentId);
      // A gone or unreachable agent is out of the cluster: nothing of it may be held or counted.
      if (record?.state === 'gone' || record?.state === 'unreachable') return [];
      return record?.info.resources ?? this.#agents.get(agentId)?.config.resources;
    };
  }

  /** One flags object for all the agents given the same flags: a large cluster has many agents. */
  #flags(flags: Partial<AgentFlags> | undefined): AgentFlags {
    if (flags === undefined) return DEFAULT_AGENT_FLAGS;
    let full = this.#agentFlags.get(flags);
    if (full === undefined) this.#agentFlags.set(flags, (full = { ...DEFAULT_AGENT_FLAGS, ...flags }));
    return full;
  }

  /** A call on an agent's nested containers; an agent down answers as upstream's recovering one. */
  #nested<T>(agentId: string, call: (nested: NestedContainers) => Outcome<T>): Outcome<T> {
    const agent = this.#agent(agentId);
    if (agent.state === 'crashed') return fail('UNAVAILABLE', AGENT_NOT_RECOVERED);
    return call((agent.nested ??= new NestedContainers(this.#ctx, this.#outbox)));
  }

  #agent(agentId: string): Agent {
    const agent = this.#agents.get(agentId);
    if (agent === undefined) throw new Error(`cluster: no agent '${agentId}'`);
    return agent;
  }
}

/** The arguments of the input `K`: the method's own, in order, so that a replay can call it with them. */
type InputArgs<K extends keyof Cluster> = Cluster[K] extends (...args: infer P) => unknown ? Readonly<P> : never;
