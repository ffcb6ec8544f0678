/**
 * The master's record of an agent and its lifecycle, as upstream's master
 * sees it:
 *
 *   (REGISTER_AGENT) ----------------------> active
 *   active --connection breaks (EXITED)----> disconnected
 *   active/disconnected/unreachable --REREGISTER_AGENT--> active
 *   disconnected --pings or re-registration time out--> unreachable
 *   any but gone --marked gone by the operator--> gone
 *
 * Only an active agent's resources are offered.
 */
import type { AgentDescription } from '../messages.js';

export type AgentRecordState = 'active' | 'disconnected' | 'unreachable' | 'gone';

export const AGENT_NEXT: Readonly<Record<AgentRecordState, readonly AgentRecordState[]>> = {
  active: ['active', 'disconnected', 'gone'],
  disconnected: ['active', 'unreachable', 'gone'],
  unreachable: ['active', 'gone'],
  gone: [],
};

export class AgentRecord {
  state: AgentRecordState = 'active';
  reregisteredTimeMs: number | undefined;

  constructor(
    public info: AgentDescription,
    readonly registeredTimeMs: number,
  ) {}

  get id(): string {
    return this.info.agentId;
  }

  get active(): boolean {
    return this.state === 'active';
  }

  /** `slave(1)@ip:port`, the upstream process id of the agent. */
  get pid(): string {
    return `slave(1)@${this.info.ip}:${this.info.port}`;
  }

  moveTo(next: AgentRecordState): void {
    if (!AGENT_NEXT[this.state].includes(next)) {
      throw new Error(`agent '${this.id}': illegal transition ${this.state} -> ${next}`);
    }
    this.state = next;
  }
}
