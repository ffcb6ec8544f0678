/**
 * What the call handlers (`calls.ts`, `accept.ts`) may use of the master:
 * its records and the few operations that change them in one place. The
 * master implements it; the handlers import only this, so the master's
 * files form no circle. Offers (`offers.ts`) and tasks and executors
 * (`tasks.ts`) change in one place each, over this too.
 */
import type { Allocator } from '../allocator/allocator.js';
import type { Acls, Authorizer } from '../model/authz.js';
import type { SimContext } from '../network/context.js';
import type { Outcome } from '../model/errors.js';
import type { IdGenerator } from '../kernel/ids.js';
import type { FrameworkRef, MasterToAgent } from '../model/messages.js';
import type { MasterRecovery } from './recovery-state.js';
import type { QuotaConfig, Subscription } from '../model/types.js';
import type { AgentTotals } from './agent-totals.js';
import type { AgentRecord, PingRound } from './agents.js';
import type { Framework } from './framework.js';
import type { Rng } from '../kernel/rng.js';
import type { Ledger } from './ledger.js';
import type { MisuseLog } from './misuse.js';
import type { OperatorFeed } from './operator-feed.js';
import type { OperationStore } from './operation-store.js';
import type { Maintenance } from './maintenance-state.js';
import type {} from '../model/records.js';

export interface MasterOptions {
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly version: string;
  readonly heartbeatIntervalMs?: number;
  readonly allocationIntervalMs?: number;
  /** `--offer_timeout`; offers never time out when unset. */
  readonly offerTimeoutMs?: number;
  /** Time between accepting a launch and handing it to the agent. */
  readonly taskLaunchDelayMs?: number;
  /** `--weights`: role weights at start. */
  readonly weights?: ReadonlyMap<string, number>;
  /** `--acls`: what principals may do; without them everything is allowed. */
  readonly acls?: Acls;
  /** The master's id; drawn from the seed without (a reset keeps the first one, so agent ids stay). */
  readonly masterId?: string;
  /** `--agent_reregister_timeout`: how long a new leader waits for the agents of its registry (default 10 min). */
  readonly agentReregisterTimeoutMs?: number;
  /** `--allocator_recovery_timeout`: the longest allocator pause after a failover (default 10 min). */
  readonly allocatorRecoveryTimeoutMs?: number;
  /** `--allocator_agent_recovery_factor`: the share of recovered agents that ends the pause (default 0.8). */
  readonly allocatorAgentRecoveryFactor?: number;
  /** `--max_completed_tasks_per_framework`: finished tasks a framework keeps, the oldest dropped first (default 1000). */
  readonly maxCompletedTasksPerFramework?: number;
  /** `--max_completed_frameworks`: removed frameworks the master keeps, the oldest dropped first (default 50). */
  readonly maxCompletedFrameworks?: number;
}

export interface MasterOps {
  readonly ctx: SimContext;
  readonly options: MasterOptions;
  readonly ids: IdGenerator;
  readonly allocator: Allocator;
  readonly ledger: Ledger;
  /** Registered agents' totals: capacity and reservations per role. */
  readonly totals: AgentTotals;
  /** Roles with a quota, by name. */
  readonly quotas: Map<string, QuotaConfig>;
  /** Roles with a weight other than the default, by name. */
  readonly weights: Map<string, number>;
  /** The decisions of the ACLs the master was given (all yes without). */
  readonly authorizer: Authorizer;
  /** The operator event stream: every change of a task, agent or framework is emitted here. */
  readonly feed: OperatorFeed;
  /** Offer operations (RESERVE, UNRESERVE, CREATE, DESTROY) until their end is acknowledged. */
  readonly operations: OperationStore;
  /** The stream the uuids of operations come from. */
  readonly operationUuids: Rng;
  readonly agents: Map<string, AgentRecord>;
  /** The master's rounds of agent pings, by the instant each is due (agent-health.ts). */
  readonly pingRounds: Map<number, PingRound>;
  /** Agents in the DRAINING state, checked after every input. */
  readonly draining: Set<string>;
  readonly frameworks: ReadonlyMap<string, Framework>;
  readonly completedFrameworks: readonly Framework[];
  /** What a leader built from the registry still expects back (empty for a first master). */
  readonly recovery: MasterRecovery;
  /** The maintenance schedule, its machines and inverse offers. */
  readonly maintenance: Maintenance;
  /** The protocol-misuse log: offers made and ended are told to it. */
  readonly misuse: MisuseLog;
  /** A framework a re-registering agent runs that this master does not know: added inactive, as recovered. */
  recoverFramework(info: FrameworkRef): Framework;
  /** Sends a message to an agent; false when the master does not know it. */
  toAgent(agentId: string, message: MasterToAgent): boolean;
  removeFramework(fw: Framework, reason: string): void;
  updateFramework(fw: Framework, sub: Subscription): Outcome;
}
