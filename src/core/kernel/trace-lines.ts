/**
 * The text of the trace's hottest entries, written directly: a failover
 * re-registers every task, and each task's update appends a `task:status`
 * entry (and a `status-update:retry` when it is sent again). Each function
 * writes byte for byte what `Trace.append` writes of the same data
 * (JSON.stringify: keys in this order, an undefined value left out);
 * test/core/kernel/trace-lines.test.ts holds them to it.
 */
import { LastQuoted, pushJsonString } from './trace.js';

const frameworkIds = new LastQuoted();
const agentIds = new LastQuoted();
/** Task states repeat from one line to the next too (a failover resends a cluster's TASK_RUNNING). */
const states = new LastQuoted();
const latestStates = new LastQuoted();

/**
 * The parts of the text being written, joined at once: one flat string,
 * where a template makes a chain of pieces that the trace's hash must
 * flatten (a failover writes a million of these lines).
 */
const parts: string[] = [];

function joined(): string {
  const text = parts.join('');
  parts.length = 0;
  return text;
}

/** `,"uuid":"…"` when there is one. */
function pushUuid(uuid: string | undefined): void {
  if (uuid === undefined) return;
  parts.push(',"uuid":');
  pushJsonString(parts, uuid);
}

/** `task:status`: the master took an update from an agent. */
export function statusText(
  frameworkId: string,
  agentId: string,
  taskId: string,
  state: string,
  latest: string,
  uuid: string | undefined,
): string {
  parts.push('{"frameworkId":', frameworkIds.of(frameworkId), ',"agentId":', agentIds.of(agentId), ',"taskId":');
  pushJsonString(parts, taskId);
  parts.push(',"state":', states.of(state), ',"latest":', latestStates.of(latest));
  pushUuid(uuid);
  parts.push('}');
  return joined();
}

/** `status-update:retry` and the like: a task, its state and the update's uuid. */
export function updateText(taskId: string, state: string, uuid: string | undefined): string {
  parts.push('{"taskId":');
  pushJsonString(parts, taskId);
  parts.push(',"state":', states.of(state));
  pushUuid(uuid);
  parts.push('}');
  return joined();
}

/** `task:status-from-unknown-agent`: an update the master did not take. */
export function unknownAgentText(agentId: string, taskId: string, uuid: string | undefined): string {
  parts.push('{"agentId":');
  pushJsonString(parts, agentId);
  parts.push(',"taskId":');
  pushJsonString(parts, taskId);
  pushUuid(uuid);
  parts.push('}');
  return joined();
}
