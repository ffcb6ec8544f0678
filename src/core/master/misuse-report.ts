/**
 * The protocol-misuse report as plain data: per framework, per kind of
 * misuse, how often it happened, when first and last (cluster time, ms
 * since the cluster started), the first few instances with their ids, and
 * one line saying why it is a misuse and what to do instead. What a real
 * cluster tolerates but a framework should not do; `misuse.ts` decides
 * each kind from what the master sees. `formatMisuse` writes the report
 * as text lines, for the end of a scenario run.
 *
 * Memory is bounded: a count, two times and at most `MAX_EXAMPLES`
 * examples per framework and kind, never every instance. Order is fixed:
 * frameworks by id, kinds in the order of `MISUSE_KINDS`.
 */

export const MISUSE_KINDS = [
  'unacknowledged_update',
  'acknowledge_without_uuid',
  'acknowledge_unknown_update',
  'accept_invalid_offer',
  'decline_loop',
  'no_reconcile_after_resubscribe',
  'stale_stream_id',
  'offer_held',
] as const;

export type MisuseKind = (typeof MISUSE_KINDS)[number];

/** Why each kind is a misuse, and what to do instead: one line each. */
export const MISUSE_EXPLANATIONS: Readonly<Record<MisuseKind, string>> = {
  unacknowledged_update:
    'An update with a uuid is retried by the agent until acknowledged, and the later updates of its task wait behind it: acknowledge each one with its uuid once handled',
  acknowledge_without_uuid:
    'Only updates that carry a uuid may be acknowledged (the master answers 400); updates the master makes itself (reconciliation, lost tasks, invalid offers) have none: do not acknowledge them',
  acknowledge_unknown_update:
    'The uuid matches no update sent to the framework for that task, so the acknowledgement releases nothing: acknowledge the uuid of the update received, for its own task and agent',
  accept_invalid_offer:
    'An offer can be answered once: after a RESCIND, a decline or an accept it is gone and its tasks come back TASK_LOST (TASK_DROPPED when partition aware): drop offers when rescinded or answered',
  decline_loop:
    'Declining with no or a short refuse filter brings the same agent back within seconds, which loads the master and delays other frameworks: decline with a long filters.refuse_seconds, or SUPPRESS while no offers are needed',
  no_reconcile_after_resubscribe:
    'After re-subscribing (own failover, lost connection, master failover) the framework may have missed updates of its tasks: send RECONCILE (empty, for all tasks) soon after SUBSCRIBED',
  stale_stream_id:
    'Every subscription has its own stream id (the Mesos-Stream-Id header of the SUBSCRIBE answer); calls with an old or missing one are refused with 400: send calls with the current one only',
  offer_held:
    'An outstanding offer keeps its resources from every other framework: accept or decline offers within seconds, declining with a filter what is not needed',
};

/** The ids an instance names (only those that apply). */
export interface MisuseIds {
  readonly taskId?: string;
  readonly agentId?: string;
  readonly offerId?: string;
  readonly uuid?: string;
  readonly streamId?: string;
}

export interface MisuseExample {
  /** Cluster time of the instance, in ms since the cluster started. */
  readonly timeMs: number;
  readonly ids: MisuseIds;
  /** What happened, in one line. */
  readonly detail: string;
}

export interface MisuseEntry {
  readonly kind: MisuseKind;
  readonly count: number;
  readonly firstTimeMs: number;
  readonly lastTimeMs: number;
  readonly explanation: string;
  /** The first instances, at most `MAX_EXAMPLES`. */
  readonly examples: readonly MisuseExample[];
}

export interface FrameworkMisuse {
  readonly frameworkId: string;
  /** The framework's name, when the master still knows it. */
  readonly name?: string;
  readonly misuses: readonly MisuseEntry[];
}

export interface MisuseReport {
  /** Cluster time of the report. */
  readonly timeMs: number;
  /** Frameworks with at least one misuse, by id. */
  readonly frameworks: readonly FrameworkMisuse[];
}

export const MAX_EXAMPLES = 3;

interface MutableEntry {
  count: number;
  firstTimeMs: number;
  lastTimeMs: number;
  readonly examples: MisuseExample[];
}

/** An instance's ids and what happened, as an example gives them. */
export type Described = Omit<MisuseExample, 'timeMs'>;

/** Counts per framework and kind, with the first few examples. */
export class MisuseTally {
  readonly #byFramework = new Map<string, Map<MisuseKind, MutableEntry>>();

  /**
   * Counts an instance at `timeMs`; `describe` is asked for its ids and
   * detail only while the kind keeps examples (a framework that repeats a
   * misuse on every call pays for counting it, not for describing it).
   */
  note(frameworkId: string, kind: MisuseKind, timeMs: number, describe: () => Described): void {
    let kinds = this.#byFramework.get(frameworkId);
    if (kinds === undefined) this.#byFramework.set(frameworkId, (kinds = new Map()));
    const entry = kinds.get(kind);
    if (entry === undefined) {
      kinds.set(kind, { count: 1, firstTimeMs: timeMs, lastTimeMs: timeMs, examples: [{ timeMs, ...describe() }] });
      return;
    }
    entry.count++;
    entry.firstTimeMs = Math.min(entry.firstTimeMs, timeMs);
    entry.lastTimeMs = Math.max(entry.lastTimeMs, timeMs);
    if (entry.examples.length < MAX_EXAMPLES) entry.examples.push({ timeMs, ...describe() });
  }

  /** Forgets a framework's counts (the oldest of the removed ones, when too many are kept). */
  forget(frameworkId: string): void {
    this.#byFramework.delete(frameworkId);
  }

  has(frameworkId: string): boolean {
    return this.#byFramework.has(frameworkId);
  }

  get frameworkCount(): number {
    return this.#byFramework.size;
  }

  /** A copy, so that a report can add what is overdue now without changing the record. */
  copy(): MisuseTally {
    const copy = new MisuseTally();
    for (const [frameworkId, kinds] of this.#byFramework) {
      const entries = new Map<MisuseKind, MutableEntry>();
      for (const [kind, e] of kinds) entries.set(kind, { ...e, examples: [...e.examples] });
      copy.#byFramework.set(frameworkId, entries);
    }
    return copy;
  }

  report(timeMs: number, nameOf: (frameworkId: string) => string | undefined): MisuseReport {
    const ids = [...this.#byFramework.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const frameworks = ids.map((frameworkId): FrameworkMisuse => {
      const kinds = this.#byFramework.get(frameworkId)!;
      const misuses = MISUSE_KINDS.flatMap((kind): MisuseEntry[] => {
        const e = kinds.get(kind);
        if (e === undefined) return [];
        const { count, firstTimeMs, lastTimeMs } = e;
        return [
          { kind, count, firstTimeMs, lastTimeMs, explanation: MISUSE_EXPLANATIONS[kind], examples: [...e.examples] },
        ];
      });
      const name = nameOf(frameworkId);
      return { frameworkId, ...(name === undefined ? {} : { name }), misuses };
    });
    return { timeMs, frameworks };
  }
}

/** Cluster time as seconds with milliseconds: `95.250 s`. */
export function formatSeconds(timeMs: number): string {
  return `${(timeMs / 1000).toFixed(3)} s`;
}

function formatIds(ids: MisuseIds): string {
  const parts: string[] = [];
  if (ids.taskId !== undefined) parts.push(`task '${ids.taskId}'`);
  if (ids.agentId !== undefined) parts.push(`agent '${ids.agentId}'`);
  if (ids.offerId !== undefined) parts.push(`offer '${ids.offerId}'`);
  if (ids.uuid !== undefined) parts.push(`uuid '${ids.uuid}'`);
  if (ids.streamId !== undefined) parts.push(`stream '${ids.streamId}'`);
  return parts.join(', ');
}

/**
 * The report as text lines: one per framework and kind, then the first
 * example and the explanation, indented. One line when there is nothing.
 */
export function formatMisuse(report: MisuseReport): string[] {
  if (report.frameworks.length === 0) return ['protocol misuse: none'];
  const lines = [`protocol misuse (at ${formatSeconds(report.timeMs)}):`];
  for (const fw of report.frameworks) {
    const who = fw.name === undefined ? `framework '${fw.frameworkId}'` : `framework '${fw.frameworkId}' (${fw.name})`;
    for (const m of fw.misuses) {
      const times =
        m.count === 1
          ? `at ${formatSeconds(m.firstTimeMs)}`
          : `from ${formatSeconds(m.firstTimeMs)} to ${formatSeconds(m.lastTimeMs)}`;
      lines.push(`  ${who}: ${m.kind} x${m.count}, ${times}`);
      const example = m.examples[0];
      if (example !== undefined) {
        const ids = formatIds(example.ids);
        lines.push(`    e.g. at ${formatSeconds(example.timeMs)}: ${example.detail}${ids === '' ? '' : ` [${ids}]`}`);
      }
      lines.push(`    why: ${m.explanation}`);
    }
  }
  return lines;
}
