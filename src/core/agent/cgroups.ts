/**
 * The memory cgroup of each container an agent runs (each executor's
 * top-level container), as the memory isolator keeps it:
 *
 *   cgroups v2   memory.max (hard limit, `max` when unlimited), memory.low (soft)
 *   cgroups v1   memory.limit_in_bytes, memory.soft_limit_in_bytes
 *
 * Soft limit: the executor's memory and its live tasks' (their `mem`
 * resources). Hard limit: the same, with each task's `limits.mem` in place
 * of its `mem` where it has one; `Infinity` makes it unlimited. Both are at
 * least 32 MiB, upstream's minimum. UPDATE_CONTAINER_MEMORY_LIMIT overrides
 * both until they are computed again: when a task starts or ends in the
 * container, or when the agent restarts or re-registers (the override is
 * not checkpointed).
 *
 * Usage is the sum of the live tasks' curves (memory-curve.ts), from when
 * each reported its first state. One timer per container waits for the
 * instant usage passes the hard limit; then the kernel's OOM killer ends
 * the container, and its tasks fail with REASON_CONTAINER_LIMITATION_MEMORY.
 * A model has no cache to reclaim: a hard limit set below usage kills at
 * once. Without memory isolation (or, on v2, without the memory controller
 * delegated) a container has no memory files and nothing is enforced.
 * While the agent process is down no OOM is watched for.
 */
import type { Outcome } from '../model/errors.js';
import { done, fail } from '../model/errors.js';
import type { SimContext } from '../network/context.js';
import { engineContainerId, engineContainerName } from '../model/engine-ids.js';
import type { TimerId } from '../kernel/event-loop.js';
import {
  bytesAt,
  firstExceeding,
  MEMORY_LABEL,
  MIB,
  parseMemoryCurve,
  shifted,
  type MemoryCurve,
  type MemoryPiece,
} from '../process/memory-curve.js';
import { scalar, scalarMilli, type Resources } from '../model/resources.js';
import { SmallMap } from '../kernel/small-map.js';
import { isTerminal } from '../model/task-state.js';
import type { TaskStatus } from '../model/types.js';
import { executorResources } from './allotment.js';
import type { AgentConfig, AgentFlags, CgroupsVersion } from './flags.js';
import type { AgentExecutor } from './frameworks.js';

/** Upstream's minimum memory limit of a container (`MIN_MEMORY`). */
export const MIN_MEMORY_BYTES = 32 * MIB;
/** What cgroups v1 reads back for an unlimited `memory.limit_in_bytes` (on 4 KiB pages). */
export const V1_UNLIMITED = '9223372036854771712';
const UNLIMITED_BYTES = Number(V1_UNLIMITED);

/**
 * The agent's executors, the live one running a framework's task, and what
 * happens to one the OOM killer ends (its tasks fail with `message` and the
 * limitation).
 */
type Executors = () => readonly AgentExecutor[];
type ExecutorOf = (frameworkId: string, taskId: string) => AgentExecutor | undefined;
type OomKilled = (executor: AgentExecutor, message: string, limitation: Resources) => void;

/** A container's memory cgroup as its agent's endpoints show it. */
export interface ContainerMemoryView {
  readonly containerId: string;
  readonly version: CgroupsVersion;
  /** Whether the memory files exist (memory isolation on, and on v2 the controller delegated). */
  readonly isolated: boolean;
  readonly softLimitBytes: number;
  /** `Infinity` when unlimited. */
  readonly hardLimitBytes: number;
  readonly usageBytes: number;
  /** The control files and what they read, by name. */
  readonly files: Readonly<Record<string, string>>;
}

/** The curve of a task without a memory label: no usage of its own. */
const NO_CURVE: MemoryCurve = Object.freeze([]) as MemoryCurve;

interface Container {
  readonly executor: AgentExecutor;
  /** Its live tasks (their specs are the executor's), each with its curve in absolute virtual time. */
  readonly tasks: SmallMap<string, MemoryCurve>;
  /** Bytes set by UPDATE_CONTAINER_MEMORY_LIMIT, until the limits are computed again. */
  override: number | undefined;
  timer: TimerId | undefined;
}

export class AgentCgroups {
  readonly #containers = new Map<string, Container>();

  readonly #ctx: SimContext;
  readonly #agentId: string;
  readonly #flags: AgentFlags;

  constructor(
    ctx: SimContext,
    config: AgentConfig,
    private readonly executors: Executors,
    private readonly executorOf: ExecutorOf,
    private readonly oomKilled: OomKilled,
  ) {
    this.#ctx = ctx;
    this.#agentId = config.id;
    this.#flags = config.flags;
  }

  /** Whether memory limits exist and are enforced on this agent. */
  get isolated(): boolean {
    const flags = this.#flags;
    return flags.memoryIsolation && (flags.cgroups === 'v1' || flags.memoryControllerDelegated);
  }

  /** A status the agent took: a task started or ended in its container, whose limits are computed again. */
  observe(frameworkId: string, status: TaskStatus): void {
    const executor = this.executorOf(frameworkId, status.taskId);
    if (executor === undefined || !executor.alive) return;
    const container = this.#container(executor);
    const known = container.tasks.has(status.taskId);
    if (isTerminal(status.state) === known) {
      if (known) container.tasks.delete(status.taskId);
      else this.#start(container, status.taskId);
      container.override = undefined;
    }
    this.#arm(container);
  }

  /** The container is gone (its executor exited). */
  remove(executor: AgentExecutor): void {
    const container = this.#containers.get(executor.containerId);
    if (container?.executor !== executor) return;
    this.#ctx.loop.cancel(container.timer);
    this.#containers.delete(executor.containerId);
  }

  /** The agent process died: nothing watches for OOM; the containers of executors that died with it are gone. */
  suspend(): void {
    for (const [id, container] of this.#containers) {
      this.#ctx.loop.cancel(container.timer);
      container.timer = undefined;
      if (!container.executor.alive) this.#containers.delete(id);
    }
  }

  /** The agent restarted or re-registered: every container's limits are computed from its tasks again. */
  recover(): void {
    for (const container of this.#containers.values()) {
      container.override = undefined;
      if (container.executor.alive) this.#arm(container);
    }
  }

  /** UPDATE_CONTAINER_MEMORY_LIMIT, once the call is valid: `mib` is positive and finite, the id top-level. */
  updateMemoryLimit(containerId: string, mib: number): Outcome {
    const refusal = this.memoryLimitRefusal(containerId);
    if (refusal !== undefined) return refusal;
    const container = this.#running(containerId)!;
    container.override = limitBytes(mib);
    this.#ctx.trace.append('container:memory-limit', {
      agentId: this.#agentId,
      containerId,
      bytes: container.override,
    });
    this.#arm(container);
    return done;
  }

  /**
   * The task's memory use rises by `mib` MiB from now on, for `durationMs`
   * or for good (a fault); past the hard limit the OOM killer ends the
   * container as for any curve. Only for a task the container `counts`.
   */
  spike(executor: AgentExecutor, taskId: string, mib: number, durationMs?: number): void {
    const container = this.#containers.get(executor.containerId)!;
    const curve = container.tasks.get(taskId)!;
    const now = this.#ctx.loop.now();
    const piece = { from: now, until: durationMs === undefined ? Infinity : now + durationMs, level: mib, rate: 0 };
    container.tasks.set(taskId, [...curve, piece]);
    this.#arm(container);
  }

  /** Why UPDATE_CONTAINER_MEMORY_LIMIT of the container would be refused now, if it would. */
  memoryLimitRefusal(containerId: string): ReturnType<typeof fail> | undefined {
    if (this.#running(containerId) === undefined) {
      const other = this.#otherId(containerId);
      if (other !== undefined)
        return fail('INVALID', `'${containerId}' is ${other}, not the ContainerID of a running task container`);
      return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    }
    if (!this.#flags.memoryIsolation)
      return fail('FAILED', `Memory isolation is not enabled on agent ${this.#agentId}`);
    if (!this.isolated)
      return fail('FAILED', `The memory controller is not delegated to the cgroup hierarchy of agent ${this.#agentId}`);
    return undefined;
  }

  /** Whether the task's container counts its memory (it has started there and not ended). */
  counts(executor: AgentExecutor, taskId: string): boolean {
    const container = this.#containers.get(executor.containerId);
    return container?.executor === executor && container.tasks.has(taskId);
  }

  /** The container's cgroup now; undefined for a container this agent does not run. */
  view(containerId: string): ContainerMemoryView | undefined {
    const executor = this.executors().find((e) => e.alive && e.containerId === containerId);
    if (executor === undefined) return undefined;
    const container = this.#containers.get(containerId) ?? {
      executor,
      tasks: new SmallMap<string, MemoryCurve>(),
      override: undefined,
      timer: undefined,
    };
    const { soft, hard } = this.#limits(container);
    const usage = this.#usage(container, this.#ctx.loop.now());
    const version = this.#flags.cgroups;
    return {
      containerId,
      version,
      isolated: this.isolated,
      softLimitBytes: soft,
      hardLimitBytes: hard,
      usageBytes: usage,
      files: this.#files(soft, hard, usage),
    };
  }

  #files(soft: number, hard: number, usage: number): Record<string, string> {
    if (!this.isolated) return {};
    if (this.#flags.cgroups === 'v2') {
      const v2 = (bytes: number) => (bytes === Infinity ? 'max' : String(bytes));
      return { 'memory.current': String(usage), 'memory.low': v2(soft), 'memory.max': v2(hard) };
    }
    const v1 = (bytes: number) => (bytes === Infinity ? V1_UNLIMITED : String(bytes));
    return {
      'memory.limit_in_bytes': v1(hard),
      'memory.soft_limit_in_bytes': v1(soft),
      'memory.usage_in_bytes': String(usage),
    };
  }

  #container(executor: AgentExecutor): Container {
    let container = this.#containers.get(executor.containerId);
    if (container?.executor !== executor) {
      if (container !== undefined) this.#ctx.loop.cancel(container.timer);
      container = { executor, tasks: new SmallMap(), override: undefined, timer: undefined };
      this.#containers.set(executor.containerId, container);
    }
    return container;
  }

  #start(container: Container, taskId: string): void {
    const spec = container.executor.tasks.get(taskId)?.spec;
    if (spec === undefined) return;
    const label = spec.labels.find((l) => l.key === MEMORY_LABEL)?.value;
    if (label === undefined) {
      container.tasks.set(taskId, NO_CURVE);
      return;
    }
    const parsed = parseMemoryCurve(label);
    if ('error' in parsed) {
      this.#ctx.trace.append('task:memory-label-invalid', { agentId: this.#agentId, taskId, error: parsed.error });
    }
    container.tasks.set(taskId, 'curve' in parsed ? shifted(parsed.curve, this.#ctx.loop.now()) : NO_CURVE);
  }

  /** Soft and hard limits in bytes: from the resources, or the override. */
  #limits(container: Container): { soft: number; hard: number } {
    if (container.override !== undefined) return { soft: container.override, hard: container.override };
    const own = scalarMilli(executorResources(container.executor), 'mem');
    let soft = own;
    let hard = own;
    for (const taskId of container.tasks.keys()) {
      const { spec } = container.executor.tasks.get(taskId)!;
      const mem = scalarMilli(spec.resources, 'mem');
      soft += mem;
      hard += spec.limits?.mem === undefined ? mem : spec.limits.mem * 1000;
    }
    return { soft: limitBytes(soft / 1000), hard: limitBytes(hard / 1000) };
  }

  #usage(container: Container, t: number): number {
    return bytesAt(this.#pieces(container), t);
  }

  #pieces(container: Container): MemoryCurve {
    const pieces: MemoryPiece[] = [];
    for (const curve of container.tasks.values()) for (const piece of curve) pieces.push(piece);
    return pieces;
  }

  /** Sets the one timer of the container for the instant its usage passes its hard limit. */
  #arm(container: Container): void {
    const { loop } = this.#ctx;
    loop.cancel(container.timer);
    container.timer = undefined;
    if (!this.isolated) return;
    // No curve, no usage: a limit (at least upstream's minimum) is never passed (asked without a list: an agent
    // re-arms every container when it re-registers).
    if (!hasCurve(container)) return;
    const pieces = this.#pieces(container);
    const { hard } = this.#limits(container);
    const at = firstExceeding(pieces, hard, loop.now());
    if (at === undefined) return;
    container.timer = loop.schedule(at - loop.now(), 'container:oom', () => {
      container.timer = undefined;
      if (this.#containers.get(container.executor.containerId) !== container || !container.executor.alive) return;
      this.#oom(container, hard);
    });
  }

  #oom(container: Container, hard: number): void {
    const usage = this.#usage(container, this.#ctx.loop.now());
    if (usage <= hard) return this.#arm(container);
    const { executor } = container;
    this.#ctx.trace.append('container:oom', {
      agentId: this.#agentId,
      containerId: executor.containerId,
      limitBytes: hard,
      usageBytes: usage,
    });
    const stat = this.#flags.cgroups === 'v2' ? `anon ${usage}` : `rss ${usage}\ntotal_rss ${usage}`;
    const message = `Memory limit exceeded: Requested: ${formatBytes(hard)} Maximum Used: ${formatBytes(usage)}\n\nMEMORY STATISTICS: \n${stat}\n`;
    this.remove(executor);
    this.oomKilled(executor, message, [scalar('mem', usage / MIB)]);
  }

  /** A running task container: a live executor with a live task. */
  #running(containerId: string): Container | undefined {
    const executor = this.executors().find((e) => e.alive && e.containerId === containerId);
    if (executor === undefined || executor.liveTasks().length === 0) return undefined;
    return this.#container(executor);
  }

  /** What else the id names on this agent (a task, an executor, an engine container), if anything. */
  #otherId(id: string): string | undefined {
    for (const executor of this.executors()) {
      if (!executor.alive) continue;
      if (executor.executorId === id) return 'an executor id';
      if (id === engineContainerName(executor.containerId) || id === `mesos-${executor.containerId}`)
        return 'an engine container name';
      for (const task of executor.tasks.values()) {
        if (task.spec.taskId === id) return 'a task id';
        if (task.spec.engine === undefined) continue;
        if (id === engineContainerId(executor.containerId)) return 'an engine container id';
        if (id === task.spec.engine.image || id.startsWith('sha256:')) return 'an engine image';
      }
    }
    return undefined;
  }
}

/** A limit of `mib` MiB in bytes, as the kernel keeps it: at least upstream's minimum, and unlimited past what a page counter holds. */
function limitBytes(mib: number): number {
  const bytes = Math.round(mib * MIB);
  return bytes >= UNLIMITED_BYTES ? Infinity : Math.max(MIN_MEMORY_BYTES, bytes);
}

/** Bytes as upstream prints them: the largest unit that loses nothing (`64MB`, `1536KB`, `100B`). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value !== 0 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value}${units[unit]}`;
}

/** Whether any task of the container has a piece of memory curve. */
function hasCurve(container: Container): boolean {
  for (const curve of container.tasks.values()) if (curve.length > 0) return true;
  return false;
}
