/**
 * The protocol's messages as their JSON travels (upstream's JSON form of
 * the v1 protos: field names as in the .proto files, enums by name, bytes
 * as Base64 text), typed from the generated message types. Events are
 * unions on `type`: an event of a type has that type's field, set.
 *
 *   const event: SchedulerEvent = ...;
 *   if (event.type === 'OFFERS') event.offers.offers;   // Offer[] | undefined
 *   if (event.type === 'UPDATE') event.update.status;   // TaskStatus
 */
import type { mesos } from '../wire/generated/types.js';

export type { mesos };

/** A message in its JSON form: bytes as Base64 text, the rest as the message type has it. */
export type Json<T> = T extends Uint8Array
  ? string
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;

/** The event of `type`: its field (the type's name in lower case) set, none for types without one. */
type Variant<E, T extends string> = { type: T } & { [K in Lowercase<T> & keyof E]-?: Json<NonNullable<E[K]>> };

// ---- scheduler API ----

export type SchedulerEventType = Exclude<mesos.v1.scheduler.Event.Type, 'UNKNOWN'>;

/**
 * An event of the scheduler API. An ERROR carries its text both as
 * `error.message` and, as the JSON stream has it, `message`.
 */
export type SchedulerEvent = {
  [T in SchedulerEventType]: T extends 'ERROR'
    ? { type: 'ERROR'; error: { message: string }; message: string }
    : Variant<mesos.v1.scheduler.Event, T>;
}[SchedulerEventType];

/** The scheduler event of one type, e.g. `SchedulerEventOf<'UPDATE'>`. */
export type SchedulerEventOf<T extends SchedulerEventType> = Extract<SchedulerEvent, { type: T }>;

export type SchedulerCall = Json<mesos.v1.scheduler.Call>;
export type SchedulerCallType = Exclude<mesos.v1.scheduler.Call.Type, 'UNKNOWN'>;

export type FrameworkInfo = Json<mesos.v1.FrameworkInfo>;
export type Offer = Json<mesos.v1.Offer>;
export type InverseOffer = Json<mesos.v1.InverseOffer>;
export type OfferOperation = Json<mesos.v1.Offer.Operation>;
export type TaskInfo = Json<mesos.v1.TaskInfo>;
export type TaskGroupInfo = Json<mesos.v1.TaskGroupInfo>;
export type TaskStatus = Json<mesos.v1.TaskStatus>;
export type TaskState = mesos.v1.TaskState;
export type Resource = Json<mesos.v1.Resource>;
export type CommandInfo = Json<mesos.v1.CommandInfo>;
export type ContainerInfo = Json<mesos.v1.ContainerInfo>;
export type ExecutorInfo = Json<mesos.v1.ExecutorInfo>;
export type Filters = Json<mesos.v1.Filters>;
export type Labels = Json<mesos.v1.Labels>;
export type AgentInfo = Json<mesos.v1.AgentInfo>;
export type MasterInfo = Json<mesos.v1.MasterInfo>;
export type OperationStatus = Json<mesos.v1.OperationStatus>;

// ---- executor API ----

export type ExecutorEventType = Exclude<mesos.v1.executor.Event.Type, 'UNKNOWN'>;

/** An event of the executor API (an agent's `/api/v1/executor`). */
export type ExecutorEvent = { [T in ExecutorEventType]: Variant<mesos.v1.executor.Event, T> }[ExecutorEventType];
export type ExecutorEventOf<T extends ExecutorEventType> = Extract<ExecutorEvent, { type: T }>;
export type ExecutorCall = Json<mesos.v1.executor.Call>;

// ---- operator API (the master's `/api/v1`) ----

export type OperatorCallType = Exclude<mesos.v1.master.Call.Type, 'UNKNOWN'>;
export type OperatorCall = Json<mesos.v1.master.Call>;

export type OperatorResponseType = Exclude<mesos.v1.master.Response.Type, 'UNKNOWN'>;
/** A response of the operator API: a GET_STATE answer has `get_state`, and so on. */
export type OperatorResponse = {
  [T in OperatorResponseType]: Variant<mesos.v1.master.Response, T>;
}[OperatorResponseType];
export type OperatorResponseOf<T extends OperatorResponseType> = Extract<OperatorResponse, { type: T }>;

export type OperatorEventType = Exclude<mesos.v1.master.Event.Type, 'UNKNOWN'>;
/** An event of the operator API's SUBSCRIBE stream. */
export type OperatorEvent = { [T in OperatorEventType]: Variant<mesos.v1.master.Event, T> }[OperatorEventType];
export type OperatorEventOf<T extends OperatorEventType> = Extract<OperatorEvent, { type: T }>;

// ---- the agent's operator API (an agent's `/api/v1`) ----

export type AgentCallType = Exclude<mesos.v1.agent.Call.Type, 'UNKNOWN'>;
export type AgentCall = Json<mesos.v1.agent.Call>;
export type AgentResponseType = Exclude<mesos.v1.agent.Response.Type, 'UNKNOWN'>;
/** A response of an agent's operator API: a GET_CONTAINERS answer has `get_containers`, and so on. */
export type AgentResponse = {
  [T in AgentResponseType]: Variant<mesos.v1.agent.Response, T>;
}[AgentResponseType];
export type AgentResponseOf<T extends AgentResponseType> = Extract<AgentResponse, { type: T }>;
