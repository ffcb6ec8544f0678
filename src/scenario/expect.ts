/**
 * Expectations of a scenario, checked at their time or at the end: the
 * conditions, a framework's event sequence, its re-subscriptions, a metric,
 * the full invariant check.
 */
import { holds, within, type Observed, type Verdict } from './conditions.js';
import type { Expectation, ProcessCheck, ServiceCheck } from './scenario.js';
import { formatSpan } from './duration.js';
import type { SequenceProgress } from './observe.js';

/** What the expectations read beyond the conditions. */
export interface Evidence extends Observed {
  /** How far a framework's events (`TYPE` or `UPDATE TASK_STATE`) have matched an expected sequence of the file. */
  sequence(frameworkName: string, expected: readonly string[]): SequenceProgress;
  /** When a framework lost its subscription, and when it had one again, in cluster time. */
  subscriptions(frameworkName: string): { readonly lost: readonly number[]; readonly subscribed: readonly number[] };
  /** A figure of /metrics/snapshot. */
  metric(name: string): number | undefined;
  /** The full invariant check: undefined when it passes, else why not. */
  invariants(): string | undefined;
  /** Protocol misuses counted so far, of a framework (by name) or all, of a kind or all. */
  misuses(frameworkName: string | undefined, kind: string | undefined): number;
  /** The kinds of those misuses with their counts, e.g. `unacknowledged_update ×2`, for the report. */
  misuseKinds(frameworkName: string | undefined, kind: string | undefined): readonly string[];
  /** An external framework's process as it is now (or as it ended). */
  process(frameworkName: string): ProcessState | undefined;
}

/** An external framework's process: running, or how it ended. */
export interface ProcessState {
  readonly running: boolean;
  /** Its exit code once it ended by itself or on SIGTERM; null when a signal ended it. */
  readonly exitCode: number | null | undefined;
  readonly signal: string | null | undefined;
  /** Whether the run stopped it at its end (rather than it ending by itself). */
  readonly stoppedByRun: boolean;
}

/** A bundled framework's answer to an expectation's GET. */
export interface ServiceAnswer {
  readonly status: number;
  readonly body: string;
}

export interface ExpectationResult extends Verdict {
  readonly line: number;
  readonly atMs: number;
}

/** Checks an expectation; a `service` one against the answer the runner fetched for it. */
export function check(e: Expectation, seen: Evidence, nowMs: number, answer?: ServiceAnswer): ExpectationResult {
  const result =
    'service' in e ? serviceVerdict(e.service, answer ?? { status: 0, body: 'not asked' }) : verdict(e, seen);
  return { ...result, line: e.line, atMs: nowMs };
}

function serviceVerdict(e: ServiceCheck, answer: ServiceAnswer): Verdict {
  const status = e.status ?? 200;
  const what = `${e.name} answers GET ${e.get} with ${status}${e.field === undefined ? '' : ` and ${e.field}${e.equals === undefined ? ' set' : ` = ${String(e.equals)}`}`}`;
  if (answer.status !== status)
    return { ok: false, what, found: `${answer.status} ${answer.body.trim().slice(0, 200)}` };
  if (e.field === undefined) return { ok: true, what, found: String(answer.status) };
  let value: unknown;
  try {
    value = e.field
      .split('.')
      .reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], JSON.parse(answer.body));
  } catch {
    return { ok: false, what, found: `not JSON: ${answer.body.trim().slice(0, 200)}` };
  }
  const ok = e.equals === undefined ? value !== undefined : value === e.equals;
  return { ok, what, found: `${e.field} = ${JSON.stringify(value) ?? 'nothing'}` };
}

function verdict(e: Exclude<Expectation, { readonly service: ServiceCheck }>, seen: Evidence): Verdict {
  if ('events' in e)
    return inOrder(e.events.framework, e.events.sequence, seen.sequence(e.events.framework, e.events.sequence));
  if ('resubscribed' in e) return resubscribed(e.resubscribed, seen.subscriptions(e.resubscribed.framework));
  if ('metric' in e) {
    const { name, ...bounds } = e.metric;
    const value = seen.metric(name);
    if (value === undefined) return { ok: false, what: `metric ${name}`, found: 'no such metric' };
    return within(bounds, value, `(metric ${name})`);
  }
  if ('misuse' in e) return misuseVerdict(e.misuse, seen);
  if ('process' in e) return processVerdict(e.process, seen.process(e.process.framework));
  if ('invariants' in e) {
    const broken = seen.invariants();
    return { ok: broken === undefined, what: 'the invariants hold', found: broken ?? 'they hold' };
  }
  return holds(e, seen);
}

function misuseVerdict(e: Extract<Expectation, { readonly misuse: unknown }>['misuse'], seen: Evidence): Verdict {
  const { framework, kind, ...bounds } = e;
  const bound =
    bounds.count === undefined && bounds.min === undefined && bounds.max === undefined ? { count: 0 } : bounds;
  const result = within(
    bound,
    seen.misuses(framework, kind),
    `protocol misuses${kind === undefined ? '' : ` of kind ${kind}`}${framework === undefined ? '' : ` by ${framework}`}`,
  );
  const kinds = seen.misuseKinds(framework, kind);
  return kinds.length === 0 ? result : { ...result, found: `${result.found}: ${kinds.join(', ')}` };
}

function processVerdict(e: ProcessCheck, state: ProcessState | undefined): Verdict {
  const what =
    e.exit_code !== undefined
      ? `the process of ${e.framework} exits with code ${e.exit_code}`
      : `the process of ${e.framework} is ${e.running === false ? 'not running' : 'running'} at the end`;
  if (state === undefined) return { ok: false, what, found: 'no process' };
  const ended =
    state.running || state.stoppedByRun
      ? state.running
        ? 'running'
        : `running until the run stopped it (${endedHow(state)})`
      : `ended by itself (${endedHow(state)})`;
  const running = state.running || state.stoppedByRun;
  const ok =
    (e.running === undefined || e.running === running) && (e.exit_code === undefined || state.exitCode === e.exit_code);
  return { ok, what, found: ended };
}

function endedHow(state: ProcessState): string {
  return state.exitCode === null || state.exitCode === undefined
    ? `signal ${state.signal ?? 'unknown'}`
    : `exit code ${state.exitCode}`;
}

/** The expected events appear in this order, others between them allowed. */
function inOrder(framework: string, expected: readonly string[], events: SequenceProgress): Verdict {
  const i = events.matched;
  const what = `${framework} receives ${expected.join(', ')} in this order`;
  if (i === expected.length) return { ok: true, what, found: `${events.count} events` };
  const more = events.count > events.head.length ? ', ...' : '';
  return {
    ok: false,
    what,
    found: `no ${expected[i]} after ${i === 0 ? 'the start' : expected[i - 1]} (${events.count} events: ${events.head.join(', ')}${more})`,
  };
}

function resubscribed(
  e: { readonly framework: string; readonly within: number; readonly min?: number },
  history: { readonly lost: readonly number[]; readonly subscribed: readonly number[] },
): Verdict {
  const what = `${e.framework} subscribed again within ${formatSpan(e.within)} of each loss${e.min === undefined ? '' : `, at least ${e.min} times`}`;
  const gaps = history.lost.map((t) => (history.subscribed.find((s) => s >= t) ?? Infinity) - t);
  const slow = gaps.findIndex((g) => g > e.within);
  const found = `${gaps.length} losses${gaps.length === 0 ? '' : `, longest gap ${Number.isFinite(Math.max(...gaps)) ? formatSpan(Math.max(...gaps)) : 'never'}`}`;
  if (slow >= 0)
    return {
      ok: false,
      what,
      found: `${found}; the loss at ${formatSpan(history.lost[slow]!)} was not followed in time`,
    };
  return { ok: gaps.length >= (e.min ?? 1), what, found };
}
