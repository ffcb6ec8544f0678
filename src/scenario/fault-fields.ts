/**
 * What a scenario file's fault may hold beyond what the wire reads (loaded
 * in load.ts): `agent`, `framework` and `ordinal` name what the wire's ids
 * do, and any other field is a slip, named with the nearest one meant.
 */
import { nearest } from '../runtime/spelling.js';
import { FAULT_FIELDS } from '../wire/sim/faults.js';

type Raw = Record<string, unknown>;

/**
 * A field a fault of its type does not read, and what to write instead: in
 * a file, `agent`, `framework` and `ordinal` name what the wire's ids do.
 */
export function strayFaultField(fault: Readonly<Raw>): { readonly key: string; readonly text: string } | undefined {
  const wire = FAULT_FIELDS[fault['type'] as keyof typeof FAULT_FIELDS];
  if (wire === undefined) return undefined;
  const file = [
    ...(wire.includes('agent_id') ? ['agent'] : []),
    ...(wire.includes('framework_id') || wire.includes('task_id') ? ['framework'] : []),
    ...(wire.includes('task_id') ? ['ordinal'] : []),
  ];
  const fields = [...file, ...wire];
  const key = Object.keys(fault).find((k) => k !== 'type' && !fields.includes(k));
  if (key === undefined) return undefined;
  const meant = nearest(key, fields);
  const hint = meant === undefined ? '' : ` (did you mean ${meant}?)`;
  return { key, text: `is not a field of ${String(fault['type'])}${hint}; its fields: ${fields.join(', ')}` };
}

/** The faults that take a task by its framework and ordinal. */
const ORDINAL_FAULTS: readonly unknown[] = ['fail_task', 'hang_task', 'memory_spike', 'crash_executor'];

/** What is wrong with a fault's `ordinal`, if it has one: a fault of no task, or a task named twice. */
export function ordinalError(fault: Readonly<Raw>): string | undefined {
  if (fault['ordinal'] === undefined) return undefined;
  if (!ORDINAL_FAULTS.includes(fault['type'])) return `only a fault of a task takes one (${ORDINAL_FAULTS.join(', ')})`;
  if (fault['task_id'] !== undefined) return "names the task 'task_id' names: give one of them";
  return undefined;
}
