/**
 * A framework's and a role's totals in the master's books are the sum of
 * their books on each agent, the bags added one agent after another,
 * whatever was held and released: scalars, port ranges that coincide on
 * two agents (never on one), sets, allocation roles. fast-check prints the seed and the
 * shrunk steps on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ledger, type Books, type HoldingKind } from '../../../src/core/master/ledger.js';
import { add, allocate, parseResources, type Resources } from '../../../src/core/model/resources.js';
import { sumDisjoint } from '../helpers.js';

function bag(text: string, role: string): Resources {
  const parsed = parseResources(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return allocate(parsed, role);
}

const BAGS = [
  'cpus:0.5;mem:64',
  'cpus:1',
  'mem:32;disk:10',
  'ports:[31000-31001]',
  'ports:[31001-31003];cpus:0.1',
  'cpus(db):1;mem(db):8',
  'gpus:1;zones:{a,b}',
];

interface Step {
  readonly kind: HoldingKind;
  readonly framework: number;
  readonly agent: number;
  readonly bag: number;
  readonly role: string;
}

const step = fc.record({
  kind: fc.constantFrom<HoldingKind>('offered', 'used'),
  framework: fc.integer({ min: 0, max: 2 }),
  agent: fc.integer({ min: 0, max: 4 }),
  bag: fc.integer({ min: 0, max: BAGS.length - 1 }),
  role: fc.constantFrom('*', 'web', 'db'),
});

/** The sum as the books' first form computed it: one `add` per agent. */
function summed(perAgent: readonly Books[]): Books {
  let offered: Resources = [];
  let used: Resources = [];
  for (const books of perAgent) {
    offered = add(offered, books.offered);
    used = add(used, books.used);
  }
  return { offered, used };
}

describe('the books’ totals', () => {
  it('equal the sum of the per-agent books, added agent by agent', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(step, fc.boolean()), { maxLength: 60 }), (steps) => {
        const ledger = new Ledger();
        const held: (Step & { resources: Resources })[] = [];
        for (const [s, release] of steps) {
          if (release && held.length > 0) {
            const h = held.splice(s.bag % held.length, 1)[0]!;
            ledger.release(h.kind, { frameworkId: `f${h.framework}`, agentId: `a${h.agent}` }, h.resources);
            continue;
          }
          const resources = bag(BAGS[s.bag]!, s.role);
          // One agent holds a port or a set item once, whoever holds it: ranges coincide only across agents.
          const onAgent = held.filter((h) => h.agent === s.agent).map((h) => h.resources);
          if ('overlap' in sumDisjoint([...onAgent, resources])) continue;
          ledger.hold(s.kind, { frameworkId: `f${s.framework}`, agentId: `a${s.agent}` }, resources);
          held.push({ ...s, resources });
        }
        const agents = ledger.agentIds();
        for (const f of [0, 1, 2]) {
          const id = `f${f}`;
          expect(ledger.framework(id)).toEqual(summed(agents.map((a) => ledger.frameworkOn(id, a))));
        }
        for (const role of ['*', 'web', 'db'])
          expect(ledger.role(role)).toEqual(summed(agents.map((a) => ledger.roleOn(role, a))));
      }),
      { numRuns: 300 },
    );
  });
});
