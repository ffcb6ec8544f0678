/**
 * The text of the trace's hottest entries, written directly: a failover
 * re-registers every task, and each task's update appends a `task:status`
 * entry (and a `status-update:retry` when it is sent again). Each function
 * writes byte for byte what `Trace.append` writes of the same data
 * (JSON.stringify: keys in this order, an undefined value left out);
 * test/core/kernel/trace-lines.test.ts holds them to it.
 */
import { jsonString, LastQuoted } from './trace.js';

const frameworkIds = new LastQuoted();
const agentIds = new LastQuoted();
/** Task states repeat from one line to the next too (a failover resends a cluster's TASK_RUNNING). */
const states = new LastQuoted();
const latestStates = new LastQuoted();

/** `task:status`: the master took an update from an agent. */
export function statusText(
  frameworkId: string,
  agentId: string,
  taskId: string,
  state: string,
  latest: string,
  uuid: string | undefined,
): string {
  const tail = uuid === undefined ? '' : `,"uuid":${jsonString(uuid)}`;
  return `{"frameworkId":${frameworkIds.of(frameworkId)},"agentId":${agentIds.of(agentId)},"taskId":${jsonString(taskId)},"state":${states.of(state)},"latest":${latestStates.of(latest)}${tail}}`;
}

/** `status-update:retry` and the like: a task, its state and the update's uuid. */
export function updateText(taskId: string, state: string, uuid: string | undefined): string {
  const tail = uuid === undefined ? '' : `,"uuid":${jsonString(uuid)}`;
  return `{"taskId":${jsonString(taskId)},"state":${states.of(state)}${tail}}`;
}

/** `task:status-from-unknown-agent`: an update the master did not take. */
export function unknownAgentText(agentId: string, taskId: string, uuid: string | undefined): string {
  const tail = uuid === undefined ? '' : `,"uuid":${jsonString(uuid)}`;
  return `{"agentId":${jsonString(agentId)},"taskId":${jsonString(taskId)}${tail}}`;
}
