/**
 * What operators do to agents, as upstream's master does it:
 *
 *   deactivate   no more offers of the agent; its outstanding offers are rescinded
 *   reactivate   offers again (once it is connected); refused while it drains
 *   drain        deactivated, every task on it killed; DRAINING until it holds
 *                no task, then DRAINED, then gone if the drain asked for it
 *   mark gone    never comes back: its tasks end (TASK_GONE_BY_OPERATOR for
 *                PARTITION_AWARE frameworks, TASK_LOST for the others), its
 *                executors are forgotten, frameworks get FAILURE, the agent
 *                is told to shut down, operator subscribers get AGENT_REMOVED
 *
 * Kill grace periods are not simulated: a killed task ends as soon as its
 * executor hears of it, within any `max_grace_period`.
 */
import { wallTimeMs } from '../network/context.js';
import { done, fail, type Outcome } from '../model/errors.js';
import { isTerminal } from '../model/task-state.js';
import type { StatusReason, TaskState } from '../model/types.js';
import { killDuringLaunch } from './accept.js';
import type { AgentRecord } from './agents.js';
import { refOf, type Framework } from './framework.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { unavailabilityChanged } from './inverse-offers.js';
import { masterStatus, removeExecutor, updateTaskState } from './tasks.js';

/** Upstream finds recovered, registered and unreachable agents; a gone one is none of these. */
function knownAgent(m: MasterOps, agentId: string): AgentRecord | undefined {
  const record = m.agents.get(agentId);
  return record === undefined || record.state === 'gone' ? undefined : record;
}

export function deactivateAgent(m: MasterOps, agentId: string): Outcome {
  const record = knownAgent(m, agentId);
  if (record === undefined) return fail('INVALID', 'Unknown agent');
  deactivate(m, record);
  return done;
}

function deactivate(m: MasterOps, record: AgentRecord): void {
  record.deactivated = true;
  m.ctx.trace.append('agent:deactivated', { agentId: record.id });
  m.allocator.deactivateAgent(record.id);
  rescindOffers(m, record.id);
}

export function reactivateAgent(m: MasterOps, agentId: string): Outcome {
  const record = m.agents.get(agentId);
  if (record === undefined || !record.deactivated) return fail('INVALID', 'Agent is not deactivated');
  if (record.drain?.state === 'DRAINING') return fail('INVALID', 'Agent is still in the DRAINING state');
  record.deactivated = false;
  record.drain = undefined;
  record.drainStartTimeMs = undefined;
  m.draining.delete(agentId);
  m.ctx.trace.append('agent:reactivated', { agentId, connected: record.active });
  // A disconnected agent is activated when it re-registers.
  if (record.active) m.allocator.activateAgent(agentId);
  return done;
}

export function drainAgent(
  m: MasterOps,
  agentId: string,
  maxGracePeriodMs: number | undefined,
  markGone: boolean,
): Outcome {
  const record = knownAgent(m, agentId);
  if (record === undefined) return fail('INVALID', 'Unknown agent');
  record.drain = { state: 'DRAINING', markGone, ...(maxGracePeriodMs === undefined ? {} : { maxGracePeriodMs }) };
  record.drainStartTimeMs = wallTimeMs(m.ctx);
  m.draining.add(agentId);
  m.ctx.trace.append('agent:draining', { agentId, maxGracePeriodMs, markGone });
  deactivate(m, record);
  for (const fw of m.frameworks.values()) {
    for (const task of [...fw.tasks.values()]) {
      if (task.agentId !== agentId || isTerminal(task.state)) continue;
      if (task.pending) killDuringLaunch(m, fw, task);
      else m.toAgent(agentId, { type: 'KILL_TASK', frameworkId: fw.id, taskId: task.spec.taskId });
    }
  }
  return done;
}

/** The drain is over: DRAINED, and gone when asked. */
export function transitionDrained(m: MasterOps, record: AgentRecord): void {
  const drain = record.drain!;
  record.drain = { ...drain, state: 'DRAINED' };
  m.draining.delete(record.id);
  m.ctx.trace.append('agent:drained', { agentId: record.id, markGone: drain.markGone });
  if (drain.markGone) markAgentGone(m, record.id);
}

export function markAgentGone(m: MasterOps, agentId: string): Outcome {
  const record = m.agents.get(agentId);
  if (record === undefined) return fail('NOT_FOUND', `Agent '${agentId}' not found`);
  if (record.state === 'gone') return done;
  m.ctx.trace.append('agent:gone', { agentId });
  removeAgent(m, record, {
    state: (fw) => (fw.has('PARTITION_AWARE') ? 'TASK_GONE_BY_OPERATOR' : 'TASK_LOST'),
    message: 'Agent has been marked gone',
    reason: 'REASON_AGENT_REMOVED_BY_OPERATOR',
    shutdown: 'Agent has been marked gone',
  });
  return done;
}

/** How an agent leaves for good: what its live tasks become, and the words. */
export interface Removal {
  readonly state: (fw: Framework) => TaskState;
  readonly message: string;
  readonly reason: StatusReason;
  /** What the agent is told as it is shut down. */
  readonly shutdown: string;
}

/**
 * The agent leaves and never comes back under its id: its offers are
 * rescinded, its resources leave the cluster, its tasks end, its executors
 * are forgotten, frameworks get FAILURE, the agent is told to shut down and
 * operator subscribers get AGENT_REMOVED.
 */
export function removeAgent(m: MasterOps, record: AgentRecord, removal: Removal): void {
  const agentId = record.id;
  m.allocator.deactivateAgent(agentId);
  rescindOffers(m, agentId);
  record.moveTo('gone');
  // A gone agent's resources leave the cluster's capacity and its reservations.
  m.totals.set(agentId, undefined);
  m.draining.delete(agentId);
  for (const fw of m.frameworks.values()) {
    const state = removal.state(fw);
    for (const task of [...fw.tasks.values()]) {
      if (task.agentId !== agentId) continue;
      if (!isTerminal(task.state)) {
        // A launch still on its way is never delivered now.
        task.pending = false;
        const status = masterStatus(m, refOf(task), state, removal.message, removal.reason);
        updateTaskState(m, task, status);
        fw.send({ type: 'UPDATE', status });
      }
      fw.completeTask(task);
    }
    for (const [key, executor] of [...fw.executors]) if (executor.agentId === agentId) removeExecutor(m, fw, key);
    fw.send({ type: 'FAILURE', agentId });
  }
  // Everything on it is recovered now: the allocator forgets it, so its
  // resources no longer count in the cluster's totals and shares.
  m.allocator.removeAgent(agentId);
  if (m.maintenance.active) unavailabilityChanged(m, agentId);
  m.toAgent(agentId, { type: 'SHUTDOWN_AGENT', message: removal.shutdown });
  m.feed.emit(() => ({ type: 'AGENT_REMOVED', agentId }));
}

function rescindOffers(m: MasterOps, agentId: string): void {
  for (const fw of m.frameworks.values()) {
    for (const offer of [...fw.offers.values()])
      if (offer.agentId === agentId) removeOffer(m, offer, { rescind: true });
  }
}
