/**
 * The hot trace entries written directly (src/core/trace-lines.ts) must be
 * byte for byte what Trace.append writes of the same data: the trace hash
 * of a run does not depend on which of the two wrote an entry. Strings of
 * any UTF-16 code units (quotes, backslashes, control characters, lone
 * surrogates) and a missing uuid.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { statusText, unknownAgentText, updateText } from '../../../src/core/kernel/trace-lines.js';
import { jsonString, Trace } from '../../../src/core/kernel/trace.js';

const anyText = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 12,
});
const uuid = fc.option(anyText, { nil: undefined });

describe('trace entries written directly', () => {
  it('write what JSON.stringify writes', () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
    console.log(`trace-lines property test: fast-check seed ${seed} (FC_SEED replays it)`);
    fc.assert(
      fc.property(
        anyText,
        anyText,
        anyText,
        anyText,
        anyText,
        uuid,
        (frameworkId, agentId, taskId, state, latest, id) => {
          expect(jsonString(taskId)).toBe(JSON.stringify(taskId));
          expect(statusText(frameworkId, agentId, taskId, state, latest, id)).toBe(
            JSON.stringify({ frameworkId, agentId, taskId, state, latest, uuid: id }),
          );
          expect(updateText(taskId, state, id)).toBe(JSON.stringify({ taskId, state, uuid: id }));
          expect(unknownAgentText(agentId, taskId, id)).toBe(JSON.stringify({ agentId, taskId, uuid: id }));
        },
      ),
      { seed, numRuns: 500 },
    );
  });

  it('appendJson folds the same line into the hash as append, and listeners get the data', () => {
    const clock = { now: () => 5 };
    const a = new Trace(clock);
    const b = new Trace(clock);
    const data = { taskId: 't"1\\', state: 'TASK_RUNNING', uuid: undefined };
    const heard: unknown[] = [];
    b.onEntry((_entry, d) => heard.push(d));
    a.append('status-update:retry', data);
    b.appendJson('status-update:retry', updateText(data.taskId, data.state, data.uuid), () => data);
    expect(b.hash()).toBe(a.hash());
    expect(b.entries()[0]!.line).toBe(a.entries()[0]!.line);
    expect(heard).toEqual([data]);
  });
});
