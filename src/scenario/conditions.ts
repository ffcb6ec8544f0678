/**
 * Conditions of a scenario (the shared vocabulary, wire/sim/conditions.ts)
 * read against the cluster: counted as the core counts them
 * (core/conditions.ts `countOf`), once a framework named in the file is
 * resolved to its id, and held to their bounds. Each answer says what was
 * found, for the report.
 */
import { boundsOf, inBounds, type Bounds, type Condition, type CountedCondition } from '../core/conditions.js';

/** What conditions look at, as the runner sees the cluster now. */
export interface Observed {
  /** What a condition counts now, its framework named by id. */
  count(condition: CountedCondition): number;
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

/** A condition of the file (its frameworks named as in the file) checked now; `all` and `any` say what each part found. */
export function holds(condition: Condition, seen: Observed): Verdict {
  if ('all' in condition || 'any' in condition) {
    const every = 'all' in condition;
    const parts = (every ? condition.all : condition.any).map((c) => holds(c, seen));
    return {
      ok: every ? parts.every((p) => p.ok) : parts.some((p) => p.ok),
      what: `${every ? 'all' : 'any'} of (${parts.map((p) => p.what).join('; ')})`,
      found: parts.map((p) => p.found).join('; '),
    };
  }
  const resolved = withFrameworkId(condition, seen);
  return within(boundsOf(condition), resolved === undefined ? 0 : seen.count(resolved), described(condition));
}

/** The condition with its framework's id for its name; undefined when that framework has not subscribed (it has no tasks). */
function withFrameworkId(condition: CountedCondition, seen: Observed): CountedCondition | undefined {
  if (!('tasks' in condition) || condition.tasks.framework === undefined) return condition;
  const id = seen.frameworkId(condition.tasks.framework);
  return id === undefined ? undefined : { tasks: { ...condition.tasks, framework: id } };
}

function described(condition: CountedCondition): string {
  if ('tasks' in condition) {
    const { state, framework, taskId } = condition.tasks;
    return `${state} tasks${taskId === undefined ? '' : ` '${taskId}'`}${framework === undefined ? '' : ` of ${framework}`}`;
  }
  if ('agents' in condition) return `${condition.agents.state} agents`;
  if ('frameworks' in condition) return `${condition.frameworks.state} frameworks`;
  const { kind, contains } = condition.trace;
  return `trace entries ${kind}${contains === undefined ? '' : ` containing '${contains}'`}`;
}

/** A count held to its bounds (core/conditions.ts `inBounds`: with none given, at least one), in words. */
export function within(bounds: Bounds, n: number, what: string): Verdict {
  const parts: string[] = [];
  if (bounds.count !== undefined) parts.push(`exactly ${bounds.count}`);
  if (bounds.min !== undefined) parts.push(`at least ${bounds.min}`);
  if (bounds.max !== undefined) parts.push(`at most ${bounds.max}`);
  if (parts.length === 0) parts.push('at least 1');
  return { ok: inBounds(bounds, n), what: `${parts.join(' and ')} ${what}`, found: `${n}` };
}
