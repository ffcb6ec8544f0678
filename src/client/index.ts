/**
 * `clustersim/client`: typed clients of the scheduler, executor and
 * operator HTTP APIs, and the protocol's JSON types. They speak the
 * upstream APIs, so they work against clustersim and a real cluster alike.
 */
export { SchedulerClient, CallError, SubscribeError, postRaw } from './scheduler-client.js';
export type { ClientOptions, Encoding, WaitOptions, CallResult, EventMatch, JsonEvent } from './scheduler-client.js';
export { ExecutorClient } from './executor-client.js';
export type { ExecutorIds } from './executor-client.js';
export { OperatorClient } from './operator-client.js';
export type { OperatorGetType } from './operator-client.js';
export { AgentOperatorClient } from './agent-operator-client.js';
export type { AgentGetType } from './agent-operator-client.js';
export { StreamClosedError, WaitTimeoutError, DEFAULT_WAIT_MS } from './event-queue.js';
export {
  taskInfoFrom,
  offerIdOf,
  acknowledgeCall,
  acceptCall,
  declineCall,
  launchOperation,
  killCall,
  reconcileCall,
} from './scheduler-calls.js';
export type { TaskSpec, OfferRef, ReconcileTask } from './scheduler-calls.js';
export type * from './protocol.js';
