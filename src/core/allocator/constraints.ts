/**
 * Offer constraints of a role: the agent qualifies when any group holds, and
 * a group holds when all of its attribute constraints hold. Text predicates
 * compare against the attribute's text form; regexes must match the whole
 * value (RE2 full-match semantics, evaluated with the platform's regex).
 */
import { formatValue } from '../model/resources.js';
import type { Attribute, AttributeConstraint, OfferConstraints } from '../model/types.js';

export interface AgentFacts {
  readonly hostname: string;
  readonly attributes: readonly Attribute[];
}

export function satisfies(constraints: OfferConstraints | undefined, role: string, agent: AgentFacts): boolean {
  const groups = constraints?.[role];
  if (groups === undefined || groups.length === 0) return true;
  return groups.some((group) => group.every((c) => holds(c, agent)));
}

function holds(constraint: AttributeConstraint, agent: AgentFacts): boolean {
  const value = selectValue(constraint, agent);
  const p = constraint.predicate;
  switch (p.kind) {
    case 'exists':
      return value !== undefined;
    case 'not_exists':
      return value === undefined;
    case 'text_equals':
      return value === p.value;
    case 'text_not_equals':
      return value !== p.value;
    case 'text_matches':
      return value !== undefined && fullMatch(p.regex, value);
    case 'text_not_matches':
      return value === undefined || !fullMatch(p.regex, value);
  }
}

function selectValue(constraint: AttributeConstraint, agent: AgentFacts): string | undefined {
  const s = constraint.selector;
  if ('pseudo' in s) return s.pseudo === 'HOSTNAME' ? agent.hostname : undefined;
  const attr = agent.attributes.find((a) => a.name === s.attributeName);
  return attr === undefined ? undefined : attributeText(attr);
}

export function attributeText(attr: Attribute): string {
  switch (attr.type) {
    case 'TEXT':
      return attr.text ?? '';
    case 'SCALAR':
      return formatValue({ name: attr.name, type: 'SCALAR', milli: attr.milli ?? 0, role: '*' });
    case 'RANGES':
      return formatValue({ name: attr.name, type: 'RANGES', ranges: attr.ranges ?? [], role: '*' });
    case 'SET':
      return formatValue({ name: attr.name, type: 'SET', set: attr.set ?? [], role: '*' });
  }
}

/** Null when the regex compiles, else the reason. */
export function regexError(regex: string): string | null {
  try {
    new RegExp(`^(?:${regex})$`, 'u');
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

const compiled = new Map<string, RegExp>();

function fullMatch(regex: string, value: string): boolean {
  let re = compiled.get(regex);
  if (re === undefined) {
    re = new RegExp(`^(?:${regex})$`, 'u');
    compiled.set(regex, re);
  }
  return re.test(value);
}
