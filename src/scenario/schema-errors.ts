/**
 * What a scenario file's schema errors say: every place the schema
 * refuses, a line each in the file's order, with its position, its field
 * and a message a person reads (a duration's forms, an agent's, the fields
 * allowed, the nearest enum value meant), rather than ajv's own words.
 */
import type { ErrorObject } from 'ajv';
import { nearest } from '../runtime/spelling.js';
import { formatSpan } from './duration.js';
import { MAX_DURATION_MS } from './limits.js';
import { AGENT_SELECTOR_FORM, isAgentTargetSchema, isDurationSchema } from './schema.js';
import { isSelector } from './targets.js';

/** A place in the file: the keys and indexes down to it. */
export type Path = readonly (string | number)[];

/** `timeline[0].fault.agent`: a place as a person names it. */
export function fieldName(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The most a file's schema errors are listed; past it, how many more there are. */
const MAX_SCHEMA_ERRORS = 20;

/**
 * Every place of the file the schema refuses, a line each, in the file's
 * order: a `oneOf` or `anyOf` and the errors of its branches are one place,
 * said as one line (`schemaError`).
 */
export function schemaErrors(errors: readonly ErrorObject[], where: (path: Path, key?: string) => string): string {
  const choices = errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf');
  const inside = (e: ErrorObject, o: ErrorObject) => o !== e && e.schemaPath.startsWith(`${o.schemaPath}/`);
  const roots = errors.filter((e) => !choices.some((o) => inside(e, o)));
  const lines = [
    ...new Set([
      ...roots
        .filter((root) => root.keyword !== 'required')
        .map((root) => schemaError([root, ...errors.filter((e) => inside(e, root))], where)),
      ...missingFields(roots, where),
    ]),
  ].sort(byPosition);
  const more = lines.length - MAX_SCHEMA_ERRORS;
  const shown = more > 0 ? [...lines.slice(0, MAX_SCHEMA_ERRORS), `... and ${more} more`] : lines;
  return shown.join('\n');
}

/** The fields an object lacks, one line for each object: `must have required properties 'duration', 'cluster'`. */
function missingFields(roots: readonly ErrorObject[], where: (path: Path, key?: string) => string): string[] {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const e of roots.filter((r) => r.keyword === 'required'))
    byPlace.set(e.instancePath, [...(byPlace.get(e.instancePath) ?? []), e]);
  return [...byPlace.values()].map((missing) => {
    const line = schemaError(missing, where);
    if (missing.length === 1) return line;
    const names = missing.map((e) => `'${(e.params as { missingProperty: string }).missingProperty}'`).join(', ');
    return line.replace(/must have required property '.*'$/, `must have required properties ${names}`);
  });
}

/** `file:12:3: ...` before `file:9:1: ...` by line, then column: the order a reader meets them. */
function byPosition(a: string, b: string): number {
  const at = (line: string) => /:(\d+):(\d+): /.exec(line)?.slice(1).map(Number) ?? [0, 0];
  const [la = 0, ca = 0] = at(a);
  const [lb = 0, cb = 0] = at(b);
  return la - lb || ca - cb;
}

function schemaError(errors: readonly ErrorObject[], where: (path: Path, key?: string) => string): string {
  // A oneOf says more than the first of its branches' errors: 'a duration', 'one of at or when'.
  const error =
    errors.find((e) => e.keyword === 'oneOf' && isDurationSchema(e.parentSchema)) ??
    agentTargetError(errors) ??
    errors.find((e) => e.keyword === 'oneOf' && formsOf(e.schema).length > 0) ??
    errors[0]!;
  const path: Path = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replaceAll('~1', '/').replaceAll('~0', '~')));
  const extra =
    error.keyword === 'additionalProperties'
      ? (error.params as { additionalProperty: string }).additionalProperty
      : undefined;
  const field = fieldName(extra === undefined ? path : [...path, extra]);
  return `${where(path, extra)}: ${field === '' ? 'the file' : field}: ${messageOf(error)}`;
}

/** An agent that is no index, name or selector: what is wrong in the selector if it is an object, else the forms. */
function agentTargetError(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const target = errors.find((e) => e.keyword === 'oneOf' && isAgentTargetSchema(e.parentSchema));
  if (target === undefined || !isSelector(target.data)) return target;
  const inSelector = errors.filter((e) => e.schemaPath.startsWith(`${target.schemaPath}/${AGENT_SELECTOR_FORM}/`));
  return inSelector.find((e) => e.keyword === 'anyOf') ?? inSelector[0] ?? target;
}

const AGENT_FORMS =
  "its index (0, 1, ...), a name an earlier fault chose it 'as', or a selector (running, attributes, task)";

function messageOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'oneOf':
      if (isDurationSchema(error.parentSchema))
        return `must be a duration of at most ${formatSpan(MAX_DURATION_MS)}: whole milliseconds, or 500ms, 30s, 10m, 2h, 1d`;
      if (isAgentTargetSchema(error.parentSchema)) return `must be an agent: ${AGENT_FORMS}`;
      return `must have exactly one of ${formsOf(error.schema).join(' or ')}`;
    case 'anyOf':
      if (formsOf(error.schema).length > 0) return `must have at least one of ${formsOf(error.schema).join(' or ')}`;
      return error.message ?? error.keyword;
    case 'additionalProperties':
      return `is not a field here (allowed: ${Object.keys((error.parentSchema as { properties?: object }).properties ?? {}).join(', ')})`;
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map(String);
      const meant = typeof error.data === 'string' ? nearest(error.data, allowed) : undefined;
      return `must be one of ${allowed.join(', ')}${meant === undefined ? '' : ` (did you mean ${meant}?)`}`;
    }
    default:
      return error.message ?? error.keyword;
  }
}

/** The fields that tell a oneOf's forms apart, e.g. `at` and `when`. */
function formsOf(alternatives: unknown): string[] {
  return (Array.isArray(alternatives) ? alternatives : []).flatMap((f: { required?: string[] }) =>
    f.required === undefined ? [] : [f.required.join(' and ')],
  );
}
