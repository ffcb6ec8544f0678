/** A small valid scenario file, and the loader's error for a text, for the loader's tests. */
import { parseScenario, ScenarioError } from '../../src/scenario/load.js';

export const BASE = `name: t
duration: 1m
cluster:
  agents:
    - count: 2
frameworks:
  - name: web
    tasks: { keep_running: 1 }
expect:
  - invariants: true
`;

/** The ScenarioError's message for `text` as file `s.yaml`; anything else fails the test. */
export function error(text: string): string {
  try {
    parseScenario('s.yaml', text);
  } catch (e) {
    if (e instanceof ScenarioError) return e.message;
    throw e;
  }
  throw new Error('expected a ScenarioError');
}
