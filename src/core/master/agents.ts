/**
 * The master's record of an agent and its lifecycle, as upstream's master
 * sees it:
 *
 *   (REGISTER_AGENT) ----------------------> active
 *   active --connection breaks (EXITED)----> disconnected
 *   active/disconnected/unreachable --REREGISTER_AGENT--> active
 *   active/disconnected --misses its pings (agent-health.ts)--> unreachable
 *   any but gone --marked gone by the operator--> gone
 *
 * Only an active agent's resources are offered, and only while the operator
 * has not deactivated it (DEACTIVATE_AGENT, DRAIN_AGENT): `deactivated` is
 * kept beside the state, as upstream keeps it across disconnections.
 */
import type { AgentDescription } from '../model/messages.js';
import type { DrainInfo } from '../model/operator-types.js';
import type { ExecutorRecord } from '../model/records.js';

export type AgentRecordState = 'active' | 'disconnected' | 'unreachable' | 'gone';

export const AGENT_NEXT: Readonly<Record<AgentRecordState, readonly AgentRecordState[]>> = {
  active: ['active', 'disconnected', 'unreachable', 'gone'],
  disconnected: ['active', 'unreachable', 'gone'],
  unreachable: ['active', 'gone'],
  gone: [],
};

/** The agents pinged together by one timer (agent-health.ts). */
export interface PingRound {
  /** A set: an agent that starts pinging twice at one instant is pinged once. */
  readonly members: Set<AgentRecord>;
  dueMs: number;
}

/** A PING is out and unanswered (`awaiting`); `missed` pings in a row went unanswered. */
export interface PingState {
  awaiting: boolean;
  missed: number;
  /** The round it is pinged in (agent-health.ts). */
  round: PingRound;
  /** Its pings go without messages until something changes on its link (agent-health.ts). */
  quiet: boolean;
}

export class AgentRecord {
  state: AgentRecordState = 'active';
  reregisteredTimeMs: number | undefined;
  /** Deactivated by the operator: not offered until reactivated. */
  deactivated = false;
  drain: DrainInfo | undefined;
  /** When the drain started, in cluster wall time. */
  drainStartTimeMs: number | undefined;
  /** When the master marked it unreachable, in cluster wall time. */
  unreachableTimeMs: number | undefined;
  /** The master's pinger of the agent (agent-health.ts); undefined while it does not ping it. */
  pings: PingState | undefined;
  /** The last ping it was given without messages, once its pings are loud again (agent-health.ts). */
  quietPingMs: number | undefined;
  /** The executors of PARTITION_AWARE frameworks it ran when it became unreachable, `frameworkId\0key`. */
  parkedExecutors: ReadonlyMap<string, ExecutorRecord> = new Map();

  constructor(
    public info: AgentDescription,
    readonly registeredTimeMs: number,
  ) {}

  get id(): string {
    return this.info.agentId;
  }

  /** Registered and connected (the operator may still have deactivated it). */
  get active(): boolean {
    return this.state === 'active';
  }

  /** Whether its resources may be offered. */
  get offerable(): boolean {
    return this.state === 'active' && !this.deactivated;
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
