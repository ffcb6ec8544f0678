/**
 * The agent's operation status updates: the status of each operation on
 * its resources goes to the master, retried with the back-off of task
 * status updates (10 s doubling to 10 min) until the master passes on an
 * acknowledgement for its uuid (the framework's, or the master's own for
 * an operation without an id). An operation has one status here: the
 * agent applies speculative operations at once, so the first is terminal.
 *
 * Paused while the agent is not registered; `resume()` sends every
 * update at once. What is unacknowledged survives a restart, as do the
 * resources the operations changed (`ResourceOperations` keeps both).
 */
import type { SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { AgentToMaster, ApplyOperation } from '../model/messages.js';
import type { Resources } from '../model/resources.js';
import { applyConversions } from '../model/conversions.js';
import type { OperationStatus } from '../model/types.js';
import { RETRY_MAX_MS, RETRY_MIN_MS } from '../model/messages.js';

export interface OperationUpdate {
  readonly frameworkId?: string;
  readonly operationUuid: string;
  /** Carries the status uuid the acknowledgement names. */
  readonly status: OperationStatus;
}

interface Pending {
  readonly update: OperationUpdate;
  retryMs: number;
  timer?: TimerId;
}

export class OperationUpdates {
  readonly #pending = new Map<string, Pending>();
  #paused = true;

  constructor(
    private readonly ctx: SimContext,
    private readonly forward: (update: OperationUpdate) => void,
  ) {}

  /** Takes an operation's status and sends it; an operation already holding one keeps it (false). */
  update(update: OperationUpdate): boolean {
    if (this.#pending.has(update.operationUuid)) return false;
    const pending: Pending = { update, retryMs: RETRY_MIN_MS };
    this.#pending.set(update.operationUuid, pending);
    this.#send(pending);
    return true;
  }

  /** The update of an operation, if it is still unacknowledged. */
  get(operationUuid: string): OperationUpdate | undefined {
    return this.#pending.get(operationUuid)?.update;
  }

  /** Sends an operation's update again now (the master asked after it). */
  resend(operationUuid: string): void {
    const pending = this.#pending.get(operationUuid);
    if (pending === undefined) return;
    this.ctx.loop.cancel(pending.timer);
    this.#send(pending);
  }

  /** True when the acknowledgement matched an unacknowledged update, which is then done. */
  acknowledge(operationUuid: string, statusUuid: string): boolean {
    const pending = this.#pending.get(operationUuid);
    if (pending === undefined || pending.update.status.uuid !== statusUuid) return false;
    this.ctx.loop.cancel(pending.timer);
    this.#pending.delete(operationUuid);
    return true;
  }

  pause(): void {
    this.#paused = true;
    for (const pending of this.#pending.values()) this.ctx.loop.cancel(pending.timer);
  }

  resume(): void {
    this.#paused = false;
    for (const pending of this.#pending.values()) {
      this.ctx.loop.cancel(pending.timer);
      this.#send(pending);
    }
  }

  checkpoint(): OperationUpdate[] {
    return [...this.#pending.values()].map((p) => p.update);
  }

  /** Takes back the updates of a checkpoint (paused until `resume`). */
  recover(updates: readonly OperationUpdate[]): void {
    for (const update of updates) this.#pending.set(update.operationUuid, { update, retryMs: RETRY_MIN_MS });
  }

  get size(): number {
    return this.#pending.size;
  }

  #send(pending: Pending): void {
    if (this.#paused) return;
    this.forward(pending.update);
    pending.timer = this.ctx.loop.schedule(pending.retryMs, 'operation-update:retry', () => {
      pending.retryMs = Math.min(pending.retryMs * 2, RETRY_MAX_MS);
      this.ctx.trace.append('operation-update:retry', {
        operationUuid: pending.update.operationUuid,
        uuid: pending.update.status.uuid,
      });
      this.#send(pending);
    });
  }
}

/** The agent's resources as operations left them, and the last operation version they include. */
export interface CheckpointedResources {
  readonly total: Resources;
  readonly version: number;
}

/**
 * Applies a speculative operation to the checkpointed resources and
 * reports it finished (status `uuid`); returns the resources after it. An
 * operation the resources already include (sent again after a
 * re-registration) is reported again, not applied twice. When an earlier
 * operation never arrived (its message was lost), this one cannot be
 * applied on its own: the agent takes the master's total, which includes
 * both, as the master is the source of truth for checkpointed resources.
 */
export function applyOperation(
  ctx: SimContext,
  agentId: string,
  current: CheckpointedResources,
  m: ApplyOperation,
  updates: OperationUpdates,
  uuid: string,
): CheckpointedResources {
  const { version, total } = current;
  let next = current;
  if (m.version <= version) {
    updates.resend(m.operationUuid);
    if (updates.get(m.operationUuid) !== undefined) return current;
  } else {
    const applied = m.version === version + 1 ? applyConversions(total, m.conversions) : m.total;
    next = { total: typeof applied === 'string' ? m.total : applied, version: m.version };
    ctx.trace.append('agent:apply-operation', { agentId, operationUuid: m.operationUuid, version: m.version });
  }
  updates.update({
    ...(m.frameworkId === undefined ? {} : { frameworkId: m.frameworkId }),
    operationUuid: m.operationUuid,
    status: {
      ...(m.operationId === undefined ? {} : { operationId: m.operationId }),
      state: 'OPERATION_FINISHED',
      agentId,
      uuid,
    },
  });
  return next;
}

/** What the agent keeps on disk of its operations. */
export interface OperationsCheckpoint {
  readonly resources: CheckpointedResources;
  readonly operationUpdates: readonly OperationUpdate[];
}

/**
 * The agent's side of operations on its resources: the checkpointed
 * resources they change, kept on disk at once (a real agent checkpoints its
 * resources before it acknowledges an operation), and their status updates.
 */
export class ResourceOperations {
  #resources: CheckpointedResources;
  #updates: OperationUpdates;

  constructor(
    private readonly ctx: SimContext,
    private readonly agentId: string,
    total: Resources,
    private readonly toMaster: (message: AgentToMaster) => void,
  ) {
    this.#resources = { total, version: 0 };
    this.#updates = this.#newUpdates();
  }

  /** The agent's total: its resources flag, changed by the operations applied since. */
  get resources(): CheckpointedResources {
    return this.#resources;
  }

  /** Operations whose status the master has not acknowledged. */
  get pending(): number {
    return this.#updates.size;
  }

  /** APPLY_OPERATION; `uuid` is its status's. */
  apply(m: ApplyOperation, uuid: string): void {
    this.#resources = applyOperation(this.ctx, this.agentId, this.#resources, m, this.#updates, uuid);
  }

  acknowledge(operationUuid: string, statusUuid: string): void {
    if (!this.#updates.acknowledge(operationUuid, statusUuid)) {
      this.ctx.trace.append('operation-update:ack-ignored', { agentId: this.agentId, operationUuid });
    }
  }

  pause(): void {
    this.#updates.pause();
  }

  resume(): void {
    this.#updates.resume();
  }

  checkpoint(): OperationsCheckpoint {
    return { resources: this.#resources, operationUpdates: this.#updates.checkpoint() };
  }

  /** The process is gone: the updates in memory with it (the checkpoint keeps them). */
  lost(): void {
    this.#updates = this.#newUpdates();
  }

  /** Takes back what a checkpoint kept (paused until `resume`). */
  recover(disk: OperationsCheckpoint): void {
    this.#resources = disk.resources;
    this.#updates.recover(disk.operationUpdates);
  }

  #newUpdates(): OperationUpdates {
    return new OperationUpdates(this.ctx, (update) =>
      this.toMaster({ type: 'UPDATE_OPERATION_STATUS', agentId: this.agentId, ...update }),
    );
  }
}
