/**
 * A new leader's recovery from the registry, as upstream's master does it
 * after a failover:
 *
 *   - agents the registry admitted are "recovered": not yet registered with
 *     this master, listed as `recovered_slaves`, expected to re-register
 *     (with their tasks, executors and frameworks: readmit.ts);
 *   - unreachable and gone agents stay so; quotas and weights apply again;
 *   - with a quota set, the allocator pauses (no offers) until 80% of the
 *     recovered agents are back, or 10 minutes pass (upstream's allocator
 *     `recover`: the pause protects quota from a partial view of the
 *     cluster; without quota there is nothing to protect and no pause);
 *   - a recovered agent that has not re-registered within
 *     `--agent_reregister_timeout` (10 minutes) is marked unreachable, and
 *     every framework gets FAILURE with its id. Its tasks were never known
 *     to this master: a framework learns of them by reconciling
 *     (TASK_UNREACHABLE with `unreachable_time` for partition-aware ones,
 *     else TASK_LOST).
 */
import { wallTimeMs } from '../network/context.js';
import { AgentRecord } from './agents.js';
import type { MasterOps } from './ops.js';
import type { Registry } from './registry.js';

export const DEFAULT_AGENT_REREGISTER_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_ALLOCATOR_RECOVERY_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_ALLOCATOR_AGENT_RECOVERY_FACTOR = 0.8;

/** Builds the state of a master that was just elected from the registry. */
export function recoverFromRegistry(m: MasterOps, registry: Registry): void {
  const now = wallTimeMs(m.ctx);
  for (const [role, config] of registry.quotas) {
    m.quotas.set(role, config);
    m.allocator.setQuota(role, config);
  }
  for (const [role, weight] of registry.weights) m.weights.set(role, weight);
  if (registry.weights.size > 0) m.allocator.setWeights(m.weights);
  m.maintenance.restore(registry.maintenance.schedule, registry.maintenance.machines);
  for (const [id, agent] of registry.agents) {
    if (agent.deactivated === true) m.recovery.deactivated.add(id);
    if (agent.state === 'admitted') {
      m.recovery.recovered.set(id, agent.info);
      continue;
    }
    const record = new AgentRecord(agent.info, now);
    record.moveTo(agent.state);
    record.deactivated = agent.deactivated === true;
    if (agent.state === 'unreachable') {
      record.unreachableTimeMs = agent.unreachableTimeMs;
      m.recovery.unlearnt.add(id);
    }
    m.agents.set(id, record);
  }
  const recovered = m.recovery.recovered.size;
  m.ctx.trace.append('master:recovered', {
    recovered,
    unreachable: registry.count('unreachable'),
    gone: registry.count('gone'),
    quotas: registry.quotas.size,
  });
  pauseAllocator(m, recovered);
  const timeoutMs = m.options.agentReregisterTimeoutMs ?? DEFAULT_AGENT_REREGISTER_TIMEOUT_MS;
  if (recovered > 0)
    m.ctx.loop.schedule(timeoutMs, 'master:agent-reregister-timeout', () => markRecoveredUnreachable(m));
}

/** Upstream's allocator recovery: only with quota, and only when some agent is expected. */
function pauseAllocator(m: MasterOps, recovered: number): void {
  if (m.quotas.size === 0) return;
  const factor = m.options.allocatorAgentRecoveryFactor ?? DEFAULT_ALLOCATOR_AGENT_RECOVERY_FACTOR;
  const expected = Math.floor(recovered * factor);
  if (expected === 0) return;
  m.allocator.pause(expected);
  m.ctx.loop.schedule(
    m.options.allocatorRecoveryTimeoutMs ?? DEFAULT_ALLOCATOR_RECOVERY_TIMEOUT_MS,
    'allocator:recovery-timeout',
    () => m.allocator.resume(),
  );
}

/** `--agent_reregister_timeout` passed: the recovered agents still away are unreachable. */
function markRecoveredUnreachable(m: MasterOps): void {
  const unreachableTimeMs = wallTimeMs(m.ctx);
  for (const [agentId, info] of m.recovery.recovered) {
    // Registered meanwhile (without re-registering): it is not missing.
    if (m.agents.has(agentId)) continue;
    const record = new AgentRecord(info, unreachableTimeMs);
    record.moveTo('unreachable');
    record.deactivated = m.recovery.deactivated.has(agentId);
    record.unreachableTimeMs = unreachableTimeMs;
    m.agents.set(agentId, record);
    m.recovery.unlearnt.add(agentId);
    m.ctx.trace.append('agent:unreachable', { agentId, reason: 'did not re-register after master failover' });
    for (const fw of m.frameworks.values()) fw.send({ type: 'FAILURE', agentId });
  }
  m.recovery.recovered.clear();
}
