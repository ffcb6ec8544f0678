/**
 * Accounting the endpoints need and the core does not keep as such: what a
 * framework or an agent uses (live tasks plus executors) and has on offer,
 * and the ExecutorSpec behind an executor record. Computed from the
 * master's records on every request; nothing is cached.
 */
import { add, type Resources } from '../../core/resources.js';
import type { ExecutorRecord, Framework, Task } from '../../core/master/framework.js';
import type { Master } from '../../core/master/master.js';
import type { ExecutorSpec } from '../../core/types.js';

/** A task still holds its resources until the master recovers them on a terminal state. */
function holdsResources(task: Task): boolean {
  return !task.resourcesRecovered;
}

export function frameworkUsed(fw: Framework, agentId?: string): Resources {
  const parts: Resources[] = [];
  for (const task of fw.tasks.values()) {
    if (holdsResources(task) && (agentId === undefined || task.agentId === agentId)) parts.push(task.resources);
  }
  for (const e of fw.executors.values()) {
    if (agentId === undefined || e.agentId === agentId) parts.push(e.resources);
  }
  return add([], parts.flat());
}

export function frameworkOffered(fw: Framework, agentId?: string): Resources {
  const parts: Resources[] = [];
  for (const offer of fw.offers.values()) {
    if (agentId === undefined || offer.agentId === agentId) parts.push(offer.resources);
  }
  return add([], parts.flat());
}

/** Removed frameworks hold nothing, so only the registered ones count. */
export function agentUsed(master: Master, agentId: string): Resources {
  return add([], [...master.frameworks.values()].flatMap((fw) => frameworkUsed(fw, agentId)));
}

export function agentOffered(master: Master, agentId: string): Resources {
  return add([], [...master.frameworks.values()].flatMap((fw) => frameworkOffered(fw, agentId)));
}

/**
 * The master keeps only the id, agent and resources of an executor. A
 * custom executor's spec travels in each of its tasks; a task group's
 * executor is not kept anywhere, but only DEFAULT executors run groups, so
 * that much is known of it.
 */
export function executorSpecOf(fw: Framework, record: ExecutorRecord): ExecutorSpec {
  for (const task of [...fw.tasks.values(), ...fw.completedTasks]) {
    const spec = task.spec.executor;
    if (task.agentId === record.agentId && spec?.executorId === record.executorId) return spec;
  }
  return { executorId: record.executorId, type: 'DEFAULT', resources: record.resources };
}
