/**
 * The one error of a start: `startCluster()` and `clustersim up` throw it
 * for any option, address or file that stops the cluster from starting.
 */
/** A start that cannot go on: one line saying why, naming the options at fault (`options`, in order). */
export class StartError extends Error {
  /** The library options the message names, in the order it names them. */
  readonly options: readonly string[];

  constructor(message: string, options: string | readonly string[] = []) {
    super(message);
    this.name = 'StartError';
    this.options = typeof options === 'string' ? [options] : options;
  }

  /** The option at fault: the first the message names. */
  get option(): string | undefined {
    return this.options[0];
  }
}
