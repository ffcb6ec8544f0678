/**
 * Replay: a trace (the JSON lines of `GET /sim/v1/trace`, or of a run's
 * `--trace` file: `{"seq", "time_ms", "kind", "line"}`) re-run in the core
 * alone. Its first entry (`cluster:start`) builds the same cluster; each
 * `input:<method>` entry is applied again, in order, at its time; and the
 * trace the new cluster writes is compared with the file entry by entry.
 * The first entry that differs is the divergence: its seq and time, the
 * line expected and the line produced.
 * The same idea in memory, a cluster built from another's options and its
 * recorded inputs, is `rebuildCluster` (core/rebuild.ts).
 */
import { Cluster, type ClusterOptions } from '../core/cluster.js';
import { decodeArgs, decodeValue, INPUT_KIND_PREFIX, type AuthorizerOf } from '../core/input-record.js';
import type { TraceEntry } from '../core/kernel/trace.js';
import { applyInput } from '../core/rebuild.js';
import type { ExecutorAuthorizer } from '../core/model/executor-api.js';
import { claimsAuthorizer } from '../http/agent/executor-token.js';

/** One line of a trace file. */
export interface TraceLine {
  readonly seq: number;
  readonly timeMs: number;
  readonly kind: string;
  readonly line: string;
}

export interface Divergence {
  readonly seq: number;
  readonly timeMs: number;
  /** The line in the file, or undefined where the file had ended. */
  readonly expected: string | undefined;
  /** The line the replay produced, or undefined where it produced none. */
  readonly produced: string | undefined;
}

export interface ReplayResult {
  /** Entries compared (all of them when nothing diverged). */
  readonly entries: number;
  /** The hash of the trace the replay produced (Trace.hash). */
  readonly hash: string;
  readonly divergence: Divergence | undefined;
}

export interface ReplayOptions {
  /** Called every `progressEvery` entries with the count so far. */
  readonly onProgress?: (entries: number) => void;
  readonly progressEvery?: number;
  /**
   * Check the invariants after every input (default on). Off, a replay runs
   * faster and writes the same trace, but a bug that broke an invariant in
   * the recorded run goes unnoticed.
   */
  readonly checkInvariants?: boolean;
}

/** A line of a trace file read, or the reason it is not one. */
export function parseTraceLine(text: string): TraceLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  const { seq, time_ms: timeMs, kind, line } = (value ?? {}) as Record<string, unknown>;
  if (typeof seq !== 'number' || typeof timeMs !== 'number' || typeof kind !== 'string' || typeof line !== 'string') {
    return "expecting an object with 'seq', 'time_ms', 'kind' and 'line'";
  }
  return { seq, timeMs, kind, line };
}

/** Claims recorded for an executor call's check give the executor API's own check again. */
const authorizerOf: AuthorizerOf = (claims) =>
  claims === null
    ? allowAll
    : claimsAuthorizer(Object.fromEntries(Object.entries(claims).map(([k, v]) => [k, String(v)])));
const allowAll: ExecutorAuthorizer = () => undefined;

/** The text after `<time> <kind> ` of an entry's line. */
function textOf(entry: TraceLine): string {
  const head = `${entry.timeMs} ${entry.kind} `;
  if (!entry.line.startsWith(head))
    throw new ReplayError(`entry ${entry.seq}: its line does not start with its time and kind`);
  return entry.line.slice(head.length);
}

export class ReplayError extends Error {
  override readonly name = 'ReplayError';
}

/** The options of the cluster a `cluster:start` entry describes, recording its inputs. */
export function optionsFromStart(entry: TraceLine): ClusterOptions {
  if (entry.kind !== 'cluster:start')
    throw new ReplayError(`the trace starts with '${entry.kind}', not 'cluster:start': a replay needs the whole trace`);
  const start = decodeValue(textOf(entry), authorizerOf) as Record<string, unknown>;
  const { seed, epochMs, networkLatencyMs, master, masters, electionDelayMs } = start;
  const { workDir, sandboxBytes, sandboxesBytes } = start;
  if (typeof seed !== 'string' || typeof epochMs !== 'number' || typeof master !== 'object' || master === null) {
    throw new ReplayError("the 'cluster:start' entry does not name the seed, the epoch and the master's options");
  }
  return {
    seed,
    epochMs,
    master: master as ClusterOptions['master'],
    ...(typeof networkLatencyMs === 'number' ? { networkLatencyMs } : {}),
    ...(typeof masters === 'number' ? { masters } : {}),
    ...(typeof electionDelayMs === 'number' ? { electionDelayMs } : {}),
    ...(typeof workDir === 'string' ? { workDir } : {}),
    ...(typeof sandboxBytes === 'number' ? { sandboxBytes } : {}),
    ...(typeof sandboxesBytes === 'number' ? { sandboxesBytes } : {}),
    // Written into its trace, to compare; not kept: a replay of a long file holds no more than of a short one.
    recordInputs: 'trace',
  };
}

/**
 * The entries a replay has produced and not compared yet, oldest first: one
 * clock move can produce many, taken one at a time (no `shift`, which
 * copies the rest).
 */
class Pending {
  #entries: TraceEntry[] = [];
  #head = 0;

  push(entry: TraceEntry): void {
    this.#entries.push(entry);
  }

  get first(): TraceEntry | undefined {
    return this.#entries[this.#head];
  }

  take(): TraceEntry | undefined {
    const entry = this.#entries[this.#head++];
    if (this.#head === this.#entries.length) {
      this.#entries = [];
      this.#head = 0;
    }
    return entry;
  }
}

/** Replays a trace's entries (in order) and compares what the core writes with them. */
export async function replay(
  lines: AsyncIterable<TraceLine> | Iterable<TraceLine>,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const produced = new Pending();
  let cluster: Cluster | undefined;
  let compared = 0;
  const every = options.progressEvery ?? 100_000;
  const result = (divergence?: Divergence): ReplayResult => ({
    entries: compared,
    hash: cluster?.trace.hash() ?? '',
    divergence,
  });
  for await (const expected of lines) {
    if (cluster === undefined) {
      cluster = new Cluster({ ...optionsFromStart(expected), checkInvariants: options.checkInvariants ?? true });
      cluster.trace.onEntry((entry) => produced.push(entry));
      cluster.trace.entries().forEach((entry) => {
        produced.push(entry);
      });
    } else if (expected.kind.startsWith(INPUT_KIND_PREFIX)) {
      // Everything before this input must have been produced already.
      if (produced.first !== undefined) return result(diverged(expected, produced.first));
      applyEntry(cluster, expected);
    }
    const next = produced.take();
    if (next?.line !== expected.line) return result(diverged(expected, next));
    compared++;
    if (options.onProgress !== undefined && compared % every === 0) options.onProgress(compared);
  }
  if (cluster === undefined) throw new ReplayError('the trace is empty');
  const extra = produced.first;
  return result(
    extra === undefined
      ? undefined
      : { seq: extra.seq, timeMs: extra.timeMs, expected: undefined, produced: extra.line },
  );
}

function diverged(expected: TraceLine, produced: TraceEntry | undefined): Divergence {
  return { seq: expected.seq, timeMs: expected.timeMs, expected: expected.line, produced: produced?.line };
}

/** Applies one `input:` entry to the cluster; what it sends to subscribers is dropped (nobody listens). */
function applyEntry(cluster: Cluster, entry: TraceLine): void {
  const name = entry.kind.slice(INPUT_KIND_PREFIX.length);
  const args = decodeArgs(textOf(entry), authorizerOf);
  try {
    applyInput(cluster, name, args);
  } catch (error) {
    throw new ReplayError(
      `entry ${entry.seq} (${entry.kind}) failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    cluster.drainOutbox();
    cluster.drainContainers();
  }
}
