import { describe, expect, it } from 'vitest';
import { Sandbox, SandboxBudget, normalPath } from '../../../src/core/process/sandbox.js';

const sandbox = (max = 100, total = 1_000) => new Sandbox('/var/lib/mesos/x', new SandboxBudget(total), max, 0);

describe('a sandbox', () => {
  it('starts with empty stdout and stderr, and lists its entries by name', () => {
    const box = sandbox();
    box.write('logs/app.log', 'hi\n', false, 5);
    expect(box.list('')!.map(([name, e]) => [name, e.kind])).toEqual([
      ['logs', 'directory'],
      ['stderr', 'file'],
      ['stdout', 'file'],
    ]);
    expect(box.read('./logs//app.log')).toBe('hi\n');
    expect(box.stat('logs/app.log')).toEqual({ kind: 'file', data: 'hi\n', size: 3, mtimeMs: 5 });
  });

  it('replaces with > and appends with >>', () => {
    const box = sandbox();
    box.write('a.txt', 'one', false, 0);
    box.write('a.txt', 'two', true, 0);
    expect(box.read('a.txt')).toBe('onetwo');
    box.write('a.txt', 'three', false, 0);
    expect(box.read('a.txt')).toBe('three');
    expect(box.bytes).toBe(5);
  });

  it('keeps what fits its bound and says it is full, counting UTF-8 bytes', () => {
    const box = sandbox(5);
    expect(box.write('a', 'éééé', false, 0)).toEqual({ written: 4, full: true });
    expect(box.read('a')).toBe('éé');
    expect(box.write('b', 'xyz', false, 0)).toEqual({ written: 1, full: true });
  });

  it('shares the cluster budget and gives it back when released', () => {
    const budget = new SandboxBudget(6);
    const a = new Sandbox('/a', budget, 100, 0);
    const b = new Sandbox('/b', budget, 100, 0);
    a.write('f', 'abcd', false, 0);
    expect(b.write('f', 'abcd', false, 0)).toEqual({ written: 2, full: true });
    a.release();
    expect(budget.usedBytes).toBe(2);
    expect(a.read('f')).toBeUndefined();
    expect(b.write('g', 'abcd', false, 0)).toEqual({ written: 4, full: false });
  });

  it('names nothing outside itself', () => {
    const box = sandbox();
    for (const path of ['../x', '/etc/passwd', 'a/../../x']) {
      expect(normalPath(path)).toBeUndefined();
      expect(box.write(path, 'x', false, 0)).toBeUndefined();
      expect(box.read(path)).toBeUndefined();
    }
    expect(normalPath('a/../b')).toBe('b');
    expect(box.write('stdout/x', 'x', false, 0)).toBeUndefined();
    expect(box.write('', 'x', false, 0)).toBeUndefined();
  });

  it('makes its tree when first asked, as it was when the sandbox was made', () => {
    const box = new Sandbox('/w/runs/c', new SandboxBudget(100), 100, 7);
    expect(box.stat('stdout')).toEqual({ kind: 'file', data: '', size: 0, mtimeMs: 7 });
    expect(box.stat('')).toEqual({ kind: 'directory', mtimeMs: 7 });
    expect(box.list('')!.map(([name]) => name)).toEqual(['stderr', 'stdout']);
    expect(box.path).toBe('/w/runs/c');
  });

  it('holds nothing once released, even when never used before', () => {
    const box = sandbox();
    box.release();
    expect(box.read('stdout')).toBeUndefined();
    expect(box.list('')).toBeUndefined();
  });
});
