/**
 * ACCEPT (and DECLINE, which is ACCEPT without operations). The offers are
 * checked first; with a bad offer nothing launches: the valid offers go
 * back and every task gets TASK_LOST (TASK_DROPPED if partition aware).
 * Then each operation runs against what is left of the offers, in order
 * (a RESERVE or CREATE changes what the later operations see, so a LAUNCH
 * after them can use the reserved resources and volumes), and the rest is
 * declined with the call's refuse filter.
 */
import { done, type Outcome } from '../model/errors.js';
import type { MasterToAgent } from '../model/messages.js';
import {
  add,
  allocate as withAllocationRole,
  contains,
  format,
  overlap,
  subtract,
  type Resources,
} from '../model/resources.js';
import type { ExecutorSpec, Operation, StatusReason, TaskSpec } from '../model/types.js';
import { refOf, type Framework } from './framework.js';
import type { Offer, Task } from '../model/records.js';
import type { MasterOps } from './ops.js';
import { removeOffer, useOffer } from './offers.js';
import { addExecutor, addTask, masterStatus, removeExecutor, updateTaskState } from './tasks.js';
import { acceptOperation, type AcceptPool } from './operations.js';
import { taskError } from './validation.js';

export function onAccept(
  m: MasterOps,
  fw: Framework,
  offerIds: readonly string[],
  operations: readonly Operation[],
  refuseMs: number,
): Outcome {
  const { offers, error } = collectOffers(m, fw, offerIds, operations.length > 0);
  if (error !== undefined) {
    m.ctx.trace.append('offer:invalid', { frameworkId: fw.id, message: error });
    for (const offer of offers) removeOffer(m, offer, { rescind: false });
    const state = fw.has('PARTITION_AWARE') ? 'TASK_DROPPED' : 'TASK_LOST';
    for (const task of operations.flatMap(tasksOf)) {
      const status = masterStatus(
        m,
        task,
        state,
        `Task launched with invalid offers: ${error}`,
        'REASON_INVALID_OFFERS',
      );
      fw.send({ type: 'UPDATE', status });
    }
    return done;
  }
  const first = offers[0];
  if (first === undefined) return done;
  const pool: Pool = { agentId: first.agentId, role: first.role, available: [], unbooked: [] };
  for (const offer of offers) {
    useOffer(m, offer);
    pool.available = add(pool.available, offer.resources);
  }
  for (const op of operations) {
    if (op.type === 'LAUNCH') for (const task of op.tasks) launch(m, fw, pool, [task]);
    else if (op.type === 'LAUNCH_GROUP') launchGroup(m, fw, pool, op.executor, op.tasks);
    else if (op.type === 'UNSUPPORTED') unsupported(m, fw, pool, op.name, op.id);
    else {
      // A resource operation reads the ledger: the launches before it are booked first.
      book(m, fw, pool);
      acceptOperation(m, fw, pool, op);
    }
  }
  book(m, fw, pool);
  m.allocator.recoverResources(fw.id, pool.agentId, pool.available, refuseMs);
  return done;
}

/**
 * DECLINE: unlike ACCEPT, each offer stands alone, as upstream handles it:
 * every valid offer goes back with the refuse filter, and ids that are no
 * longer valid (or repeated) are skipped.
 */
export function onDecline(m: MasterOps, fw: Framework, offerIds: readonly string[], refuseMs: number): Outcome {
  for (const id of new Set(offerIds)) {
    const offer = fw.offers.get(id);
    if (offer === undefined) {
      m.ctx.trace.append('offer:decline-invalid', { frameworkId: fw.id, offerId: id });
      continue;
    }
    removeOffer(m, offer, { rescind: false, refuseMs });
  }
  return done;
}

/** What is left of an ACCEPT's offers, and the bags its launches hold that the ledger does not know yet. */
interface Pool extends AcceptPool {
  unbooked: Resources[];
}

/**
 * The launches' resources into the ledger, in one step: the framework's
 * tasks on one agent are one holder in its books, and a sum books as its
 * parts do (the bags are exact). Tasks mostly share their bag, so each
 * distinct bag is added once, times the tasks holding it.
 */
function book(m: MasterOps, fw: Framework, pool: Pool): void {
  if (pool.unbooked.length === 0) return;
  const counts = new Map<Resources, number>();
  for (const bag of pool.unbooked) counts.set(bag, (counts.get(bag) ?? 0) + 1);
  let sum: Resources = [];
  for (const [bag, n] of counts) sum = add(sum, times(bag, n));
  pool.unbooked = [];
  if (sum.length > 0) m.ledger.hold('used', { frameworkId: fw.id, agentId: pool.agentId }, sum);
}

/** `n` times a bag: scalars multiplied (milli are whole), anything else added up `n` times. */
function times(bag: Resources, n: number): Resources {
  if (n > 1 && bag.every((r) => r.type === 'SCALAR'))
    return add(
      [],
      bag.map((r) => ({ ...r, milli: (r.milli ?? 0) * n })),
    );
  let sum: Resources = [];
  for (let i = 0; i < n; i++) sum = add(sum, bag);
  return sum;
}

function tasksOf(op: Operation): { taskId: string; agentId: string }[] {
  return op.type === 'LAUNCH' || op.type === 'LAUNCH_GROUP'
    ? op.tasks.map((t) => ({ taskId: t.taskId, agentId: t.agentId }))
    : [];
}

function collectOffers(
  m: MasterOps,
  fw: Framework,
  offerIds: readonly string[],
  hasOperations: boolean,
): { offers: Offer[]; error?: string } {
  const offers: Offer[] = [];
  let error: string | undefined;
  const seen = new Set<string>();
  for (const id of offerIds) {
    const offer = fw.offers.get(id);
    if (seen.has(id)) error ??= `Duplicate offer ${id} in offer list`;
    else if (offer === undefined) error ??= `Offer ${id} is no longer valid`;
    else offers.push(offer);
    seen.add(id);
  }
  const [first] = offers;
  if (first !== undefined) {
    if (offers.some((o) => o.agentId !== first.agentId)) error ??= 'Aggregated offers must belong to one single agent';
    if (offers.some((o) => o.role !== first.role)) error ??= 'Aggregated offers must be allocated to the same role';
    if (!m.agents.get(first.agentId)?.active) error ??= `Agent ${first.agentId} is not active`;
  } else if (hasOperations && error === undefined) {
    error = 'No offers specified';
  }
  return error === undefined ? { offers } : { offers, error };
}

/** Resources a task needs from the pool: its own, tagged with the offer's role. */
function needed(spec: TaskSpec, role: string): Resources | string {
  const foreign = spec.resources.find((r) => r.allocationRole !== undefined && r.allocationRole !== role);
  if (foreign !== undefined) {
    return `Task resources are allocated to role '${foreign.allocationRole}' but the offers are for role '${role}'`;
  }
  return withAllocationRole(spec.resources, role);
}

/** Upstream's user of a task for run_tasks: its command's, else its executor's command's, else the framework's. */
function runAsUser(spec: TaskSpec, frameworkUser: string): string {
  return spec.command?.user ?? spec.executor?.command?.user ?? frameworkUser;
}

/** The first task the framework's principal may not run, as its refusal; each is asked before it is validated. */
function runRefusal(m: MasterOps, fw: Framework, specs: readonly TaskSpec[]): string | undefined {
  if (!m.authorizer.enabled) return undefined;
  return m.authorizer.refusalOfAll(
    'run_tasks',
    fw.info.principal,
    specs.map((spec) => runAsUser(spec, fw.info.user)),
  );
}

function launch(m: MasterOps, fw: Framework, pool: Pool, [spec]: readonly TaskSpec[]): void {
  if (spec === undefined) return;
  const refused = runRefusal(m, fw, [spec]);
  if (refused !== undefined) return reject(m, fw, pool, spec, refused, 'REASON_TASK_UNAUTHORIZED');
  const executor = spec.executor;
  const executorKey = executor === undefined ? undefined : `${pool.agentId}/${executor.executorId}`;
  const newExecutor = executor !== undefined && !fw.executors.has(executorKey!);
  const need = needed(spec, pool.role);
  const executorNeed = newExecutor ? withAllocationRole(executor.resources, pool.role) : [];
  const error =
    typeof need === 'string'
      ? need
      : (taskError(
          spec,
          { agentId: pool.agentId, available: pool.available, isDuplicate: (id) => fw.tasks.has(id) },
          add(need, executorNeed),
        ) ?? incompatibleExecutor(fw, executorKey, executor));
  if (error !== undefined || typeof need === 'string') {
    reject(m, fw, pool, spec, error ?? 'Invalid task', 'REASON_TASK_INVALID');
    return;
  }
  pool.available = subtract(pool.available, add(need, executorNeed));
  if (newExecutor) {
    addExecutor(m, fw, executorKey!, {
      executorId: executor.executorId,
      agentId: pool.agentId,
      resources: executorNeed,
      raw: executor.raw,
    });
  }
  const task = record(m, fw, pool, spec, need, executor?.executorId);
  deliver(m, fw, [task], newExecutor ? executorKey : undefined, () => ({
    type: 'RUN_TASK',
    launchId: m.ids.launch(),
    framework: fw.info,
    task: spec,
  }));
}

function launchGroup(
  m: MasterOps,
  fw: Framework,
  pool: Pool,
  executor: ExecutorSpec,
  specs: readonly TaskSpec[],
): void {
  const executorKey = `${pool.agentId}/${executor.executorId}`;
  const newExecutor = !fw.executors.has(executorKey);
  const executorNeed = newExecutor ? withAllocationRole(executor.resources, pool.role) : [];
  let total: Resources = executorNeed;
  const refused = runRefusal(m, fw, specs);
  if (refused !== undefined) {
    for (const spec of specs) reject(m, fw, pool, spec, refused, 'REASON_TASK_GROUP_UNAUTHORIZED');
    return;
  }
  // The executor is checked first: the tasks are measured against what it leaves.
  let error =
    groupError(executor, specs) ??
    incompatibleExecutor(fw, executorKey, executor) ??
    (contains(pool.available, executorNeed)
      ? undefined
      : `Executor uses more resources ${format(executorNeed)} than available ${format(pool.available)}`);
  for (const spec of specs) {
    if (error !== undefined) break;
    const need = needed(spec, pool.role);
    if (typeof need === 'string') {
      error = need;
      break;
    }
    const withCommand: TaskSpec = { ...spec, command: spec.command ?? { shell: true, arguments: [] } };
    const isDuplicate = (id: string) => fw.tasks.has(id) || specs.filter((s) => s.taskId === id).length > 1;
    error = taskError(
      withCommand,
      { agentId: pool.agentId, available: subtract(pool.available, total), isDuplicate },
      need,
    );
    // Tasks of a group and their executor share one container: no port may be claimed twice.
    const clash = overlap(withAllocationRole(total, undefined), spec.resources);
    if (error === undefined && clash !== undefined) error = `Task group uses invalid resources: ${clash}`;
    if (error === undefined) total = add(total, need);
  }
  if (error !== undefined) {
    for (const spec of specs) reject(m, fw, pool, spec, error, 'REASON_TASK_GROUP_INVALID');
    return;
  }
  pool.available = subtract(pool.available, total);
  if (newExecutor) {
    addExecutor(m, fw, executorKey, {
      executorId: executor.executorId,
      agentId: pool.agentId,
      resources: executorNeed,
      raw: executor.raw,
    });
  }
  const tasks = specs.map((spec) =>
    record(m, fw, pool, spec, withAllocationRole(spec.resources, pool.role), executor.executorId),
  );
  deliver(m, fw, tasks, newExecutor ? executorKey : undefined, (live) => ({
    type: 'RUN_TASK_GROUP',
    launchId: m.ids.launch(),
    framework: fw.info,
    executor,
    tasks: live,
  }));
}

/**
 * A task may name an executor the framework already runs on the agent only
 * with an equal ExecutorInfo (the master fills in `framework_id`, so it is
 * not compared).
 */
function incompatibleExecutor(
  fw: Framework,
  key: string | undefined,
  executor: ExecutorSpec | undefined,
): string | undefined {
  const existing = key === undefined ? undefined : fw.executors.get(key);
  if (existing === undefined || executor === undefined) return undefined;
  if (sameValue(withoutFrameworkId(existing.raw), withoutFrameworkId(executor.raw))) return undefined;
  return `ExecutorInfo is not compatible with existing ExecutorInfo with same ExecutorID '${executor.executorId}'`;
}

function withoutFrameworkId(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object') return raw;
  const { framework_id: _ignored, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/** Structural equality of decoded wire messages (plain objects, arrays, bytes, scalars). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function groupError(executor: ExecutorSpec, specs: readonly TaskSpec[]): string | undefined {
  if (executor.invalid !== undefined) return executor.invalid;
  if (executor.type !== 'DEFAULT') return "'ExecutorInfo.type' must be 'DEFAULT' for a task group";
  if (specs.length === 0) return 'Task group cannot be empty';
  const withExecutor = specs.find((s) => s.executor !== undefined);
  if (withExecutor !== undefined) return `Task '${withExecutor.taskId}' in a task group must not set 'executor'`;
  return undefined;
}

function record(
  m: MasterOps,
  fw: Framework,
  pool: Pool,
  spec: TaskSpec,
  resources: Resources,
  executorId?: string,
): Task {
  // Every field from the start, the ones set later too: one compact shape for all tasks.
  const task: Task = {
    spec,
    frameworkId: fw.id,
    agentId: pool.agentId,
    executorId,
    role: pool.role,
    resources,
    state: 'TASK_STAGING',
    statuses: [],
    statusUpdateState: undefined,
    statusUpdateUuid: undefined,
    pending: true,
    resourcesRecovered: false,
  };
  addTask(m, fw, task, false);
  pool.unbooked.push(resources);
  m.ctx.trace.append('task:launch', { frameworkId: fw.id, agentId: pool.agentId, taskId: spec.taskId, executorId });
  return task;
}

/**
 * Hands tasks (one task, or one task group) to the agent after the launch
 * delay, unless killed meanwhile. A group goes whole or not at all: when
 * one of its tasks was killed during the launch, the others are killed too,
 * as upstream does. An executor added for tasks that never reach the agent
 * is dropped with them; nothing would ever release its resources otherwise.
 */
function deliver(
  m: MasterOps,
  fw: Framework,
  tasks: readonly Task[],
  newExecutorKey: string | undefined,
  run: (live: TaskSpec[]) => MasterToAgent,
): void {
  m.ctx.loop.schedule(m.options.taskLaunchDelayMs ?? 0, 'master:launch', () => {
    if (fw.state === 'removed') return;
    let live = tasks.filter((t) => t.pending);
    if (live.length < tasks.length) {
      for (const t of live) killDuringLaunch(m, fw, t);
      live = [];
    }
    for (const t of live) t.pending = false;
    if (live.length === 0) {
      dropUnusedExecutor(m, fw, newExecutorKey);
      return;
    }
    m.toAgent(live[0]!.agentId, run(live.map((t) => t.spec)));
  });
}

/** KILL of an accepted task not yet handed to its agent: the master answers itself. */
export function killDuringLaunch(m: MasterOps, fw: Framework, task: Task): void {
  task.pending = false;
  const status = masterStatus(
    m,
    refOf(task),
    'TASK_KILLED',
    'Killed before delivery to the agent',
    'REASON_TASK_KILLED_DURING_LAUNCH',
  );
  updateTaskState(m, task, status);
  fw.completeTask(task);
  fw.send({ type: 'UPDATE', status });
}

function dropUnusedExecutor(m: MasterOps, fw: Framework, key: string | undefined): void {
  const record = key === undefined ? undefined : fw.executors.get(key);
  if (record === undefined) return;
  // A later launch may have reused the executor before this one was dropped.
  for (const t of fw.tasks.values()) if (t.agentId === record.agentId && t.executorId === record.executorId) return;
  removeExecutor(m, fw, key!);
  m.ctx.trace.append('executor:drop', { frameworkId: fw.id, agentId: record.agentId, executorId: record.executorId });
}

function reject(m: MasterOps, fw: Framework, pool: Pool, spec: TaskSpec, message: string, reason: StatusReason): void {
  m.ctx.trace.append('task:invalid', { frameworkId: fw.id, taskId: spec.taskId, message });
  const status = masterStatus(m, { taskId: spec.taskId, agentId: pool.agentId }, 'TASK_ERROR', message, reason);
  fw.send({ type: 'UPDATE', status });
}

function unsupported(m: MasterOps, fw: Framework, pool: Pool, name: string, id: string | undefined): void {
  m.ctx.trace.append('operation:unsupported', { frameworkId: fw.id, operation: name, operationId: id });
  if (id === undefined) return;
  fw.send({
    type: 'UPDATE_OPERATION_STATUS',
    status: {
      operationId: id,
      state: 'OPERATION_ERROR',
      message: `Operation ${name} is not supported`,
      agentId: pool.agentId,
    },
  });
}
