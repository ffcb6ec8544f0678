/**
 * The master node: frameworks and their subscriptions, the agents it knows,
 * offers and its view of tasks. Schedulers reach it through `subscribe`,
 * `disconnected` and `call` (from the cluster's port); agents through
 * messages (`receive`). Events for schedulers go to the outbox, addressed
 * to their connection. The call handlers live in `calls.ts` and
 * `accept.ts`, which see the master only as `MasterOps`; this file keeps
 * the frameworks' lifecycle, from subscription to removal. Offers change
 * in one place, `offers.ts`, tasks and executors in another, `tasks.ts`,
 * each with the books (`Ledger`) kept beside them.
 */
import { Allocator, DEFAULT_ALLOCATION_INTERVAL_MS } from '../allocator/allocator.js';
import { Authorizer, notAuthorizedForRoles, principalMismatch, rolesOf } from '../model/authz.js';
import { wallTimeMs, type SimContext } from '../network/context.js';
import { done, fail, type Outcome } from '../model/errors.js';
import { IdGenerator } from '../kernel/ids.js';
import {
  MASTER_NODE,
  type AgentToMaster,
  type FrameworkRef,
  type Message,
  type MasterToAgent,
  type SimNode,
} from '../model/messages.js';
import type { Outbox } from '../network/outbox.js';
import type { Rng } from '../kernel/rng.js';
import { isTerminal } from '../model/task-state.js';
import type { MasterInfo, QuotaConfig, SchedulerCall, SchedulerEvent, Subscription } from '../model/types.js';
import { quietPings } from './agent-health.js';
import { AgentTotals } from './agent-totals.js';
import type { AgentRecord, PingRound } from './agents.js';
import { dispatch } from './calls.js';
import { Framework, keepLatest, MAX_COMPLETED_TASKS_PER_FRAMEWORK, refOf } from './framework.js';
import { Ledger } from './ledger.js';
import { MisuseLog } from './misuse.js';
import { makeOffers, removeOffer } from './offers.js';
import type { MasterOps, MasterOptions } from './ops.js';
import { onAgentMessage } from './agent-messages.js';
import { checkDraining, onOperatorCall } from './operator.js';
import { OperatorFeed } from './operator-feed.js';
import { frameworkSnapshot } from './snapshots.js';
import { OperationStore } from './operation-store.js';
import { Maintenance } from './maintenance-state.js';
import { makeInverseOffers } from './inverse-offers.js';
import type {} from '../model/records.js';
import { MasterRecovery } from './recovery-state.js';
import { removeFrameworkOperations } from './operations.js';
import { masterStatus, recoverTaskResources, removeExecutor, updateTaskState } from './tasks.js';
import { immutableFieldError, subscriptionError } from './validation.js';
import type { OperatorCall, OperatorValue } from '../model/operator-types.js';

export type { MasterOptions } from './ops.js';

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 15_000;
export const MAX_COMPLETED_FRAMEWORKS = 50;

export interface Subscribed {
  readonly frameworkId: string;
  readonly streamId: string;
}

export class Master implements MasterOps, SimNode {
  readonly nodeId = MASTER_NODE;
  info: MasterInfo;
  readonly ids: IdGenerator;
  readonly frameworks = new Map<string, Framework>();
  readonly completedFrameworks: Framework[] = [];
  /**
   * Tasks that ended since this master started, by their last state, as
   * they end (upstream's `master/tasks_finished`... counters): unlike the
   * completed tasks kept, never fewer.
   */
  readonly endedTasks = new Map<string, number>();
  readonly agents = new Map<string, AgentRecord>();
  readonly pingRounds = new Map<number, PingRound>();
  readonly draining = new Set<string>();
  readonly allocator: Allocator;
  readonly ledger = new Ledger();
  readonly totals = new AgentTotals();
  readonly quotas = new Map<string, QuotaConfig>();
  readonly weights: Map<string, number>;
  readonly authorizer: Authorizer;
  readonly operations = new OperationStore();
  readonly recovery = new MasterRecovery();
  readonly maintenance = new Maintenance();
  readonly operationUuids: Rng;
  readonly startTimeMs: number;
  readonly heartbeatIntervalMs: number;
  /** Operator event stream subscribers; events go out through it. */
  readonly feed: OperatorFeed;
  readonly #streamIds: Rng;
  /** The framework subscribed on each open connection. */
  readonly #byConnection = new Map<string, Framework>();

  constructor(
    readonly ctx: SimContext,
    readonly options: MasterOptions,
    private readonly outbox: Outbox,
    /** The protocol-misuse log; the cluster's own, so that it outlives a master. */
    readonly misuse: MisuseLog = new MisuseLog(ctx),
  ) {
    const rng = ctx.rng.fork('master');
    const drawn = rng.uuid();
    const id = options.masterId ?? drawn;
    this.#streamIds = ctx.rng.fork('stream-ids');
    this.operationUuids = ctx.rng.fork('operations');
    this.info = {
      id,
      ip: options.ip,
      port: options.port,
      hostname: options.hostname,
      pid: `master@${options.ip}:${options.port}`,
      version: options.version,
    };
    this.ids = new IdGenerator(id);
    this.authorizer = new Authorizer(options.acls);
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.feed = new OperatorFeed(ctx, outbox, this.heartbeatIntervalMs);
    this.startTimeMs = wallTimeMs(ctx);
    this.allocator = new Allocator(
      ctx,
      (decisions) => makeOffers(this, decisions),
      options.allocationIntervalMs ?? DEFAULT_ALLOCATION_INTERVAL_MS,
    );
    this.weights = new Map(options.weights ?? []);
    if (this.weights.size > 0) this.allocator.setWeights(this.weights);
    ctx.network.reportQuietPings(quietPings(this));
  }

  /** The port the master listens on, once known (a listener on port 0 learns it late). */
  bindPort(port: number): void {
    this.info = { ...this.info, port, pid: `master@${this.info.ip}:${port}` };
  }

  // ---- messages ----

  receive(from: string, message: Message): void {
    onAgentMessage(this, from, message as AgentToMaster);
  }

  toAgent(agentId: string, message: MasterToAgent): boolean {
    const record = this.agents.get(agentId);
    // A gone agent hears only that it must shut down.
    if (record === undefined || (record.state === 'gone' && message.type !== 'SHUTDOWN_AGENT')) return false;
    this.ctx.network.send(MASTER_NODE, agentId, message);
    return true;
  }

  // ---- subscription lifecycle ----

  /**
   * A SUBSCRIBE that passed the wire checks, on a new connection. Problems
   * found here reach the client as an ERROR event on it, then it closes.
   * `principal` is the one the request authenticated as: a FrameworkInfo
   * without a principal takes it (the HTTP layer has refused one that
   * declares another), and the ACLs are asked about the FrameworkInfo's.
   */
  subscribe(connectionId: string, requested: Subscription, principal?: string): Subscribed {
    const sub =
      principal !== undefined && requested.info.principal === undefined
        ? { ...requested, info: { ...requested.info, principal } }
        : requested;
    const streamId = this.#streamIds.uuid();
    const requestedId = sub.info.id;
    this.ctx.trace.append('call:subscribe', { frameworkId: requestedId, name: sub.info.name, streamId });
    const existing = requestedId === undefined ? undefined : this.frameworks.get(requestedId);
    const error =
      subscriptionError(sub) ??
      (existing !== undefined && existing.info.principal !== sub.info.principal
        ? immutableFieldError(existing.info, {
            ...sub.info,
            user: existing.info.user,
            checkpoint: existing.info.checkpoint,
          })
        : undefined) ??
      (requestedId !== undefined && this.completedFrameworks.some((f) => f.id === requestedId)
        ? 'Framework has been removed'
        : undefined) ??
      (this.authorizer.mayRegister(sub.info.principal, rolesOf(sub.info))
        ? undefined
        : notAuthorizedForRoles(rolesOf(sub.info)));
    if (error !== undefined) {
      this.ctx.trace.append('framework:subscribe-error', { frameworkId: requestedId, message: error });
      this.outbox.event(connectionId, { type: 'ERROR', message: error });
      this.outbox.close(connectionId, error);
      return { frameworkId: requestedId ?? '', streamId };
    }
    const framework = existing === undefined ? this.#addFramework(sub) : this.#failover(existing, sub);
    framework.connectionId = connectionId;
    framework.streamId = streamId;
    this.#byConnection.set(connectionId, framework);
    this.ctx.trace.append('framework:subscribed', {
      frameworkId: framework.id,
      streamId,
      failover: existing !== undefined,
    });
    this.misuse.subscribed(framework, requestedId !== undefined);
    framework.send({
      type: 'SUBSCRIBED',
      frameworkId: framework.id,
      heartbeatIntervalSeconds: this.heartbeatIntervalMs / 1000,
      masterInfo: this.info,
    });
    this.#heartbeat(framework);
    const type = existing === undefined ? 'FRAMEWORK_ADDED' : 'FRAMEWORK_UPDATED';
    this.feed.emit(() => ({ type, framework: frameworkSnapshot(framework, this.ledger) }));
    return { frameworkId: framework.id, streamId };
  }

  /** A subscriber's connection broke (or the client closed it). */
  disconnected(connectionId: string): void {
    if (this.feed.disconnected(connectionId)) return;
    const fw = this.#byConnection.get(connectionId);
    if (fw === undefined) return;
    this.#byConnection.delete(connectionId);
    if (fw.state !== 'subscribed' || fw.connectionId !== connectionId) return;
    const frameworkId = fw.id;
    this.ctx.trace.append('framework:disconnected', { frameworkId, streamId: fw.streamId });
    this.misuse.disconnected(fw);
    fw.moveTo('disconnected');
    fw.connectionId = undefined;
    fw.streamId = undefined;
    fw.unregisteredTimeMs = wallTimeMs(this.ctx);
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.allocator.deactivateFramework(fw.id);
    for (const offer of [...fw.offers.values()]) removeOffer(this, offer, { rescind: false });
    fw.failoverTimer = this.ctx.loop.schedule(fw.info.failoverTimeoutMs, 'framework:failover-timeout', () => {
      this.ctx.trace.append('framework:failover-expired', { frameworkId });
      this.removeFramework(fw, 'Framework failover timeout');
    });
    this.feed.emit(() => ({ type: 'FRAMEWORK_UPDATED', framework: frameworkSnapshot(fw, this.ledger) }));
  }

  // ---- operators ----

  /** An operator call the read model cannot answer alone. */
  operator(call: OperatorCall, principal?: string): Outcome<OperatorValue | undefined> {
    return onOperatorCall(this, call, principal);
  }

  /** SUBSCRIBE to the operator event stream on a new connection. */
  subscribeOperator(connectionId: string): void {
    this.feed.subscribe(connectionId);
  }

  /** What an input may have finished or made due: drains whose agents hold no more tasks, inverse offers. */
  afterInput(): void {
    checkDraining(this);
    makeInverseOffers(this);
  }

  /**
   * A call other than SUBSCRIBE: the checks of the master, in upstream
   * order. A request authenticated as `principal` acts only for frameworks
   * registered with that principal.
   */
  call(
    frameworkId: string,
    streamId: string | undefined,
    call: SchedulerCall | { readonly type: 'UNKNOWN' },
    principal?: string,
  ): Outcome {
    const fw = this.frameworks.get(frameworkId);
    if (fw === undefined) return fail('FRAMEWORK_NOT_FOUND', 'Framework cannot be found');
    if (principal !== undefined && principal !== fw.info.principal) {
      return fail('INVALID', principalMismatch(principal, fw.info.principal ?? ''));
    }
    if (fw.state !== 'subscribed') return fail('FRAMEWORK_NOT_SUBSCRIBED', 'Framework is not subscribed');
    if (streamId !== fw.streamId) this.misuse.staleStream(fw, streamId, call.type);
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
    this.misuse.call(fw, call);
    return dispatch(this, fw, call);
  }

  // ---- framework lifecycle ----

  #addFramework(sub: Subscription): Framework {
    const id = sub.info.id ?? this.ids.framework((candidate) => this.#knownFramework(candidate));
    const fw = this.#newFramework({ ...sub.info, id });
    this.#applySubscription(fw, sub);
    this.frameworks.set(id, fw);
    this.allocator.addFramework(id, this.#allocationInfo(fw));
    return fw;
  }

  #newFramework(info: FrameworkRef): Framework {
    const fw = new Framework(info.id, info, wallTimeMs(this.ctx), (connectionId, frameworkId, event) => {
      this.ctx.trace.appendText(`event:${event.type.toLowerCase()}`, `${frameworkId} ${eventSummary(event)}`);
      this.outbox.event(connectionId, event);
      this.misuse.sent(frameworkId, event);
    });
    fw.maxCompletedTasks = this.options.maxCompletedTasksPerFramework ?? MAX_COMPLETED_TASKS_PER_FRAMEWORK;
    fw.endedTasks = this.endedTasks;
    return fw;
  }

  recoverFramework(info: FrameworkRef): Framework {
    const fw = this.#newFramework(info);
    fw.recovered = true;
    fw.moveTo('disconnected');
    this.frameworks.set(fw.id, fw);
    this.ledger.setFrameworkRoles(fw.id, fw.roles());
    this.allocator.addFramework(fw.id, this.#allocationInfo(fw));
    this.allocator.deactivateFramework(fw.id);
    this.ctx.trace.append('framework:recovered', { frameworkId: fw.id });
    this.feed.emit(() => ({ type: 'FRAMEWORK_ADDED', framework: frameworkSnapshot(fw, this.ledger) }));
    return fw;
  }

  #knownFramework(id: string): boolean {
    return this.frameworks.has(id) || this.completedFrameworks.some((f) => f.id === id);
  }

  #failover(fw: Framework, sub: Subscription): Framework {
    if (fw.connectionId !== undefined) {
      this.outbox.event(fw.connectionId, { type: 'ERROR', message: 'Framework failed over' });
      this.outbox.close(fw.connectionId, 'Framework failed over');
      this.#byConnection.delete(fw.connectionId);
      fw.connectionId = undefined;
    }
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.ctx.loop.cancel(fw.failoverTimer);
    fw.failoverTimer = undefined;
    // Upstream discards the outstanding offers of a failed-over framework silently.
    for (const offer of [...fw.offers.values()]) removeOffer(this, offer, { rescind: false });
    // `user` and `checkpoint` keep their first values on re-subscription.
    fw.info = { ...sub.info, id: fw.id, user: fw.info.user, checkpoint: fw.info.checkpoint };
    this.#applySubscription(fw, sub);
    fw.moveTo('subscribed');
    fw.recovered = false;
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
    const asked = rolesOf(sub.info);
    if (!this.authorizer.mayRegister(sub.info.principal, asked)) return fail('FORBIDDEN', notAuthorizedForRoles(asked));
    fw.info = { ...sub.info, id: fw.id };
    this.#applySubscription(fw, sub);
    const roles = new Set(fw.roles());
    for (const offer of [...fw.offers.values()]) {
      if (!roles.has(offer.role)) removeOffer(this, offer, { rescind: true });
    }
    this.allocator.updateFramework(fw.id, this.#allocationInfo(fw));
    this.ctx.trace.append('framework:update', {
      frameworkId: fw.id,
      roles: fw.roles(),
      suppressed: [...fw.suppressedRoles],
    });
    this.feed.emit(() => ({ type: 'FRAMEWORK_UPDATED', framework: frameworkSnapshot(fw, this.ledger) }));
    return done;
  }

  #applySubscription(fw: Framework, sub: Subscription): void {
    fw.suppressedRoles = new Set(sub.suppressedRoles);
    fw.constraints = sub.offerConstraints;
    this.ledger.setFrameworkRoles(fw.id, fw.roles());
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
    fw.heartbeatTimer = this.ctx.loop.schedule(this.heartbeatIntervalMs, 'framework:heartbeat', () =>
      this.#heartbeat(fw),
    );
  }

  /** TEARDOWN or failover expiry: kill everything, close the stream, keep a record. */
  removeFramework(fw: Framework, reason: string): void {
    if (fw.state === 'removed') return;
    this.ctx.trace.append('framework:remove', { frameworkId: fw.id, reason });
    this.misuse.frameworkRemoved(fw.id);
    this.ctx.loop.cancel(fw.heartbeatTimer);
    this.ctx.loop.cancel(fw.failoverTimer);
    if (fw.connectionId !== undefined) {
      this.outbox.close(fw.connectionId, reason);
      this.#byConnection.delete(fw.connectionId);
      fw.connectionId = undefined;
    }
    for (const offer of [...fw.offers.values()]) removeOffer(this, offer, { rescind: false });
    for (const task of [...fw.tasks.values()]) {
      if (!isTerminal(task.state)) {
        updateTaskState(
          this,
          task,
          masterStatus(this, refOf(task), 'TASK_KILLED', 'Framework removed', 'REASON_FRAMEWORK_REMOVED'),
        );
      }
      recoverTaskResources(this, task);
      fw.completeTask(task);
    }
    for (const key of [...fw.executors.keys()]) removeExecutor(this, fw, key);
    removeFrameworkOperations(this, fw.id);
    for (const agentId of this.agents.keys()) this.toAgent(agentId, { type: 'SHUTDOWN_FRAMEWORK', frameworkId: fw.id });
    this.allocator.removeFramework(fw.id);
    this.ledger.setFrameworkRoles(fw.id, []);
    fw.moveTo('removed');
    fw.unregisteredTimeMs = wallTimeMs(this.ctx);
    this.frameworks.delete(fw.id);
    keepLatest(this.completedFrameworks, fw, this.options.maxCompletedFrameworks ?? MAX_COMPLETED_FRAMEWORKS);
    this.feed.emit(() => ({ type: 'FRAMEWORK_REMOVED', info: fw.info }));
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
    case 'INVERSE_OFFERS':
      return event.inverseOffers.map((o) => o.id).join(',');
    case 'RESCIND_INVERSE_OFFER':
      return event.inverseOfferId;
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
