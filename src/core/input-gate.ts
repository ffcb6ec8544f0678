/**
 * The gate every input of the `Cluster` port goes through (its `#input`,
 * cluster.ts): the input is written into the record (input-record.ts)
 * when the cluster records, applied, its answer handed on first when
 * the caller asked (`answerFirst`), and then the cluster's own steps run
 * (what it made due, the invariants). A fault (`inject`) is one input
 * whose parts run inside it; any other input inside an input is a bug.
 */
import { encodeArgs, INPUT_KIND_PREFIX, type InputRecord } from './input-record.js';
import type { SimContext } from './network/context.js';

/** What the cluster does around each input. */
export interface InputSteps {
  /** Before the input changes anything (reads written over several turns settle). */
  readonly before: () => void;
  /** After it is applied and its answer handed on. */
  readonly after: () => void;
}

export class InputGate {
  /** The input running now, if any. */
  #running: string | undefined;
  /** Told the next input's result once it is applied (`answerFirst`). */
  #answerFirst: ((result: unknown) => void) | undefined;
  /** Every input so far, when keeping them. */
  readonly kept: InputRecord[] | undefined;
  /** Whether each input is written into the trace (kept or not). */
  readonly traces: boolean;
  #count = 0;

  /** `record`: the cluster's `recordInputs` (`'trace'`: written into the trace only). */
  constructor(
    private readonly ctx: Pick<SimContext, 'loop' | 'trace'>,
    record: boolean | 'trace',
    private readonly steps: InputSteps,
  ) {
    this.kept = record === true ? [] : undefined;
    this.traces = record !== false;
  }

  /** Inputs taken so far while writing them into the trace. */
  get count(): number {
    return this.#count;
  }

  /** The next input hands its result to `hook` as soon as it is applied (`Cluster.answerFirst`). */
  answerFirst(hook: ((result: unknown) => void) | undefined): void {
    this.#answerFirst = hook;
  }

  run<T>(name: string, args: readonly unknown[], apply: () => T): T {
    if (this.#running !== undefined) {
      if (this.#running === 'inject') return apply();
      throw new Error('cluster: an input started while another was running');
    }
    this.#running = name;
    try {
      this.steps.before();
      if (this.traces) this.#record(name, args);
      const result = apply();
      const first = this.#answerFirst;
      this.#answerFirst = undefined;
      first?.(result);
      this.steps.after();
      return result;
    } finally {
      this.#running = undefined;
    }
  }

  #record(name: string, args: readonly unknown[]): void {
    this.#count++;
    this.kept?.push({ name, args, timeMs: this.ctx.loop.now() });
    this.ctx.trace.appendText(INPUT_KIND_PREFIX + name, encodeArgs(args));
  }
}
