/**
 * What an agent holds per framework: its executors, the executor of each
 * task, and the executors that exited, for the agent's own endpoints.
 */
import type { FrameworkRef } from '../model/messages.js';
import type { SimExecutor } from './executor.js';
import { MAX_COMPLETED_EXECUTORS_PER_FRAMEWORK, MAX_COMPLETED_FRAMEWORKS, MAX_FINISHED_TASKS } from './flags.js';
import type { HttpExecutor } from './http-executor.js';

/** An executor the agent runs: one it plays itself, or a process that speaks the executor HTTP API. */
export type AgentExecutor = SimExecutor | HttpExecutor;

export interface AgentFramework {
  readonly info: FrameworkRef;
  readonly executors: Map<string, AgentExecutor>;
  /** The executor each task was handed to, known before the executor has it. */
  readonly tasks: Map<string, AgentExecutor>;
  /** Executors that exited, oldest first, for the agent's own endpoints. */
  readonly completed: AgentExecutor[];
  /**
   * Shut down (upstream's TERMINATING): kept until its last executor is
   * gone, so that its executors are still heard (their updates dropped)
   * and still ended; it takes no new updates.
   */
  terminating: boolean;
}

/** The agent's entry of a framework, made with its first task. */
export function frameworkEntry(frameworks: Map<string, AgentFramework>, info: FrameworkRef): AgentFramework {
  let fw = frameworks.get(info.id);
  if (fw === undefined)
    frameworks.set(info.id, (fw = { info, executors: new Map(), tasks: new Map(), completed: [], terminating: false }));
  return fw;
}

/**
 * Forgets a framework being shut down once none of its executors is left;
 * it goes to the completed ones (the newest kept), which only its agent's
 * endpoints read, as upstream's agent keeps them.
 */
export function forgetIfDone(
  frameworks: Map<string, AgentFramework>,
  fw: AgentFramework,
  completed: AgentFramework[],
): void {
  if (!fw.terminating || [...fw.executors.values()].some((e) => e.alive)) return;
  frameworks.delete(fw.info.id);
  completed.push(fw);
  if (completed.length > MAX_COMPLETED_FRAMEWORKS) completed.shift();
}

/**
 * Books an executor's exit: it moves to the completed ones (the newest
 * kept), and its tasks to `finished` (`frameworkId\0taskId`, the newest
 * kept), so that a repeated launch of one of them is ignored.
 */
export function recordExit(fw: AgentFramework, executor: AgentExecutor): void {
  if (fw.executors.get(executor.executorId) === executor) fw.executors.delete(executor.executorId);
  fw.completed.push(executor);
  if (fw.completed.length > MAX_COMPLETED_EXECUTORS_PER_FRAMEWORK) fw.completed.shift();
  for (const [taskId, runner] of fw.tasks) {
    if (runner !== executor) continue;
    fw.tasks.delete(taskId);
  }
}

/** Keeps `id` among the newest MAX_FINISHED_TASKS ids of a set (a Set iterates oldest first). */
export function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  for (const old of ids) {
    if (ids.size <= MAX_FINISHED_TASKS) break;
    ids.delete(old);
  }
}
