/**
 * The read model: what the read endpoints, the metrics and the tests see of
 * the cluster. Records are the master's own, handed out read-only; sums
 * (offered, used, per agent, framework and role) come from the master's
 * books, kept as things change. Nothing here changes state, and nothing is
 * computed from a walk over the whole cluster.
 */
import type { SandboxSettings } from './agent/sandboxes.js';
import type { Agent, AgentState } from './agent/agent.js';
import type { AgentCgroups } from './agent/cgroups.js';
import type { AgentCounters } from './agent/counters.js';
import type { AgentConfig } from './agent/flags.js';
import type { Authorizer } from './model/authz.js';
import type { SimExecutor, SimTask } from './agent/executor.js';
import type { HttpExecutor } from './agent/http-executor.js';
import type { NestedContainers } from './agent/nested-containers.js';
import { engineContainerId, engineContainerName } from './model/engine-ids.js';
import type { FrameworkRef } from './model/messages.js';
import { wallTimeMs, type SimContext } from './network/context.js';
import type { AgentRecord } from './master/agents.js';
import type { Framework } from './master/framework.js';
import type { ExecutorRecord, FrameworkState, Offer, Task } from './model/records.js';
import type { Books } from './master/ledger.js';
import type { OperationRecord } from './model/records.js';
import type { Master, MasterOptions } from './master/master.js';
import type { MasterGroup, MasterSeat } from './master/group.js';
import type { AgentDescription } from './model/messages.js';
import { add, allocate as withAllocationRole, subtract, type Resources } from './model/resources.js';
import type {
  Capability,
  FrameworkInfo,
  MasterInfo,
  OfferConstraints,
  Quantities,
  QuotaConfig,
} from './model/types.js';
import type { AgentSnapshot, FrameworkSnapshot } from './model/operator-types.js';
import { agentSnapshot, frameworkSnapshot } from './master/snapshots.js';
import { consumedQuota } from './master/quota.js';
import type { MisuseReport } from './master/misuse-report.js';
import { DEFAULT_WEIGHT } from './master/weights.js';
import { clusterStatus, type ClusterStatus } from './master/maintenance.js';
import type { MaintenanceSchedule } from './model/maintenance.js';
import type { InverseOfferRecord } from './master/maintenance-state.js';

/** A framework as the read model shows it. */
export interface FrameworkView {
  readonly id: string;
  readonly info: FrameworkInfo & { readonly id: string };
  readonly state: FrameworkState;
  readonly streamId: string | undefined;
  readonly suppressedRoles: ReadonlySet<string>;
  readonly constraints: OfferConstraints | undefined;
  readonly offers: ReadonlyMap<string, Offer>;
  readonly tasks: ReadonlyMap<string, Task>;
  readonly completedTasks: readonly Task[];
  readonly executors: ReadonlyMap<string, ExecutorRecord>;
  readonly registeredTimeMs: number;
  readonly reregisteredTimeMs: number | undefined;
  /** Learnt from its agents after a master failover, not re-subscribed since. */
  readonly recovered: boolean;
  readonly unregisteredTimeMs: number | undefined;
  roles(): string[];
  has(capability: Capability): boolean;
}

export type AgentView = Pick<
  AgentRecord,
  'id' | 'info' | 'state' | 'active' | 'pid' | 'registeredTimeMs' | 'reregisteredTimeMs'
>;

/** A container of the container engine. */
export interface EngineContainerView {
  readonly name: string;
  /** The engine's own id of the container (not the ContainerID). */
  readonly engineId: string;
  readonly agentId: string;
  readonly containerId: string;
  readonly image: string;
  readonly command: string;
}

export type ExecutorView = Pick<
  SimExecutor | HttpExecutor,
  'executorId' | 'frameworkId' | 'kind' | 'alive' | 'containerId' | 'state' | 'sandbox'
>;

/** A task as the agent process holds it: its TaskInfo and its latest state. */
export type AgentTaskView = Pick<SimTask, 'spec' | 'state' | 'statuses'>;

/** An executor as the agent process holds it, with its tasks. */
export interface AgentExecutorView extends ExecutorView {
  readonly tasks: ReadonlyMap<string, AgentTaskView>;
  /** A process of its own runs it in a real directory at its sandbox's path (`spawn`): its files are on disk. */
  readonly spawned?: boolean;
}

/** The agent process, as it knows itself (its own endpoints read this). */
export interface AgentNodeView {
  readonly config: AgentConfig;
  readonly state: AgentState;
  readonly pid: string;
  /** Its total, as its checkpointed resources hold it. */
  readonly resources: Resources;
  frameworks(): readonly FrameworkRef[];
  executors(): readonly AgentExecutorView[];
  /** Executors that exited while the agent ran, oldest first. */
  completedExecutors(): readonly AgentExecutorView[];
  /** Frameworks it shut down and forgot, oldest first, with their exited executors. */
  completedFrameworks(): readonly { readonly info: FrameworkRef; readonly completed: readonly AgentExecutorView[] }[];
  /** Its containers' memory cgroups (`view(containerId)`). */
  readonly cgroups: Pick<AgentCgroups, 'view'>;
  /** What the process counted since it started (its metrics). */
  readonly counters: Readonly<AgentCounters>;
  /** Its `--work_dir` and `--gc_delay`. */
  readonly sandboxes: Pick<SandboxSettings, 'workDir' | 'gcDelayMs'>;
}

export interface RoleView {
  readonly name: string;
  readonly frameworks: readonly string[];
  readonly books: Books;
  readonly weight: number;
  readonly quota: QuotaConfig | undefined;
  /** Scalars reserved to exactly this role on the agents. */
  readonly reserved: Quantities;
}

export class ClusterView {
  /** Reads being written over several turns, to be told before the cluster changes. */
  readonly #pendingReads = new Set<() => void>();

  constructor(
    private readonly masterOf: () => Master,
    private readonly nodes: ReadonlyMap<string, Agent>,
    private readonly ctx: SimContext,
    private readonly group: MasterGroup,
  ) {}

  /**
   * Calls `settle` once, just before the cluster next changes (at the start
   * of its next input): a read written over several turns copies then what
   * it has not written yet, and so writes the state of its moment without
   * copying anything when the cluster stands still meanwhile. Returns what
   * cancels the call (the read is written, or dropped).
   */
  beforeChange(settle: () => void): () => void {
    this.#pendingReads.add(settle);
    return () => void this.#pendingReads.delete(settle);
  }

  /** The cluster calls this before each input. */
  settleReads(): void {
    if (this.#pendingReads.size === 0) return;
    const pending = [...this.#pendingReads];
    this.#pendingReads.clear();
    for (const settle of pending) settle();
  }

  /** The leading master, or the one that led last while an election is on. */
  private get master(): Master {
    return this.masterOf();
  }

  /** Every master process: its index, port and state (`leading`, `standby`, `down`). */
  masterSeats(): MasterSeat[] {
    return this.group.seats();
  }

  /** The index of the leading master; undefined while none leads (an election is on). */
  leaderIndex(): number | undefined {
    return this.group.leaderIndex();
  }

  /** Agents a leader recovered from the registry that have not re-registered with it yet. */
  recoveredAgents(): readonly AgentDescription[] {
    return [...this.master.recovery.recovered.values()];
  }

  get masterInfo(): MasterInfo {
    return this.master.info;
  }

  get masterOptions(): MasterOptions {
    return this.master.options;
  }

  /** The decisions of the master's ACLs (`mayTeardown`, `mayUpdateQuota`, `mayView…`); all yes without ACLs. */
  get authorizer(): Authorizer {
    return this.master.authorizer;
  }

  get startTimeMs(): number {
    return this.master.startTimeMs;
  }

  /** Cluster time now, in milliseconds since the Unix epoch. */
  wallTimeMs(): number {
    return wallTimeMs(this.ctx);
  }

  frameworks(): Iterable<FrameworkView> {
    return this.master.frameworks.values();
  }

  framework(id: string): FrameworkView | undefined {
    return this.master.frameworks.get(id);
  }

  completedFrameworks(): readonly FrameworkView[] {
    return this.master.completedFrameworks as readonly Framework[];
  }

  /** The registered agents; one marked gone or unreachable is no longer listed. */
  *agents(): Iterable<AgentView> {
    for (const record of this.master.agents.values())
      if (record.state !== 'gone' && record.state !== 'unreachable') yield record;
  }

  /** Tasks that ended since the leader started, by their last state (counted as they end, never fewer). */
  endedTaskCount(state: string): number {
    return this.master.endedTasks.get(state) ?? 0;
  }

  /** Agents the master marked unreachable that have not come back. */
  unreachableAgentCount(): number {
    let n = 0;
    for (const record of this.master.agents.values()) if (record.state === 'unreachable') n++;
    return n;
  }

  /** Every agent the master books, gone and unreachable ones too. */
  allAgents(): Iterable<AgentView> {
    return this.master.agents.values();
  }

  agent(id: string): AgentView | undefined {
    return this.master.agents.get(id);
  }

  agentCount(): number {
    return this.master.agents.size;
  }

  /** A framework as the operator API shows it (GET_FRAMEWORKS). */
  frameworkSnapshot(fw: FrameworkView): FrameworkSnapshot {
    return frameworkSnapshot(fw as Framework, this.master.ledger);
  }

  /** An agent as the operator API shows it (GET_AGENTS), with its deactivation and drain. */
  agentSnapshot(agentId: string): AgentSnapshot | undefined {
    const record = this.master.agents.get(agentId);
    return record === undefined ? undefined : agentSnapshot(record, this.master.ledger);
  }

  /** The protocol-misuse report: what the frameworks did that a cluster tolerates but they should not. */
  misuse(): MisuseReport {
    const { frameworks, completedFrameworks } = this.master;
    return this.master.misuse.report((id) => frameworks.get(id) ?? completedFrameworks.find((f) => f.id === id));
  }

  /** Open operator event streams. */
  operatorSubscribers(): number {
    return this.master.feed.size;
  }

  get heartbeatIntervalMs(): number {
    return this.master.heartbeatIntervalMs;
  }

  agentBooks(agentId: string): Books {
    return this.master.ledger.agent(agentId);
  }

  frameworkBooks(frameworkId: string): Books {
    return this.master.ledger.framework(frameworkId);
  }

  /** Every role with a subscribed framework, resources, a reservation, a quota or a weight, by name. */
  roles(): RoleView[] {
    const { ledger, quotas, weights, totals } = this.master;
    const names = new Set([...ledger.roles(), ...quotas.keys(), ...weights.keys(), ...totals.reservedRoles()]);
    return [...names].sort().map((name) => ({
      name,
      frameworks: ledger.roleMembers(name),
      books: ledger.role(name),
      weight: weights.get(name) ?? DEFAULT_WEIGHT,
      quota: quotas.get(name),
      reserved: totals.reservedTo(name),
    }));
  }

  /** The maintenance schedule, as it was last written (machines brought up leave it). */
  maintenanceSchedule(): MaintenanceSchedule {
    return this.master.maintenance.schedule;
  }

  /** A framework's outstanding inverse offers (none while no machine is scheduled). */
  inverseOffers(frameworkId: string): InverseOfferRecord[] {
    const { maintenance } = this.master;
    if (!maintenance.active) return [];
    return [...maintenance.inverseOffers.values()].filter((io) => io.frameworkId === frameworkId);
  }

  /** DRAINING machines with the frameworks' answers to their inverse offers, and DOWN machines. */
  maintenanceStatus(): ClusterStatus {
    return clusterStatus(this.master);
  }

  /** Roles with a quota, by name. */
  quotas(): QuotaConfig[] {
    return [...this.master.quotas.values()].sort((a, b) => (a.role < b.role ? -1 : a.role > b.role ? 1 : 0));
  }

  /** Roles with a weight set, by name. */
  weights(): { readonly role: string; readonly weight: number }[] {
    return [...this.master.weights].sort(([a], [b]) => (a < b ? -1 : 1)).map(([role, weight]) => ({ role, weight }));
  }

  /** A role's quota consumption: unreserved resources in use plus its reservations. */
  consumedQuota(role: string): Quantities {
    return consumedQuota(this.master, role);
  }

  /** What of an agent is neither offered nor used. */
  unallocated(agentId: string): Resources {
    const total = this.master.agents.get(agentId)?.info.resources ?? [];
    const books = this.master.ledger.agent(agentId);
    return subtract(total, withAllocationRole(add(books.offered, books.used), undefined));
  }

  /** The agent process' own state (registering, active, crashed), which the master may not know yet. */
  agentProcessState(agentId: string): Agent['state'] | undefined {
    return this.nodes.get(agentId)?.state;
  }

  /** The ids of every agent process ever added (a crashed one too), in the order they were added. */
  agentNodeIds(): string[] {
    return [...this.nodes.keys()];
  }

  /** The agent process of a node, read-only; undefined for an unknown id. */
  agentNode(agentId: string): AgentNodeView | undefined {
    return this.nodes.get(agentId);
  }

  /** The executors an agent runs, as the agent knows them. */
  agentExecutors(agentId: string): readonly ExecutorView[] {
    return this.nodes.get(agentId)?.executors() ?? [];
  }

  /**
   * The containers the container engine runs: the live executors whose
   * tasks are DOCKER tasks, each named `cluster-<ContainerID>` on its agent.
   */
  engineContainers(): EngineContainerView[] {
    const out: EngineContainerView[] = [];
    for (const [agentId, agent] of this.nodes) {
      for (const executor of agent.executors()) {
        const task = executor.tasks.values().next().value;
        if (task?.spec.engine === undefined || !executor.alive) continue;
        const { containerId } = executor;
        const ids = { name: engineContainerName(containerId), engineId: engineContainerId(containerId) };
        out.push({
          ...ids,
          agentId,
          containerId,
          image: task.spec.engine.image,
          command: task.spec.command?.value ?? '',
        });
      }
    }
    return out;
  }

  /** A nested container of an agent (an exec session, an engine exec), if it knows it. */
  nestedContainer(agentId: string, containerId: string): ReturnType<NestedContainers['status']> {
    return this.nodes.get(agentId)?.nested?.status(containerId);
  }

  /**
   * Offer operations the master tracks (GET_OPERATIONS): pending ones and
   * those whose terminal status is not yet acknowledged, oldest first.
   */
  operations(): readonly OperationRecord[] {
    return this.master.operations.all();
  }

  /** The agent's own total, as its checkpointed resources hold it (it may lag the master's by messages in flight). */
  agentResources(agentId: string): Resources | undefined {
    return this.nodes.get(agentId)?.resources;
  }

  /** Operation status updates an agent holds unacknowledged. */
  pendingOperationUpdates(agentId: string): number {
    return this.nodes.get(agentId)?.pendingOperationUpdates() ?? 0;
  }

  /** Status updates an agent holds unacknowledged. */
  pendingUpdates(agentId: string): number {
    return this.nodes.get(agentId)?.pendingUpdates() ?? 0;
  }
}
