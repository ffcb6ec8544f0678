/**
 * How deep the calls from one command of a pipeline to the next (its
 * input, the end of its input, the script going on) nest as plain calls.
 * Past it a call waits until the one at this depth returns, then runs in
 * the order plain calls would have taken (depth first): a pipeline of any
 * length runs in a bounded stack, and a shorter one exactly as before.
 */
const MAX_NESTED_CALLS = 64;

/** The calls of one shell and its subshells (`sh -c`) from command to command; see MAX_NESTED_CALLS. */
export class Relay {
  #depth = 0;
  /** The calls made at the deepest level, in order, while a call there runs. */
  #waiting: (() => void)[] = [];

  call(action: () => void): void {
    if (this.#depth >= MAX_NESTED_CALLS) {
      this.#waiting.push(action);
      return;
    }
    this.#depth++;
    try {
      action();
      if (this.#depth === MAX_NESTED_CALLS) this.#runWaiting();
    } finally {
      this.#depth--;
    }
  }

  /** Runs the calls made at the deepest level, each one's own calls before its next sibling's. */
  #runWaiting(): void {
    const stack: (() => void)[] = [];
    for (;;) {
      const made = this.#waiting;
      this.#waiting = [];
      for (let i = made.length - 1; i >= 0; i--) stack.push(made[i]!);
      const next = stack.pop();
      if (next === undefined) return;
      next();
    }
  }
}
