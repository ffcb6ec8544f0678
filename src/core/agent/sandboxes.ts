/**
 * Where an executor's sandbox is and how long it stays: upstream's layout
 * under the agent's `--work_dir`,
 *
 *   <work_dir>/slaves/<agent>/frameworks/<framework>/executors/<executor>/runs/<container>
 *
 * with `runs/latest` naming the newest run, and the virtual paths the
 * agent's files API attaches it at (`/frameworks/<f>/executors/<e>/runs/latest`).
 * A sandbox outlives its executor by `--gc_delay` (upstream's default, one
 * week) of cluster time, then it is released: its bytes go back to the
 * cluster's budget, and a spawned executor's directory is removed by the host.
 */
import type { SimContext } from '../network/context.js';
import type { Outbox } from '../network/outbox.js';
import { DEFAULT_SANDBOX_BYTES, DEFAULT_SANDBOXES_BYTES, Sandbox, SandboxBudget } from '../process/sandbox.js';

/** The work directory a simulated agent reports when none is given: the one upstream's packages use. */
export const DEFAULT_WORK_DIR = '/var/lib/mesos';
/** Upstream's `--gc_delay` default: a completed executor's sandbox is removed a week after it exits. */
export const DEFAULT_GC_DELAY_MS = 7 * 24 * 3_600_000;
/** The timer that releases a completed executor's sandbox: housekeeping, it keeps no cluster busy. */
export const SANDBOX_GC_TIMER = 'sandbox:gc';

/** What the agents' sandboxes are made with: one budget for the whole cluster. */
export interface SandboxSettings {
  /** `--work_dir` of every agent. */
  readonly workDir: string;
  /** The bytes one sandbox holds at most. */
  readonly maxBytes: number;
  /** The bytes all sandboxes hold together. */
  readonly budget: SandboxBudget;
  /** `--gc_delay`. */
  readonly gcDelayMs: number;
}

export interface SandboxOptions {
  readonly workDir?: string;
  readonly sandboxBytes?: number;
  readonly sandboxesBytes?: number;
}

export function sandboxSettings(options: SandboxOptions = {}): SandboxSettings {
  return {
    workDir: options.workDir ?? DEFAULT_WORK_DIR,
    maxBytes: options.sandboxBytes ?? DEFAULT_SANDBOX_BYTES,
    budget: new SandboxBudget(options.sandboxesBytes ?? DEFAULT_SANDBOXES_BYTES),
    gcDelayMs: DEFAULT_GC_DELAY_MS,
  };
}

/** Who a sandbox belongs to. */
export interface SandboxOwner {
  readonly agentId: string;
  readonly frameworkId: string;
  readonly executorId: string;
  readonly containerId: string;
}

/** The executor's directory of its runs: `<work_dir>/slaves/<a>/frameworks/<f>/executors/<e>`. */
export function executorPath(workDir: string, owner: Omit<SandboxOwner, 'containerId'>): string {
  const root = workDir.endsWith('/') && workDir !== '/' ? workDir.slice(0, -1) : workDir;
  return `${root === '/' ? '' : root}/slaves/${owner.agentId}/frameworks/${owner.frameworkId}/executors/${owner.executorId}`;
}

/** The sandbox of one run: `<executor path>/runs/<container>`. */
export function sandboxPath(workDir: string, owner: SandboxOwner): string {
  return `${executorPath(workDir, owner)}/runs/${owner.containerId}`;
}

/** The virtual path of an executor's run in the files API: `/frameworks/<f>/executors/<e>/runs/<run>`. */
export function virtualRunPath(frameworkId: string, executorId: string, run: string): string {
  return `/frameworks/${frameworkId}/executors/${executorId}/runs/${run}`;
}

/** An executor's sandbox: its path is made from its owner when asked, not held (a million sandboxes, few paths read). */
class ExecutorSandbox extends Sandbox {
  constructor(
    private readonly workDir: string,
    private readonly owner: SandboxOwner,
    settings: SandboxSettings,
    nowMs: number,
  ) {
    super('', settings.budget, settings.maxBytes, nowMs);
  }

  override get path(): string {
    return sandboxPath(this.workDir, this.owner);
  }
}

/** A fresh, empty sandbox for a new container, at its path, under the settings' bounds. */
export function newSandbox(settings: SandboxSettings, owner: SandboxOwner, nowMs: number): Sandbox {
  return new ExecutorSandbox(settings.workDir, owner, settings, nowMs);
}

/**
 * Releases an exited executor's sandbox once the gc delay is over; a
 * spawned one's directory the host removes then (a `gc` container record).
 */
export function collectLater(
  ctx: SimContext,
  outbox: Outbox,
  settings: SandboxSettings,
  executor: { readonly sandbox: Sandbox; readonly containerId: string; readonly spawned: boolean },
  agentId: string,
): void {
  if (executor.sandbox.collecting) return;
  executor.sandbox.collecting = true;
  ctx.loop.schedule(settings.gcDelayMs, SANDBOX_GC_TIMER, () => {
    executor.sandbox.release();
    if (executor.spawned)
      outbox.container({ kind: 'gc', agentId, containerId: executor.containerId, directory: executor.sandbox.path });
  });
}
