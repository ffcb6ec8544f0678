/**
 * The master's registry: what upstream's registrar keeps in its replicated
 * log, and so what survives the leading master's death. It holds the
 * agents the cluster admitted (their AgentInfo, and whether the operator
 * deactivated them), those marked unreachable (with the time) and those
 * marked gone, the operator's quotas, the role weights, and the
 * maintenance schedule with its machines' modes, and nothing else (a drain
 * in progress and the answers to inverse offers are not kept): frameworks, offers, tasks, executors and
 * operations live in the master's memory only, and a new leader learns
 * them again from re-registering agents and re-subscribing frameworks.
 *
 * Upstream's master writes each change to the registrar before it acts on
 * it; in the simulation every registrar operation completes at the
 * instant it is made, so the registry at any instant is exactly the
 * master's durable records, and it is read off them when the master dies
 * (`Registry.of`). A new leader is built from it (`recovery.ts`).
 */
import type { AgentDescription } from '../model/messages.js';
import type { QuotaConfig } from '../model/types.js';
import { EMPTY_SCHEDULE, type MachineInfo, type MaintenanceSchedule } from '../model/maintenance.js';
import type { MasterOps } from './ops.js';

export type RegisteredAgentState = 'admitted' | 'unreachable' | 'gone';

export interface RegisteredAgent {
  readonly info: AgentDescription;
  readonly state: RegisteredAgentState;
  /** When it was marked unreachable, in cluster wall time. */
  readonly unreachableTimeMs?: number;
  /** The operator deactivated it (DEACTIVATE_AGENT, DRAIN_AGENT): it stays unoffered. */
  readonly deactivated?: boolean;
}

/** The schedule and the modes of its machines, as upstream's registrar keeps them. */
export interface RegisteredMaintenance {
  readonly schedule: MaintenanceSchedule;
  readonly machines: readonly MachineInfo[];
}

export class Registry {
  constructor(
    readonly agents: ReadonlyMap<string, RegisteredAgent>,
    readonly quotas: ReadonlyMap<string, QuotaConfig>,
    readonly weights: ReadonlyMap<string, number>,
    readonly maintenance: RegisteredMaintenance = { schedule: EMPTY_SCHEDULE, machines: [] },
  ) {}

  static readonly EMPTY = new Registry(new Map(), new Map(), new Map());

  /**
   * The registry of a master: its agents by state (an agent still in
   * recovery, admitted by an earlier leader and not yet back, stays
   * admitted), quotas and weights.
   */
  static of(m: MasterOps, recovering: ReadonlyMap<string, AgentDescription>): Registry {
    const agents = new Map<string, RegisteredAgent>();
    for (const [id, info] of recovering)
      agents.set(id, { info, state: 'admitted', deactivated: m.recovery.deactivated.has(id) });
    for (const record of m.agents.values()) {
      const { info, deactivated } = record;
      if (record.state === 'gone') agents.set(record.id, { info, state: 'gone' });
      else if (record.state === 'unreachable')
        agents.set(record.id, {
          info,
          state: 'unreachable',
          unreachableTimeMs: record.unreachableTimeMs ?? 0,
          deactivated,
        });
      else agents.set(record.id, { info, state: 'admitted', deactivated });
    }
    const { schedule, machines } = m.maintenance;
    return new Registry(agents, new Map(m.quotas), new Map(m.weights), { schedule, machines: [...machines.values()] });
  }

  count(state: RegisteredAgentState): number {
    let n = 0;
    for (const agent of this.agents.values()) if (agent.state === state) n++;
    return n;
  }
}
