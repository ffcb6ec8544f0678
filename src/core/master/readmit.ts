/**
 * An agent re-registers with a master that does not know what it runs: a
 * leader elected after a failover (the agent is one it recovered from the
 * registry, or one marked unreachable before it learnt of its tasks), or
 * any master for an agent it has never seen. As upstream's master does
 * with a ReregisterSlaveMessage, it takes the agent in with everything it
 * reports: the frameworks it does not know yet are added as recovered
 * (inactive, not connected, offered nothing until they re-subscribe), and
 * the agent's tasks and executors are rebuilt, holding their resources.
 * An agent that was unreachable keeps only the tasks of partition-aware
 * frameworks; the others are shut down on it, as upstream does.
 */
import { wallTimeMs } from '../network/context.js';
import type { AgentToMaster, ReportedExecutor, ReportedTask } from '../model/messages.js';
import { add, allocate as withAllocationRole, normalise, type Resources } from '../model/resources.js';
import { isTerminal } from '../model/task-state.js';
import { startPinging } from './agent-health.js';
import { AgentRecord } from './agents.js';
import type { Framework } from './framework.js';
import type { Task } from '../model/records.js';
import type { MasterOps } from './ops.js';
import { addExecutor, recoverTaskResources } from './tasks.js';
import { agentSnapshot, taskSnapshot } from './snapshots.js';

export type Reregistration = Extract<AgentToMaster, { readonly type: 'REREGISTER_AGENT' }>;

/** Whether the master must learn the agent's tasks from its re-registration. */
export function mustReadmit(m: MasterOps, agentId: string): boolean {
  const record = m.agents.get(agentId);
  return record === undefined || (record.state === 'unreachable' && m.recovery.unlearnt.has(agentId));
}

export function readmit(m: MasterOps, message: Reregistration): void {
  const { agent } = message;
  const agentId = agent.agentId;
  const wasUnreachable = m.recovery.unlearnt.delete(agentId);
  m.recovery.recovered.delete(agentId);
  const now = wallTimeMs(m.ctx);
  const previous = m.agents.get(agentId);
  const record = new AgentRecord(agent, previous?.registeredTimeMs ?? now);
  record.reregisteredTimeMs = now;
  record.deactivated = m.recovery.deactivated.delete(agentId) || previous?.deactivated === true;
  m.agents.set(agentId, record);
  m.totals.set(agentId, agent.resources);
  m.allocator.addAgent(agentId, agent.resources, { hostname: agent.hostname, attributes: agent.attributes });
  if (record.deactivated) m.allocator.deactivateAgent(agentId);
  m.ctx.trace.append('agent:readmitted', {
    agentId,
    tasks: message.tasks.length,
    executors: message.executors.length,
    wasUnreachable,
  });
  const removed = new Set(m.completedFrameworks.map((f) => f.id));
  for (const info of message.frameworks ?? []) {
    if (!m.frameworks.has(info.id) && !removed.has(info.id)) m.recoverFramework(info);
  }
  const shutdown = new Set<string>();
  const learnt = new Learnt(m, agentId);
  for (const reported of message.tasks) {
    const fw = m.frameworks.get(reported.frameworkId);
    if (removed.has(reported.frameworkId) || (fw !== undefined && wasUnreachable && !fw.has('PARTITION_AWARE')))
      shutdown.add(reported.frameworkId);
    else if (fw !== undefined) learnt.task(fw, reported);
  }
  learnt.hold();
  for (const executor of message.executors) {
    const fw = m.frameworks.get(executor.frameworkId);
    if (fw !== undefined && !shutdown.has(fw.id)) learnExecutor(m, fw, agentId, executor);
  }
  m.toAgent(agentId, { type: 'AGENT_REREGISTERED', agentId });
  for (const frameworkId of shutdown) m.toAgent(agentId, { type: 'SHUTDOWN_FRAMEWORK', frameworkId });
  startPinging(m, record);
  m.feed.emit(() => ({ type: 'AGENT_ADDED', agent: agentSnapshot(record, m.ledger) }));
}

/** The role a reported task's resources were allocated to: its own tag, else the framework's (first) role. */
function roleOf(fw: Framework, resources: Resources): string {
  return resources.find((r) => r.allocationRole !== undefined)?.allocationRole ?? fw.roles()[0] ?? '*';
}

/**
 * The tasks an agent reports, learnt: each recorded at once, and what they
 * hold booked in one step per framework (the master's books and the
 * allocator's), as the sum of their resources. An agent reports thousands
 * at once after a failover, and a book changed once costs what one task
 * costs; the sums are exact (whole milli-units, ranges and sets), so the
 * books end as they would one task at a time. Tasks launched alike share
 * one resource bag: each bag is tagged with its role once and counted.
 */
class Learnt {
  /** Per framework, how many learnt tasks hold each (tagged) bag, and the tasks that ended. */
  readonly #held = new Map<Framework, { bags: Map<Resources, number>; ended: Task[] }>();
  /** Per framework, each reported bag with its role and tagged bag. */
  readonly #tagged = new Map<Framework, Map<Resources, { role: string; resources: Resources }>>();

  constructor(
    private readonly m: MasterOps,
    private readonly agentId: string,
  ) {}

  task(fw: Framework, reported: ReportedTask): void {
    const spec = reported.spec;
    // Only an update is left of a task whose executor is gone: the update itself tells the master.
    if (spec === undefined || fw.tasks.has(reported.taskId)) return;
    const { role, resources } = this.#tag(fw, spec.resources);
    const task: Task = {
      spec,
      frameworkId: fw.id,
      agentId: this.agentId,
      executorId: reported.command === true ? undefined : reported.executorId,
      role,
      resources,
      state: reported.state,
      statuses: [],
      pending: false,
      resourcesRecovered: false,
    };
    fw.tasks.set(spec.taskId, task);
    if (this.m.feed.heard)
      this.m.feed.emit(() => ({ type: 'TASK_ADDED', task: taskSnapshot(task), user: fw.info.user }));
    let held = this.#held.get(fw);
    if (held === undefined) this.#held.set(fw, (held = { bags: new Map(), ended: [] }));
    held.bags.set(resources, (held.bags.get(resources) ?? 0) + 1);
    if (isTerminal(task.state)) held.ended.push(task);
  }

  /** Books what the learnt tasks hold; those that had ended give theirs back. */
  hold(): void {
    for (const [fw, { bags, ended }] of this.#held) {
      let sum: Resources = [];
      for (const [bag, count] of bags) sum = add(sum, times(bag, count));
      this.m.ledger.hold('used', { frameworkId: fw.id, agentId: this.agentId }, sum);
      this.m.allocator.holdUsed(fw.id, this.agentId, sum);
      for (const task of ended) recoverTaskResources(this.m, task);
    }
  }

  #tag(fw: Framework, bag: Resources): { role: string; resources: Resources } {
    let tagged = this.#tagged.get(fw);
    if (tagged === undefined) this.#tagged.set(fw, (tagged = new Map()));
    let known = tagged.get(bag);
    if (known === undefined) {
      const role = roleOf(fw, bag);
      tagged.set(bag, (known = { role, resources: withAllocationRole(bag, role) }));
    }
    return known;
  }
}

/** `count` copies of a normal bag, summed: scalars times `count` (whole milli-units, exact); ranges and sets of copies are their union, the bag's own. */
function times(bag: Resources, count: number): Resources {
  if (count === 1) return bag;
  return normalise(bag.map((r) => (r.type === 'SCALAR' ? { ...r, milli: (r.milli ?? 0) * count } : r)));
}

function learnExecutor(m: MasterOps, fw: Framework, agentId: string, reported: ReportedExecutor): void {
  const key = `${agentId}/${reported.executorId}`;
  if (fw.executors.has(key)) return;
  const own = reported.resources ?? [];
  const resources = withAllocationRole(own, roleOf(fw, own));
  addExecutor(m, fw, key, { executorId: reported.executorId, agentId, resources });
  m.allocator.holdUsed(fw.id, agentId, resources);
}
