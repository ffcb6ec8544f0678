/**
 * `GET /sim/v1/agents`: every agent the master books, in each of its states
 * (`active`, `disconnected`, `unreachable`, `gone`). Upstream's read
 * endpoints list only the registered agents (`/master/state` counts the
 * unreachable ones and names none), so the dashboard reads the others here.
 *
 *   {"agents": [{"id", "hostname", "port", "state"}]}
 */
import type { ClusterView } from '../../core/view.js';

export interface AgentStateJson {
  readonly id: string;
  readonly hostname: string;
  readonly port: number;
  readonly state: string;
}

/** The master's agents in the order it booked them, with their states. */
export function agentStatesToJson(view: ClusterView): { agents: AgentStateJson[] } {
  const agents: AgentStateJson[] = [];
  for (const record of view.allAgents()) {
    agents.push({ id: record.id, hostname: record.info.hostname, port: record.info.port, state: record.state });
  }
  return { agents };
}
