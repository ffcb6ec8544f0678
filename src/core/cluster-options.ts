/** What a cluster is built with, and what an added agent is given and gets back. */
import type { AgentFlags } from './agent/flags.js';
import type { MasterOptions } from './master/ops.js';
import type { Resources } from './model/resources.js';
import type { Attribute } from './model/types.js';

export interface ClusterOptions {
  readonly seed?: string | number;
  /** Cluster time zero, in milliseconds since the Unix epoch. */
  readonly epochMs?: number;
  readonly master: MasterOptions;
  /** Masters with a leader (default 1); master `i` listens on `master.port + i`. */
  readonly masters?: number;
  /** From a leader's death to its successor's election (`--zk_session_timeout`, default 10 s). */
  readonly electionDelayMs?: number;
  readonly networkLatencyMs?: number;
  /** Keep the whole trace in memory (tests); otherwise only the latest entries (`traceWindow`). */
  readonly recordTrace?: boolean;
  /**
   * How many of the latest trace entries to keep in memory when the whole
   * trace is not recorded (default 256; up to twice as many are held). The
   * hash and the listeners see every entry either way.
   */
  readonly traceWindow?: number;
  /** Check the invariants after every input (on unless turned off). */
  readonly checkInvariants?: boolean;
  /**
   * Keep the record of every input (`inputs()`) and write each into the
   * trace as an `input:<method>` entry, so the run can be replayed and
   * rebuilt (default: as `recordTrace`). Off, inputs cost nothing more.
   * `'trace'` writes the entries and keeps no record: the trace replays,
   * but the cluster cannot be rebuilt, and memory stays flat however long
   * it runs.
   */
  readonly recordInputs?: boolean | 'trace';
  /** The agents' `--work_dir`, where their executors' sandboxes are (default `/var/lib/mesos`). */
  readonly workDir?: string;
  /** The bytes one sandbox holds at most (default DEFAULT_SANDBOX_BYTES, 1 MiB). */
  readonly sandboxBytes?: number;
  /** The bytes all the cluster's sandboxes hold together (default DEFAULT_SANDBOXES_BYTES, 256 MiB). */
  readonly sandboxesBytes?: number;
}

/** 2023-11-14T22:13:20Z: a fixed epoch, so that virtual runs are replayable. */
export const DEFAULT_EPOCH_MS = 1_700_000_000_000;

export interface AgentSpec {
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
  /** The agent's flags; upstream's defaults for those not given. */
  readonly flags?: Partial<AgentFlags>;
}

export interface AddedAgent {
  readonly id: string;
  readonly pid: string;
}
