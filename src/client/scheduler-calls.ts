/**
 * The scheduler calls a client sends most, built from the few fields a
 * test gives: a TaskInfo cut out of an offer (its resources taken from the
 * offer's own, so roles, reservations and allocation info match), offer
 * ids from offers, and the acknowledgement of a status update.
 */
import type {
  Filters,
  InverseOffer,
  Offer,
  OfferOperation,
  Resource,
  SchedulerCall,
  TaskInfo,
  TaskStatus,
  CommandInfo,
  SchedulerEventOf,
} from './protocol.js';

/** What a task needs beyond its offer: an id, a command, and amounts of scalar resources. */
export interface TaskSpec {
  /** The task's id (unique among the framework's active tasks). */
  readonly taskId: string;
  /** Default: the task id. */
  readonly name?: string;
  /** A shell command (`sleep 1`, `exit 3`: see "What simulated tasks do"), or a whole CommandInfo. */
  readonly command?: string | CommandInfo;
  /** Scalar resources by name (`cpus`, `mem`, `disk`, `gpus`); default `{ cpus: 0.1, mem: 32 }`. */
  readonly resources?: Readonly<Record<string, number>>;
  /** More TaskInfo fields (container, labels, executor, health_check, ...), set as given. */
  readonly info?: Partial<TaskInfo>;
}

const DEFAULT_RESOURCES: Readonly<Record<string, number>> = { cpus: 0.1, mem: 32 };

/** Upstream's fixed point: scalars have three decimal digits. */
const round = (value: number): number => Math.round(value * 1000) / 1000;

/** An offer, or an offer id (its `value`, or the OfferID). */
export type OfferRef = Offer | InverseOffer | string | { readonly value: string };

export function offerIdOf(offer: OfferRef): { value: string } {
  if (typeof offer === 'string') return { value: offer };
  return 'id' in offer ? { value: offer.id.value } : { value: offer.value };
}

/**
 * The TaskInfo of `spec` on `offer`'s agent, its resources cut from the
 * offer's (each amount taken from the offer's entries of that name in
 * order). A RangeError says which resource the offer has too little of.
 */
export function taskInfoFrom(offer: Offer, spec: TaskSpec): TaskInfo {
  const resources: Resource[] = [];
  for (const [name, wanted] of Object.entries(spec.resources ?? DEFAULT_RESOURCES)) {
    if (!(wanted > 0) || !Number.isFinite(wanted))
      throw new RangeError(`task '${spec.taskId}': resources.${name} must be a positive number, got ${wanted}`);
    let left = round(wanted);
    for (const have of offer.resources ?? []) {
      if (left <= 0) break;
      if (have.name !== name || have.type !== 'SCALAR' || have.scalar === undefined) continue;
      const take = round(Math.min(left, have.scalar.value));
      if (take <= 0) continue;
      resources.push({ ...have, scalar: { value: take } });
      left = round(left - take);
    }
    if (left > 0) {
      const offered = round(
        (offer.resources ?? []).filter((r) => r.name === name).reduce((sum, r) => sum + (r.scalar?.value ?? 0), 0),
      );
      throw new RangeError(
        `task '${spec.taskId}': offer ${offer.id.value} has ${offered} ${name}, the task needs ${round(wanted)}`,
      );
    }
  }
  const command = typeof spec.command === 'string' ? { value: spec.command } : spec.command;
  return {
    name: spec.name ?? spec.taskId,
    task_id: { value: spec.taskId },
    agent_id: offer.agent_id,
    resources,
    ...(command === undefined ? {} : { command }),
    ...spec.info,
  };
}

/** ACCEPT of `offers` with `operations`. */
export function acceptCall(
  offers: readonly OfferRef[],
  operations: readonly OfferOperation[],
  filters?: Filters,
): SchedulerCall {
  return {
    type: 'ACCEPT',
    accept: {
      offer_ids: offers.map(offerIdOf),
      operations: [...operations],
      ...(filters === undefined ? {} : { filters }),
    },
  };
}

/** The LAUNCH operation of these tasks. */
export function launchOperation(tasks: readonly TaskInfo[]): OfferOperation {
  return { type: 'LAUNCH', launch: { task_infos: [...tasks] } };
}

/** ACCEPT_INVERSE_OFFERS or DECLINE_INVERSE_OFFERS of these inverse offers, with the filters given. */
export function inverseOffersCall(
  type: 'ACCEPT_INVERSE_OFFERS' | 'DECLINE_INVERSE_OFFERS',
  inverseOffers: readonly OfferRef[],
  filters?: Filters,
): SchedulerCall {
  const body = { inverse_offer_ids: inverseOffers.map(offerIdOf), ...(filters === undefined ? {} : { filters }) };
  return type === 'ACCEPT_INVERSE_OFFERS'
    ? { type, accept_inverse_offers: body }
    : { type, decline_inverse_offers: body };
}

export function declineCall(offers: readonly OfferRef[], filters?: Filters): SchedulerCall {
  return {
    type: 'DECLINE',
    decline: { offer_ids: offers.map(offerIdOf), ...(filters === undefined ? {} : { filters }) },
  };
}

/**
 * The ACKNOWLEDGE a status update asks for, or undefined when it asks for
 * none: only updates with a `uuid` are acknowledged (upstream answers one
 * without with `400`), such as those of reconciliation and of the master.
 */
export function acknowledgeCall(update: SchedulerEventOf<'UPDATE'> | TaskStatus): SchedulerCall | undefined {
  const status = 'update' in update ? update.update.status : update;
  if (status.uuid === undefined || status.agent_id === undefined) return undefined;
  return {
    type: 'ACKNOWLEDGE',
    acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
  };
}

/** A task to reconcile: its id, and its agent's when known. */
export interface ReconcileTask {
  readonly taskId: string;
  readonly agentId?: string;
}

export function reconcileCall(tasks: readonly ReconcileTask[]): SchedulerCall {
  return {
    type: 'RECONCILE',
    reconcile: {
      tasks: tasks.map((t) => ({
        task_id: { value: t.taskId },
        ...(t.agentId === undefined ? {} : { agent_id: { value: t.agentId } }),
      })),
    },
  };
}

export function killCall(taskId: string, agentId?: string): SchedulerCall {
  return {
    type: 'KILL',
    kill: { task_id: { value: taskId }, ...(agentId === undefined ? {} : { agent_id: { value: agentId } }) },
  };
}

/** REVIVE or SUPPRESS, of the roles given (all the framework's without). */
export function rolesCall(type: 'REVIVE' | 'SUPPRESS', roles?: readonly string[]): SchedulerCall {
  const field = type === 'REVIVE' ? 'revive' : 'suppress';
  return { type, ...(roles === undefined ? {} : { [field]: { roles: [...roles] } }) };
}
