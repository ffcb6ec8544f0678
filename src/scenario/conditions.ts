/**
 * Conditions of a scenario (schema.ts `condition`) read against the cluster:
 * counts of tasks, agents and frameworks in a state, and of trace entries,
 * held to their bounds. Each answer says what was found, for the report.
 */
import type { Bounds, Condition } from './scenario.js';

/** What conditions look at, as the runner sees the cluster now. */
export interface Observed {
  /** Tasks whose latest state is `state`, of one framework (by id) or all. */
  tasksIn(state: string, frameworkId: string | undefined): number;
  agentsIn(state: string): number;
  frameworksIn(state: string): number;
  /** Trace entries so far of `kind` whose line contains `contains`. */
  traceCount(kind: string, contains: string | undefined): number;
  /** A framework's id by its name in the file (undefined before it subscribed). */
  frameworkId(name: string): string | undefined;
}

export interface Verdict {
  readonly ok: boolean;
  /** What was checked, in words. */
  readonly what: string;
  /** What was found. */
  readonly found: string;
}

export function holds(condition: Condition, seen: Observed): Verdict {
  if ('tasks' in condition) {
    const { framework, state, ...bounds } = condition.tasks;
    const id = framework === undefined ? undefined : seen.frameworkId(framework);
    const n = framework !== undefined && id === undefined ? 0 : seen.tasksIn(state, id);
    return within(bounds, n, `${state} tasks${framework === undefined ? '' : ` of ${framework}`}`);
  }
  if ('agents' in condition) return within(condition.agents, seen.agentsIn(condition.agents.state), `${condition.agents.state} agents`);
  if ('frameworks' in condition) return within(condition.frameworks, seen.frameworksIn(condition.frameworks.state), `${condition.frameworks.state} frameworks`);
  const { kind, contains, ...bounds } = condition.trace;
  return within(bounds, seen.traceCount(kind, contains), `trace entries ${kind}${contains === undefined ? '' : ` containing '${contains}'`}`);
}

/** A count held to its bounds; with none given, at least one. */
export function within(bounds: Bounds, n: number, what: string): Verdict {
  const parts: string[] = [];
  let ok = true;
  if (bounds.count !== undefined) (parts.push(`exactly ${bounds.count}`), (ok &&= n === bounds.count));
  if (bounds.min !== undefined) (parts.push(`at least ${bounds.min}`), (ok &&= n >= bounds.min));
  if (bounds.max !== undefined) (parts.push(`at most ${bounds.max}`), (ok &&= n <= bounds.max));
  if (parts.length === 0) (parts.push('at least 1'), (ok = n >= 1));
  return { ok, what: `${parts.join(' and ')} ${what}`, found: `${n}` };
}
