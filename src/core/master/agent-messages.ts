/**
 * The master's handlers of what agents send it: registration and
 * re-registration (with the reconciliation of tasks the agent no longer
 * knows), status updates, executor exits, and the network's notice that an
 * agent's connection broke.
 */
import { wallTimeMs } from '../network/context.js';
import {
  MASTER_NODE,
  type AgentDescription,
  type AgentToMaster,
  type Exited,
  type ReportedTask,
} from '../model/messages.js';
import { isTerminal } from '../model/task-state.js';
import { statusText, unknownAgentText } from '../kernel/trace-lines.js';
import type { TaskStatus } from '../model/types.js';
import { onPong, restoreReachable, startPinging } from './agent-health.js';
import { AgentRecord } from './agents.js';
import { refOf } from './framework.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { masterStatus, removeExecutor, updateTaskState } from './tasks.js';
import { agentSnapshot } from './snapshots.js';
import { onOperationStatus, resendOperations } from './operations.js';
import { mustReadmit, readmit } from './readmit.js';

export function onAgentMessage(m: MasterOps, from: string, message: AgentToMaster | Exited): void {
  // A gone agent is never heard again: upstream shuts it down when it calls.
  if (m.agents.get(from)?.state === 'gone') {
    m.ctx.trace.append('agent:gone-message-dropped', { agentId: from, type: message.type });
    return;
  }
  // Upstream's master ignores what an unreachable agent sends until it re-registers.
  if (m.agents.get(from)?.state === 'unreachable' && message.type !== 'REREGISTER_AGENT' && message.type !== 'EXITED') {
    m.ctx.trace.append('agent:unreachable-message-dropped', { agentId: from, type: message.type });
    return;
  }
  if ((message.type === 'REGISTER_AGENT' || message.type === 'REREGISTER_AGENT') && onDownMachine(m, message.agent))
    return;
  switch (message.type) {
    case 'REGISTER_AGENT':
      return onRegister(m, message.agent);
    case 'REREGISTER_AGENT':
      if (mustReadmit(m, message.agent.agentId)) return readmit(m, message);
      onReregister(m, message.agent, message.tasks, message.executors);
      if (m.agents.get(message.agent.agentId)?.active === true)
        resendOperations(m, message.agent.agentId, message.resourceVersion);
      return;
    case 'UPDATE_OPERATION_STATUS':
      return onOperationStatus(m, message.agentId, message.operationUuid, message.status);
    case 'STATUS_UPDATE':
      return onStatusUpdate(m, message.agentId, message.frameworkId, message.status, message.latestState);
    case 'EXITED_EXECUTOR':
      return onExitedExecutor(m, message.agentId, message.frameworkId, message.executorId, message.waitStatus);
    case 'EXECUTOR_TO_FRAMEWORK': {
      // No delivery guarantee: a framework that is not connected misses it, as upstream's does.
      const { agentId, frameworkId, executorId, data } = message;
      m.ctx.trace.append('executor:message-to-framework', { agentId, frameworkId, executorId, bytes: data.length });
      m.frameworks.get(frameworkId)?.send({ type: 'MESSAGE', agentId, executorId, data });
      return;
    }
    case 'PONG': {
      const record = m.agents.get(from);
      if (record !== undefined) onPong(record);
      return;
    }
    case 'EXITED':
      return onAgentExited(m, message.node);
  }
  // Only agents and the network write to the master; anything else is a bug.
  throw new Error(`master: unexpected message ${(message as { type: string }).type} from '${from}'`);
}

function onRegister(m: MasterOps, agent: AgentDescription): void {
  if (m.agents.has(agent.agentId)) {
    // A retried registration that crossed the master's answer.
    m.toAgent(agent.agentId, { type: 'AGENT_REGISTERED', agentId: agent.agentId });
    return;
  }
  m.agents.set(agent.agentId, new AgentRecord(agent, wallTimeMs(m.ctx)));
  // An agent whose first registration crossed a failover is back, though it registers anew.
  m.recovery.recovered.delete(agent.agentId);
  m.totals.set(agent.agentId, agent.resources);
  m.ctx.trace.append('agent:add', { agentId: agent.agentId, hostname: agent.hostname, port: agent.port });
  m.allocator.addAgent(agent.agentId, agent.resources, { hostname: agent.hostname, attributes: agent.attributes });
  m.toAgent(agent.agentId, { type: 'AGENT_REGISTERED', agentId: agent.agentId });
  const record = m.agents.get(agent.agentId)!;
  startPinging(m, record);
  m.feed.emit(() => ({ type: 'AGENT_ADDED', agent: agentSnapshot(record, m.ledger) }));
}

/** An unreachable agent is back: the allocator and the cluster's totals count it again. */
function rejoin(m: MasterOps, record: AgentRecord): void {
  const { info } = record;
  m.totals.set(record.id, info.resources);
  m.allocator.addAgent(record.id, info.resources, { hostname: info.hostname, attributes: info.attributes });
  if (record.deactivated) m.allocator.deactivateAgent(record.id);
}

/**
 * An agent came back (it restarted, or its connection did). Tasks the
 * master placed on it that it no longer reports are lost, as upstream
 * reconciles them (TASK_DROPPED for partition-aware frameworks); executors
 * it no longer runs are forgotten; frameworks removed meanwhile are shut
 * down on it.
 */
function onReregister(
  m: MasterOps,
  agent: AgentDescription,
  reported: readonly ReportedTask[],
  executors: readonly { readonly frameworkId: string; readonly executorId: string }[],
): void {
  const record = m.agents.get(agent.agentId);
  if (record === undefined) {
    onRegister(m, agent);
    return;
  }
  if (record.state === 'gone') {
    m.ctx.trace.append('agent:reregister-refused', { agentId: agent.agentId });
    return;
  }
  const wasActive = record.active;
  const wasUnreachable = record.state === 'unreachable';
  record.moveTo('active');
  record.reregisteredTimeMs = wallTimeMs(m.ctx);
  m.ctx.trace.append('agent:reregistered', { agentId: agent.agentId, tasks: reported.length, wasActive });
  if (wasUnreachable) rejoin(m, record);
  // An agent the operator deactivated stays unoffered across reconnections.
  else if (!wasActive && !record.deactivated) m.allocator.activateAgent(agent.agentId);
  m.toAgent(agent.agentId, { type: 'AGENT_REREGISTERED', agentId: agent.agentId });
  startPinging(m, record);
  if (wasUnreachable) restoreReachable(m, record, reported, executors);
  reconcileTasks(m, agent.agentId, reported);
  reconcileExecutors(m, agent.agentId, executors);
  const removed = new Set(m.completedFrameworks.map((f) => f.id));
  for (const frameworkId of new Set(reported.map((t) => t.frameworkId))) {
    if (removed.has(frameworkId)) m.toAgent(agent.agentId, { type: 'SHUTDOWN_FRAMEWORK', frameworkId });
  }
}

function reconcileTasks(m: MasterOps, agentId: string, reported: readonly ReportedTask[]): void {
  const known = new Set(reported.map((t) => `${t.frameworkId}\u0000${t.taskId}`));
  for (const fw of m.frameworks.values()) {
    for (const task of [...fw.tasks.values()]) {
      if (task.agentId !== agentId || task.pending || isTerminal(task.state)) continue;
      if (known.has(`${fw.id}\u0000${task.spec.taskId}`)) continue;
      const state = fw.has('PARTITION_AWARE') ? 'TASK_DROPPED' : 'TASK_LOST';
      const status = masterStatus(m, refOf(task), state, 'Task is unknown to the agent', 'REASON_TASK_UNKNOWN');
      updateTaskState(m, task, status);
      fw.send({ type: 'UPDATE', status });
    }
  }
}

function reconcileExecutors(
  m: MasterOps,
  agentId: string,
  running: readonly { readonly frameworkId: string; readonly executorId: string }[],
): void {
  const known = new Set(running.map((e) => `${e.frameworkId}\u0000${e.executorId}`));
  for (const fw of m.frameworks.values()) {
    for (const [key, record] of [...fw.executors]) {
      if (record.agentId !== agentId || known.has(`${fw.id}\u0000${record.executorId}`)) continue;
      // An executor the master added for a launch still on its way is not missing.
      if ([...fw.tasks.values()].some((t) => t.pending && t.agentId === agentId && t.executorId === record.executorId))
        continue;
      m.ctx.trace.append('executor:unknown-to-agent', { agentId, frameworkId: fw.id, executorId: record.executorId });
      removeExecutor(m, fw, key);
    }
  }
}

/** The connection to an agent broke: no more offers of it until it re-registers. */
function onAgentExited(m: MasterOps, agentId: string): void {
  const record = m.agents.get(agentId);
  if (record === undefined || !record.active) return;
  record.moveTo('disconnected');
  m.ctx.trace.append('agent:disconnected', { agentId });
  m.allocator.deactivateAgent(agentId);
  for (const fw of m.frameworks.values()) {
    for (const offer of [...fw.offers.values()]) {
      if (offer.agentId === agentId) removeOffer(m, offer, { rescind: true });
    }
  }
}

function onStatusUpdate(
  m: MasterOps,
  agentId: string,
  frameworkId: string,
  reported: TaskStatus,
  reportedLatest: TaskStatus['state'],
): void {
  // As upstream's master: an agent that has not (re-)registered with it is not heard (after a
  // failover, the agent resends its updates once it has re-registered).
  if (!m.agents.has(agentId)) {
    const { taskId, uuid } = reported;
    m.ctx.trace.appendJson('task:status-from-unknown-agent', unknownAgentText(agentId, taskId, uuid), () => ({
      agentId,
      taskId,
      uuid,
    }));
    return;
  }
  const { status, latest } = goneByDrain(m, agentId, reported, reportedLatest);
  const fw = m.frameworks.get(frameworkId);
  const { taskId, state, uuid } = status;
  m.ctx.trace.appendJson('task:status', statusText(frameworkId, agentId, taskId, state, latest, uuid), () => ({
    frameworkId,
    agentId,
    taskId,
    state,
    latest,
    uuid,
  }));
  if (fw === undefined) return;
  const task = fw.tasks.get(status.taskId);
  if (task !== undefined) updateTaskState(m, task, status, latest);
  fw.send({ type: 'UPDATE', status });
}

function onExitedExecutor(
  m: MasterOps,
  agentId: string,
  frameworkId: string,
  executorId: string,
  waitStatus: number,
): void {
  const fw = m.frameworks.get(frameworkId);
  m.ctx.trace.append('executor:exited', { agentId, frameworkId, executorId, waitStatus });
  if (fw === undefined) return;
  removeExecutor(m, fw, `${agentId}/${executorId}`);
  fw.send({ type: 'FAILURE', agentId, executorId, status: waitStatus });
}

/**
 * An agent drained with `mark_gone` reports the end of each task as
 * TASK_GONE_BY_OPERATOR, whatever its executor said (upstream's agent
 * rewrites it; the master does it here, for the agent that drains).
 */
function goneByDrain(
  m: MasterOps,
  agentId: string,
  status: TaskStatus,
  latest: TaskStatus['state'],
): { status: TaskStatus; latest: TaskStatus['state'] } {
  if (m.agents.get(agentId)?.drain?.markGone !== true) return { status, latest };
  const gone = (state: TaskStatus['state']) => (isTerminal(state) ? 'TASK_GONE_BY_OPERATOR' : state);
  return { status: { ...status, state: gone(status.state) }, latest: gone(latest) };
}

/** Upstream's master refuses an agent whose machine is DOWN, and tells it to shut down. */
function onDownMachine(m: MasterOps, agent: AgentDescription): boolean {
  if (m.maintenance.machineOfAgent(agent)?.mode !== 'DOWN') return false;
  m.ctx.trace.append('agent:register-refused', { agentId: agent.agentId, reason: 'machine down' });
  m.ctx.network.send(MASTER_NODE, agent.agentId, { type: 'SHUTDOWN_AGENT', message: 'Machine is `DOWN`' });
  return true;
}
