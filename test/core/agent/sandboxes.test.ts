import { describe, expect, it } from 'vitest';
import { newSandbox, sandboxPath, sandboxSettings } from '../../../src/core/agent/sandboxes.js';

describe("an executor's sandbox", () => {
  const owner = { agentId: 'a1', frameworkId: 'f1', executorId: 'e1', containerId: 'c1' };

  it('is at its path under the work directory, made from its owner', () => {
    const box = newSandbox(sandboxSettings({ workDir: '/w/' }), owner, 5);
    expect(box.path).toBe('/w/slaves/a1/frameworks/f1/executors/e1/runs/c1');
    expect(box.path).toBe(sandboxPath('/w/', owner));
  });

  it('starts with empty stdout and stderr of the time it was made, whenever they are first read', () => {
    const box = newSandbox(sandboxSettings({ sandboxBytes: 10 }), owner, 5);
    expect(box.stat('stderr')).toEqual({ kind: 'file', data: '', size: 0, mtimeMs: 5 });
    expect(box.write('stdout', 'hello world', false, 9)).toEqual({ written: 10, full: true });
    expect(box.list('')!.map(([name, e]) => [name, e.mtimeMs])).toEqual([
      ['stderr', 5],
      ['stdout', 9],
    ]);
  });
});
