/**
 * The faults that change which agents the cluster has (faults/vocabulary.ts):
 *
 *   add_agent     a new agent process boots with the resources and attributes
 *                 given and registers as the others did. The rest of it is the
 *                 cluster's first agent's: its hostname, address and flags; its
 *                 port is the next after the highest any agent has (5051 on
 *                 localhost with upstream's flags when the cluster has none), so
 *                 it is the same for every run of a seed; a hostname or a port
 *                 the fault gives are the new agent's instead
 *   remove_agent  the agent is decommissioned for good: the leading master marks
 *                 it gone as MARK_AGENT_GONE does (master/agent-admin.ts: its tasks
 *                 end TASK_GONE_BY_OPERATOR for PARTITION_AWARE frameworks,
 *                 TASK_LOST for the others, frameworks get FAILURE, the agent is
 *                 told to shut down and is never heard again), with no ACL asked
 *   schedule_maintenance
 *                 the agent's machine (its hostname and IP) joins the leader's
 *                 maintenance schedule in a window of its own, unavailable from
 *                 `startInMs` on for `durationMs`, as UPDATE_MAINTENANCE_SCHEDULE
 *                 would put it (a window it had before is replaced); it is
 *                 DRAINING, so frameworks using it get inverse offers
 *
 * Where an added agent is comes from the core alone, so a run is the same
 * with listeners or without; the composition root serves its agent API
 * there, when the cluster listens (start/added-agents.ts).
 */
import type { AgentConfig, AgentFlags } from '../agent/flags.js';
import type { Agent } from '../agent/agent.js';
import { markAgentGone } from '../master/agent-admin.js';
import { updateSchedule } from '../master/maintenance.js';
import { machineKey, machineOf, type MachineId } from '../model/maintenance.js';
import { wallTimeMs } from '../network/context.js';
import type { Master } from '../master/master.js';
import { fail, ok, type Outcome } from '../model/errors.js';
import type { Trace } from '../kernel/trace.js';
import { NO_LEADER } from './master.js';
import type { Fault, FaultResult } from './vocabulary.js';

export type AgentFault = Extract<Fault, { readonly type: 'add_agent' | 'remove_agent' | 'schedule_maintenance' }>;

export function isAgentFault(fault: Fault): fault is AgentFault {
  return fault.type === 'add_agent' || fault.type === 'remove_agent' || fault.type === 'schedule_maintenance';
}

/** What the cluster offers these faults: its agent processes, the leader, and its addAgent input. */
export interface AgentFaultTarget {
  readonly agents: ReadonlyMap<string, Agent>;
  readonly leader: Master | undefined;
  addAgent(spec: Omit<AgentConfig, 'id' | 'flags'> & { readonly flags?: Partial<AgentFlags> }): { readonly id: string };
}

/** Where an agent added to a cluster that has none listens, as upstream's agent does by default. */
const FIRST_AGENT = { hostname: 'localhost', ip: '127.0.0.1', port: 5051 };

export function injectAgentFault(target: AgentFaultTarget, trace: Trace, fault: AgentFault): Outcome<FaultResult> {
  if (fault.type === 'add_agent') {
    const { type, ...parameters } = fault;
    trace.append(`fault:${type}`, parameters);
    const first = target.agents.values().next().value?.config;
    let port = FIRST_AGENT.port - 1;
    for (const agent of target.agents.values()) port = Math.max(port, agent.config.port);
    const added = target.addAgent({
      hostname: fault.hostname ?? first?.hostname ?? FIRST_AGENT.hostname,
      ip: first?.ip ?? FIRST_AGENT.ip,
      port: fault.port ?? port + 1,
      resources: fault.resources,
      attributes: fault.attributes,
      ...(first === undefined ? {} : { flags: first.flags }),
    });
    return ok({ agentId: added.id });
  }
  const agent = target.agents.get(fault.agentId);
  if (agent === undefined) return fail('NOT_FOUND', `Agent '${fault.agentId}' not found`);
  const leader = target.leader;
  if (leader === undefined) return fail('UNAVAILABLE', NO_LEADER);
  if (fault.type === 'schedule_maintenance') {
    const { type, ...parameters } = fault;
    trace.append(`fault:${type}`, parameters);
    const outcome = scheduleMachine(leader, machineOf(agent.config), fault.startInMs, fault.durationMs);
    return outcome.ok ? ok({ agentId: fault.agentId }) : outcome;
  }
  trace.append('fault:remove_agent', { agentId: fault.agentId });
  const outcome = markAgentGone(leader, fault.agentId);
  return outcome.ok ? ok({ agentId: fault.agentId }) : outcome;
}

/** The leader's schedule with the machine in a window of its own (any window it was in loses it). */
function scheduleMachine(leader: Master, machine: MachineId, startInMs: number, durationMs: number): Outcome {
  const key = machineKey(machine);
  const windows = leader.maintenance.schedule.windows
    .map((w) => ({ ...w, machines: w.machines.filter((id) => machineKey(id) !== key) }))
    .filter((w) => w.machines.length > 0);
  const startNs = (wallTimeMs(leader.ctx) + startInMs) * 1e6;
  const window = { machines: [machine], unavailability: { startNs, durationNs: durationMs * 1e6 } };
  return updateSchedule(leader, { windows: [...windows, window] });
}
