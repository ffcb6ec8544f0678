/**
 * The master's health checks of agents, as upstream's agent observer does
 * them. Every `--agent_ping_timeout` (15 s) the master sends a registered
 * agent a PING, and a PONG answers it; once `--max_agent_ping_timeouts` (5)
 * pings in a row went unanswered (a partition, a crashed agent that did not
 * come back), 75 s to 90 s after the agent last answered, it is unreachable:
 *
 *   - its tasks end for the master: TASK_UNREACHABLE for PARTITION_AWARE
 *     frameworks (kept, listed as unreachable tasks), TASK_LOST for the
 *     others (completed), both from SOURCE_MASTER with REASON_AGENT_REMOVED
 *     and `unreachable_time`;
 *   - its offers are rescinded, its executors set aside, and what its tasks
 *     and executors held is recovered (the agent is not offered meanwhile);
 *   - every framework gets FAILURE with the agent's id; operator
 *     subscribers get AGENT_REMOVED.
 *
 * An unreachable agent that re-registers is taken back: the tasks of
 * PARTITION_AWARE frameworks it still runs return in the state it reports,
 * with their executors; frameworks that are not partition-aware, whose
 * tasks were reported lost, are shut down on it.
 */
import { wallTimeMs } from '../network/context.js';
import { MASTER_NODE, type ReportedTask } from '../model/messages.js';
import type { QuietPings } from '../network/network.js';
import { isTerminal } from '../model/task-state.js';
import type { AgentRecord, PingRound, PingState } from './agents.js';
import { refOf } from './framework.js';
import type { ExecutorRecord } from '../model/records.js';
import type { MasterOps } from './ops.js';
import { removeOffer } from './offers.js';
import { addExecutor, masterStatus, recoverTaskResources, removeExecutor, updateTaskState } from './tasks.js';
import { agentSnapshot } from './snapshots.js';

export const AGENT_PING_TIMEOUT_MS = 15_000;
export const MAX_AGENT_PING_TIMEOUTS = 5;

/** Upstream's message for tasks of an agent that failed its health checks. */
const UNREACHABLE_MESSAGE = 'health check timed out';

/*
 * The agents that started pinging at one instant are pinged together, by
 * one timer every 15 s, in the order they started: each is handled as its
 * own timer would have handled it, and a large cluster has one timer per
 * instant agents registered at rather than one per agent.
 *
 * Quiet pings: a PING and its PONG that went through at once (nothing on
 * the link could delay or lose them) go through the same way every 15 s
 * until something changes on the link (the network tells, through
 * `quietPings`). Until then a round only notes that it pinged the agent: no
 * messages, and the agent's watch asks the network when its master last
 * pinged it so.
 */
/** Starts (or starts again) pinging an agent that registered or re-registered. */
export function startPinging(m: MasterOps, record: AgentRecord): void {
  stopPinging(m, record);
  const round = joinRound(m, m.ctx.loop.now() + AGENT_PING_TIMEOUT_MS, record);
  record.pings = { awaiting: false, missed: 0, round, quiet: false };
  ping(m, record);
}

/** Its round drops it when it next comes round. */
function stopPinging(m: MasterOps, record: AgentRecord): void {
  leaveQuiet(m, record);
  record.pings = undefined;
}

/** What the network asks of and tells the quiet pings (`Network.reportQuietPings`). */
export function quietPings(m: MasterOps): QuietPings {
  return {
    lastPingMs(agentId) {
      const record = m.agents.get(agentId);
      const pings = record?.pings;
      // A quiet agent was pinged when its round last came round (or at its one loud ping, which it heard).
      return pings?.quiet === true ? pings.round.dueMs - AGENT_PING_TIMEOUT_MS : record?.quietPingMs;
    },
    goOn: (agentId) => m.agents.get(agentId)?.pings?.quiet === true,
    linkChanged(a, b) {
      // Only links to the master carry pings: the agent at the other end of one, or every agent.
      const other = a === MASTER_NODE ? b : b === MASTER_NODE ? a : a === undefined ? b : b === undefined ? a : null;
      if (other === null) return;
      if (other === undefined) {
        for (const record of m.agents.values()) leaveQuiet(m, record);
        return;
      }
      const record = m.agents.get(other);
      if (record !== undefined) leaveQuiet(m, record);
    },
  };
}

/** Pings of the agent are loud again: the last quiet one is kept for its watch, which wakes. */
function leaveQuiet(m: MasterOps, record: AgentRecord): void {
  const pings = record.pings;
  if (pings?.quiet !== true) return;
  record.quietPingMs = pings.round.dueMs - AGENT_PING_TIMEOUT_MS;
  pings.quiet = false;
  m.ctx.network.quietPingsEnded(record.id);
}

/** Adds an agent to the round due at `dueMs`, made and scheduled if there is none. */
function joinRound(m: MasterOps, dueMs: number, record: AgentRecord): PingRound {
  let round = m.pingRounds.get(dueMs);
  if (round === undefined) {
    const made: PingRound = { members: new Set(), dueMs };
    m.pingRounds.set(dueMs, (round = made));
    m.ctx.loop.schedule(dueMs - m.ctx.loop.now(), 'agent:ping-timeout', () => runRound(m, made));
  }
  round.members.add(record);
  return round;
}

/**
 * Each member still in the round: a missed ping counted, then unreachable or
 * pinged again. The round then comes round again 15 s later, the same
 * object with the same members (those that left it dropped), unless agents
 * started pinging at this instant: they have a round due then, which takes
 * this one's members.
 */
function runRound(m: MasterOps, round: PingRound): void {
  m.pingRounds.delete(round.dueMs);
  for (const record of round.members) {
    const pings = record.pings;
    if (pings?.round !== round) {
      round.members.delete(record);
      continue;
    }
    // The operator marked it gone meanwhile: it is never pinged again.
    if (record.state === 'gone') {
      stopPinging(m, record);
      round.members.delete(record);
      continue;
    }
    if (!pings.quiet && !pingAgain(m, record, pings)) round.members.delete(record);
  }
  if (round.members.size === 0) return;
  const dueMs = round.dueMs + AGENT_PING_TIMEOUT_MS;
  const joined = m.pingRounds.get(dueMs);
  if (joined === undefined) {
    round.dueMs = dueMs;
    m.pingRounds.set(dueMs, round);
    m.ctx.loop.schedule(AGENT_PING_TIMEOUT_MS, 'agent:ping-timeout', () => runRound(m, round));
    return;
  }
  for (const record of round.members) {
    joined.members.add(record);
    record.pings!.round = joined;
  }
}

/** A loud ping's turn: false when the agent leaves its round (unreachable, or pinging anew). */
function pingAgain(m: MasterOps, record: AgentRecord, pings: PingState): boolean {
  if (pings.awaiting) pings.missed++;
  if (pings.missed >= MAX_AGENT_PING_TIMEOUTS) {
    markUnreachable(m, record);
    return false;
  }
  ping(m, record);
  return record.pings === pings;
}

/**
 * A PING, answered at once (inside this call) when nothing on the link
 * could delay or lose it or its PONG (see `Network.sendNow`): the agent's
 * pings are quiet from then on.
 */
function ping(m: MasterOps, record: AgentRecord): void {
  leaveQuiet(m, record);
  const pings = record.pings!;
  pings.awaiting = true;
  const message = { type: 'PING' } as const;
  if (!m.ctx.network.sendNow(MASTER_NODE, record.id, message)) m.toAgent(record.id, message);
  else if (!pings.awaiting && record.pings === pings) pings.quiet = true;
}

/** When the agent was marked unreachable, if it is now. */
export function unreachableSince(m: MasterOps, agentId: string | undefined): number | undefined {
  const record = agentId === undefined ? undefined : m.agents.get(agentId);
  return record?.state === 'unreachable' ? record.unreachableTimeMs : undefined;
}

/** A PONG: the agent is alive. */
export function onPong(record: AgentRecord): void {
  if (record.pings === undefined) return;
  record.pings.awaiting = false;
  record.pings.missed = 0;
}

export function markUnreachable(m: MasterOps, record: AgentRecord): void {
  const agentId = record.id;
  stopPinging(m, record);
  record.moveTo('unreachable');
  const unreachableTimeMs = wallTimeMs(m.ctx);
  record.unreachableTimeMs = unreachableTimeMs;
  m.ctx.trace.append('agent:unreachable', { agentId, missedPings: MAX_AGENT_PING_TIMEOUTS });
  m.allocator.deactivateAgent(agentId);
  for (const fw of m.frameworks.values()) {
    for (const offer of [...fw.offers.values()])
      if (offer.agentId === agentId) removeOffer(m, offer, { rescind: true });
  }
  const executors = new Map<string, ExecutorRecord>();
  for (const fw of m.frameworks.values()) {
    const partitionAware = fw.has('PARTITION_AWARE');
    for (const task of [...fw.tasks.values()]) {
      if (task.agentId !== agentId || isTerminal(task.state)) continue;
      // A launch still on its way is never delivered now.
      task.pending = false;
      const state = partitionAware ? 'TASK_UNREACHABLE' : 'TASK_LOST';
      const status = {
        ...masterStatus(m, refOf(task), state, UNREACHABLE_MESSAGE, 'REASON_AGENT_REMOVED'),
        unreachableTimeMs,
      };
      updateTaskState(m, task, status);
      recoverTaskResources(m, task);
      if (!partitionAware) fw.completeTask(task);
      fw.send({ type: 'UPDATE', status });
    }
    for (const [key, executor] of [...fw.executors]) {
      if (executor.agentId !== agentId) continue;
      if (partitionAware) executors.set(`${fw.id}\u0000${key}`, executor);
      removeExecutor(m, fw, key);
    }
    fw.send({ type: 'FAILURE', agentId });
  }
  record.parkedExecutors = executors;
  // Everything on it is recovered now: as upstream removes the agent from
  // its allocator, its resources stop counting in the totals and shares
  // (and in the capacity quota guarantees are checked against).
  m.allocator.removeAgent(agentId);
  m.totals.set(agentId, undefined);
  m.feed.emit(() => ({ type: 'AGENT_REMOVED', agentId }));
}

/**
 * An unreachable agent re-registered (the master has moved it to active):
 * what it still runs of PARTITION_AWARE frameworks comes back, the other
 * frameworks are shut down on it. Tasks it no longer reports are left to
 * the re-registration's reconciliation.
 */
export function restoreReachable(
  m: MasterOps,
  record: AgentRecord,
  reported: readonly ReportedTask[],
  executors: readonly { readonly frameworkId: string; readonly executorId: string }[],
): void {
  const agentId = record.id;
  m.ctx.trace.append('agent:reachable', {
    agentId,
    unreachableTimeMs: record.unreachableTimeMs,
    tasks: reported.length,
  });
  record.unreachableTimeMs = undefined;
  const shutdown = new Set<string>();
  for (const t of reported) {
    const fw = m.frameworks.get(t.frameworkId);
    if (fw === undefined) continue;
    if (!fw.has('PARTITION_AWARE')) {
      shutdown.add(fw.id);
      continue;
    }
    const task = fw.tasks.get(t.taskId);
    if (task === undefined || task.agentId !== agentId || task.state !== 'TASK_UNREACHABLE' || isTerminal(t.state))
      continue;
    // A terminal state reaches the master as the agent's own update, which it sends again.
    task.state = t.state;
    task.resourcesRecovered = false;
    m.allocator.holdUsed(fw.id, agentId, task.resources);
    m.ledger.hold('used', task, task.resources);
  }
  const running = new Set(executors.map((e) => `${e.frameworkId}\u0000${agentId}/${e.executorId}`));
  for (const [id, executor] of record.parkedExecutors) {
    const fw = m.frameworks.get(id.split('\u0000')[0]!);
    if (fw === undefined || !running.has(id)) continue;
    const key = id.slice(fw.id.length + 1);
    addExecutor(m, fw, key, executor);
    m.allocator.holdUsed(fw.id, agentId, executor.resources);
  }
  record.parkedExecutors = new Map();
  for (const frameworkId of shutdown) m.toAgent(agentId, { type: 'SHUTDOWN_FRAMEWORK', frameworkId });
  m.feed.emit(() => ({ type: 'AGENT_ADDED', agent: agentSnapshot(record, m.ledger) }));
}
