/**
 * The master: frameworks and their subscriptions, agents, offers and the
 * master's view of tasks. Calls from schedulers arrive through `subscribe`,
 * `disconnected` and `call`; agents reach it through `MasterLink`. The
 * call handlers live in `calls.ts` and `accept.ts`; this file keeps the
 * lifecycles (framework, offer, task) and the one place they change.
 */
import type { Agent, MasterLink } from '../agent/agent.js';
import { Allocator, DEFAULT_ALLOCATION_INTERVAL_MS, type OfferDecision } from '../allocator/allocator.js';
import { wallTimeMs, type SimContext } from '../context.js';
import { done, fail, type Outcome } from '../errors.js';
import { IdGenerator } from '../ids.js';
import type { Rng } from '../rng.js';
import { allocate as withAllocationRole, type Resources } from '../resources.js';
import { isTerminal, transition } from '../task-state.js';
import type {
  EventSink,
  MasterInfo,
  OfferView,
  SchedulerCall,
  SchedulerEvent,
  Subscription,
  TaskState,
  TaskStatus,
} from '../types.js';
import { dispatch } from './calls.js';
import { Framework, refOf, type Offer, type Task, type TaskRef } from './framework.js';
import { immutableFieldError, subscriptionError } from './validation.js';

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 15_000;
export const MAX_COMPLETED_FRAMEWORKS = 50;

export interface MasterOptions {
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly version: string;
  readonly heartbeatIntervalMs?: number;
  readonly allocationIntervalMs?: number;
  /** `--offer_timeout`; offers never time out when unset. */
  readonly offerTimeoutMs?: number;
  /** Time between accepting a launch and handing it to the agent. */
  readonly taskLaunchDelayMs?: number;
}

export interface AgentRecord {
  readonly agent: Agent;
  readonly registeredTimeMs: number;
  active: boolean;
}

export interface Subscribed {
  readonly frameworkId: string;
  readonly streamId: string;
}

export class Master implements MasterLink {
  readonly info: MasterInfo;
  readonly ids: IdGenerator;
  readonly frameworks = new Map<string, Framework>();
  readonly completedFrameworks: Framework[] = [];
  readonly agents = new Map<string, AgentRecord>();
  readonly allocator: Allocator;
  readonly startTimeMs: number;
  readonly heartbeatIntervalMs: number;
  readonly #streamIds: Rng;

  constructor(
    readonly ctx: SimContext,
    readonly options: MasterOptions,
  ) {
    const rng = ctx.rng.fork('master');
    const id = rng.uuid();
    this.#streamIds = ctx.rng.fork('stream-ids');
    this.info = {
      id,
      ip: options.ip,
      port: options.port,
      hostname: options.hostname,
      pid: `master@${options.ip}:${options.port}`,
      version: options.version,
    };
    this.ids = new IdGenerator(id);
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.startTimeMs = wallTimeMs(ctx);
    this.allocator = new Allocator(
      ctx,
      (decisions) => this.#onDecisions(decisions),
      options.allocationIntervalMs ?? DEFAULT_ALLOCATION_INTERVAL_MS,
    );
  }

  // ---- agents ----

  addAgent(agent: Agent): void {
    const { config } = agent;
    this.agents.set(agent.id, { agent, registeredTimeMs: wallTimeMs(this.ctx), active: true });
    this.ctx.trace.append('agent:add', { agentId: agent.id, hostname: config.hostname, port: config.port });
    this.allocator.addAgent(agent.id, config.resources, { hostname: config.hostname, attributes: config.attributes });
  }

  /** Sends a message to an agent over the simulated network. */
  toAgent(agentId: string, label: string, deliver: (agent: Agent) => void): boolean {
    const record = this.agents.get(agentId);
    if (record === undefined) return false;
    this.ctx.network.send('master', agentId, label, () => deliver(record.agent));
    return true;
  }

  // ---- subscription lifecycle ----

  /**
   * A SUBSCRIBE that passed the wire checks. Problems found here reach the
   * client as an ERROR event on the stream, which is then closed.
   */
  subscribe(sub: Subscription, sink: EventSink): Subscribed {
    const streamId = this.#streamIds.uuid();
    const requestedId = sub.info.id;
    this.ctx.trace.append('input:subscribe', { frameworkId: requestedId, name: sub.info.name, streamId });
    const existing = requestedId === undefined ? undefined : this.frameworks.get(requestedId);
    const error =
      subscriptionError(sub) ??
      (existing !== undefined && existing.info.principal !== sub.info.principal
        ? immutableFieldError(existing.info, { ...sub.info, user: existing.info.user, checkpoint: existing.info.checkpoint })
        : undefined) ??
      (requestedId !== undefined && this.completedFrameworks.some((f) => f.id === requestedId)
        ? 'Framework has been removed'
        : undefined);
    if (error !== undefined) {
      this.ctx.trace.append('framework:subscribe-error', { frameworkId: requestedId, message: error });
      sink.send({ type: 'ERROR', message: error });
      sink.close();
      return { frameworkId: requestedId ?? '', streamId };
    }
    const framework = existing === undefined ? this.#addFramework(sub) : this.#failover(existing, sub);
    framework.sink = sink;
    framework.streamId = streamId;
    this.ctx.trace.append('framework:subscribed', { frameworkId: framework.id, streamId, failover: existing !== undefined });
    framework.send({
      type: 'SUBSCRIBED',
      frameworkId: framework.id,
      heartbeatIntervalSeconds: this.heartbeatIntervalMs / 1000,
      masterInfo: this.info,
    });
    this.#heartbeat(framework);
    return { frameworkId: framework.id, streamId };
  }

  /** The subscription connection with `streamId` broke. */
  disconnected(frameworkId: string, streamId: string): void {
    const fw = this.frameworks.get(frameworkId);
    if (fw === undefined || fw.state !== 'subscribed' || fw.streamId !== streamId) return;
    this.ctx.trace.append('framework:disconnected', { frameworkId, streamId });
    fw.moveTo('disconnected');
    fw.sink = undefined;
    fw.streamId = undefined;
    fw.unregisteredTimeMs = wallTimeMs(this.ctx);
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.allocator.deactivateFramework(fw.id);
    for (const offer of [...fw.offers.values()]) this.removeOffer(offer, { rescind: false });
    fw.failoverTimer = this.ctx.loop.schedule(fw.info.failoverTimeoutMs, 'framework:failover-timeout', () => {
      this.ctx.trace.append('framework:failover-expired', { frameworkId });
      this.removeFramework(fw, 'Framework failover timeout');
    });
  }

  /** A call other than SUBSCRIBE: the checks of the master, in upstream order. */
  call(frameworkId: string, streamId: string | undefined, call: SchedulerCall | { readonly type: 'UNKNOWN' }): Outcome {
    const fw = this.frameworks.get(frameworkId);
    if (fw === undefined) return fail('FRAMEWORK_NOT_FOUND', 'Framework cannot be found');
    if (fw.state !== 'subscribed') return fail('FRAMEWORK_NOT_SUBSCRIBED', 'Framework is not subscribed');
    if (streamId === undefined) {
      return fail('STREAM_ID', "All non-subscribe calls should include the 'Mesos-Stream-Id' header");
    }
    if (streamId !== fw.streamId) {
      return fail(
        'STREAM_ID',
        `The stream ID '${streamId}' included in this request didn't match the stream ID currently associated with framework ID ${frameworkId}`,
      );
    }
    // Upstream answers a bare 501; the HTTP layer writes the default body.
    if (call.type === 'UNKNOWN') return fail('NOT_IMPLEMENTED', '');
    return dispatch(this, fw, call);
  }

  // ---- framework lifecycle ----

  #addFramework(sub: Subscription): Framework {
    const id = sub.info.id ?? this.ids.framework();
    const fw = new Framework(id, { ...sub.info, id }, wallTimeMs(this.ctx), (frameworkId, event) =>
      this.ctx.trace.appendText(`event:${event.type.toLowerCase()}`, `${frameworkId} ${eventSummary(event)}`),
    );
    this.#applySubscription(fw, sub);
    this.frameworks.set(id, fw);
    this.allocator.addFramework(id, this.#allocationInfo(fw));
    return fw;
  }

  #failover(fw: Framework, sub: Subscription): Framework {
    if (fw.sink !== undefined) {
      fw.sink.send({ type: 'ERROR', message: 'Framework failed over' });
      fw.sink.close();
    }
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.ctx.loop.cancel(fw.failoverTimer);
    fw.failoverTimer = undefined;
    // Upstream discards the outstanding offers of a failed-over framework silently.
    for (const offer of [...fw.offers.values()]) this.removeOffer(offer, { rescind: false });
    // `user` and `checkpoint` keep their first values on re-subscription.
    fw.info = { ...sub.info, id: fw.id, user: fw.info.user, checkpoint: fw.info.checkpoint };
    this.#applySubscription(fw, sub);
    fw.moveTo('subscribed');
    fw.reregisteredTimeMs = wallTimeMs(this.ctx);
    this.allocator.updateFramework(fw.id, this.#allocationInfo(fw));
    this.allocator.activateFramework(fw.id);
    return fw;
  }

  /** UPDATE_FRAMEWORK: all or nothing. */
  updateFramework(fw: Framework, sub: Subscription): Outcome {
    if (sub.info.id !== fw.id) return fail('INVALID', `'framework_info.id' must be '${fw.id}'`);
    const error = subscriptionError(sub) ?? immutableFieldError(fw.info, sub.info);
    if (error !== undefined) return fail('INVALID', error);
    fw.info = { ...sub.info, id: fw.id };
    this.#applySubscription(fw, sub);
    const roles = new Set(fw.roles());
    for (const offer of [...fw.offers.values()]) {
      if (!roles.has(offer.role)) this.removeOffer(offer, { rescind: true });
    }
    this.allocator.updateFramework(fw.id, this.#allocationInfo(fw));
    this.ctx.trace.append('framework:update', { frameworkId: fw.id, roles: fw.roles(), suppressed: [...fw.suppressedRoles] });
    return done;
  }

  #applySubscription(fw: Framework, sub: Subscription): void {
    fw.suppressedRoles = new Set(sub.suppressedRoles);
    fw.constraints = sub.offerConstraints;
  }

  #allocationInfo(fw: Framework) {
    return {
      roles: fw.roles(),
      suppressedRoles: [...fw.suppressedRoles],
      gpuAware: fw.has('GPU_RESOURCES'),
      ...(fw.constraints === undefined ? {} : { constraints: fw.constraints }),
    };
  }

  #heartbeat(fw: Framework): void {
    fw.send({ type: 'HEARTBEAT' });
    fw.heartbeatTimer = this.ctx.loop.schedule(this.heartbeatIntervalMs, 'framework:heartbeat', () => this.#heartbeat(fw));
  }

  /** TEARDOWN or failover expiry: kill everything, close the stream, keep a record. */
  removeFramework(fw: Framework, reason: string): void {
    if (fw.state === 'removed') return;
    this.ctx.trace.append('framework:remove', { frameworkId: fw.id, reason });
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.ctx.loop.cancel(fw.failoverTimer);
    fw.sink?.close();
    fw.sink = undefined;
    for (const offer of [...fw.offers.values()]) this.removeOffer(offer, { rescind: false });
    for (const task of [...fw.tasks.values()]) {
      if (!isTerminal(task.state)) {
        this.updateTaskState(task, this.masterStatus(refOf(task), 'TASK_KILLED', 'Framework removed', 'REASON_FRAMEWORK_REMOVED'));
      }
      this.recoverTaskResources(task);
      fw.completeTask(task);
    }
    for (const executor of fw.executors.values()) {
      this.allocator.recoverResources(fw.id, executor.agentId, executor.resources);
    }
    fw.executors.clear();
    for (const agentId of this.agents.keys()) {
      this.toAgent(agentId, 'master:shutdown-framework', (agent) => agent.onShutdownFramework(fw.id));
    }
    this.allocator.removeFramework(fw.id);
    fw.moveTo('removed');
    fw.unregisteredTimeMs = wallTimeMs(this.ctx);
    this.frameworks.delete(fw.id);
    this.completedFrameworks.push(fw);
    if (this.completedFrameworks.length > MAX_COMPLETED_FRAMEWORKS) this.completedFrameworks.shift();
  }

  // ---- offers ----

  #onDecisions(decisions: readonly OfferDecision[]): void {
    const batches = new Map<string, OfferView[]>();
    for (const d of decisions) {
      const fw = this.frameworks.get(d.frameworkId);
      if (fw === undefined) throw new Error(`allocator offered to unknown framework '${d.frameworkId}'`);
      const offer: Offer = {
        id: this.ids.offer(),
        frameworkId: fw.id,
        agentId: d.agentId,
        role: d.role,
        resources: withAllocationRole(d.resources, d.role),
      };
      fw.offers.set(offer.id, offer);
      if (this.options.offerTimeoutMs !== undefined) {
        offer.timer = this.ctx.loop.schedule(this.options.offerTimeoutMs, 'offer:timeout', () =>
          this.removeOffer(offer, { rescind: true }),
        );
      }
      this.ctx.trace.append('offer:create', { offerId: offer.id, frameworkId: fw.id, agentId: d.agentId, role: d.role });
      const batch = batches.get(fw.id) ?? [];
      batch.push(this.offerView(fw, offer));
      batches.set(fw.id, batch);
    }
    for (const [frameworkId, offers] of batches) this.frameworks.get(frameworkId)?.send({ type: 'OFFERS', offers });
  }

  offerView(fw: Framework, offer: Offer): OfferView {
    const { config } = this.agents.get(offer.agentId)!.agent;
    const multiRole = fw.has('MULTI_ROLE');
    const executorIds = [...fw.executors.values()].filter((e) => e.agentId === offer.agentId).map((e) => e.executorId);
    return {
      id: offer.id,
      frameworkId: fw.id,
      agentId: offer.agentId,
      hostname: config.hostname,
      ...(multiRole ? { allocationRole: offer.role } : {}),
      resources: multiRole ? offer.resources : withAllocationRole(offer.resources, undefined),
      attributes: config.attributes,
      executorIds,
      url: { scheme: 'http', hostname: config.hostname, ip: config.ip, port: config.port, path: '/slave(1)' },
    };
  }

  /** Takes an offer away; its resources go back to the allocator. */
  removeOffer(offer: Offer, how: { readonly rescind: boolean; readonly refuseMs?: number }): void {
    const fw = this.frameworks.get(offer.frameworkId);
    this.ctx.loop.cancel(offer.timer);
    fw?.offers.delete(offer.id);
    this.allocator.recoverResources(offer.frameworkId, offer.agentId, offer.resources, how.refuseMs ?? 0);
    this.ctx.trace.append(how.rescind ? 'offer:rescind' : 'offer:remove', { offerId: offer.id });
    if (how.rescind) fw?.send({ type: 'RESCIND', offerId: offer.id });
  }

  // ---- tasks ----

  /** A status the master makes up itself: no uuid, so never acknowledged. */
  masterStatus(task: TaskRef, state: TaskState, message: string, reason: TaskStatus['reason']): TaskStatus {
    return {
      taskId: task.taskId,
      state,
      source: 'SOURCE_MASTER',
      ...(reason === undefined ? {} : { reason }),
      message,
      ...(task.agentId === undefined ? {} : { agentId: task.agentId }),
      ...(task.executorId === undefined ? {} : { executorId: task.executorId }),
      timestampMs: wallTimeMs(this.ctx),
    };
  }

  /** Moves the master's task to the status' state along a legal transition. */
  updateTaskState(task: Task, status: TaskStatus, latest: TaskState = status.state): void {
    if (task.state !== latest && !isTerminal(task.state)) {
      task.state = transition(task.spec.taskId, task.state, latest);
    }
    const last = task.statuses[task.statuses.length - 1];
    if (last?.state !== status.state) task.statuses.push(status);
    task.statusUpdateState = status.state;
    task.statusUpdateUuid = status.uuid;
    if (isTerminal(task.state)) this.recoverTaskResources(task);
  }

  recoverTaskResources(task: Task): void {
    if (task.resourcesRecovered) return;
    task.resourcesRecovered = true;
    this.allocator.recoverResources(task.frameworkId, task.agentId, task.resources);
  }

  // ---- MasterLink: messages from agents ----

  statusUpdate(agentId: string, frameworkId: string, status: TaskStatus, latestState: TaskState): void {
    const fw = this.frameworks.get(frameworkId);
    this.ctx.trace.append('task:status', {
      frameworkId,
      agentId,
      taskId: status.taskId,
      state: status.state,
      latest: latestState,
      uuid: status.uuid,
    });
    if (fw === undefined) return;
    const task = fw.tasks.get(status.taskId);
    if (task !== undefined) this.updateTaskState(task, status, latestState);
    fw.send({ type: 'UPDATE', status });
  }

  exitedExecutor(agentId: string, frameworkId: string, executorId: string, waitStatus: number): void {
    const fw = this.frameworks.get(frameworkId);
    this.ctx.trace.append('executor:exited', { agentId, frameworkId, executorId, waitStatus });
    if (fw === undefined) return;
    const key = `${agentId}/${executorId}`;
    const record = fw.executors.get(key);
    if (record !== undefined) {
      fw.executors.delete(key);
      this.allocator.recoverResources(fw.id, agentId, record.resources);
    }
    fw.send({ type: 'FAILURE', agentId, executorId, status: waitStatus });
  }

  /** Resources the master accounts per agent: offers, live tasks, executors. */
  accountedByAgent(): Map<string, Resources[]> {
    const out = new Map<string, Resources[]>();
    const put = (agentId: string, bag: Resources) => {
      const list = out.get(agentId);
      if (list === undefined) out.set(agentId, [bag]);
      else list.push(bag);
    };
    for (const fw of this.frameworks.values()) {
      for (const offer of fw.offers.values()) put(offer.agentId, offer.resources);
      for (const task of fw.tasks.values()) if (!task.resourcesRecovered) put(task.agentId, task.resources);
      for (const e of fw.executors.values()) put(e.agentId, e.resources);
    }
    return out;
  }

}

/** What the trace keeps of an event sent to a framework, as compact text. */
function eventSummary(event: SchedulerEvent): string {
  switch (event.type) {
    case 'OFFERS':
      return event.offers.map((o) => o.id).join(',');
    case 'UPDATE': {
      const s = event.status;
      return `${s.taskId} ${s.state} ${s.source} ${s.uuid ?? '-'}`;
    }
    case 'RESCIND':
      return event.offerId;
    case 'MESSAGE':
      return `${event.agentId} ${event.executorId} ${event.data.length}`;
    case 'FAILURE':
      return `${event.agentId ?? '-'} ${event.executorId ?? '-'} ${event.status ?? '-'}`;
    case 'ERROR':
      return JSON.stringify(event.message);
    case 'UPDATE_OPERATION_STATUS':
      return `${event.status.operationId ?? '-'} ${event.status.state}`;
    case 'SUBSCRIBED':
    case 'HEARTBEAT':
      return '';
  }
}
