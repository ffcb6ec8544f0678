/**
 * Where the runtime may measure the core's work: the core names a piece of
 * work and runs it through `run`, and a hook set from outside (the runtime's
 * metrics) may time it. The core reads no clock itself; a hook must run the
 * work exactly once and return its result, so that a run with a hook and one
 * without are the same run.
 */

/** The pieces of work a hook may time. */
export type ProbedWork = 'allocation';

export type ProbeHook = <T>(work: ProbedWork, run: () => T) => T;

export class Probes {
  #hook: ProbeHook | undefined;

  /** Sets the hook (undefined removes it). */
  set(hook: ProbeHook | undefined): void {
    this.#hook = hook;
  }

  run<T>(work: ProbedWork, run: () => T): T {
    return this.#hook === undefined ? run() : this.#hook(work, run);
  }
}
