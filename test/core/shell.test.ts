/**
 * The small shell of nested containers: built-ins, pipes, `;`, `&&`,
 * `||`, `sh -c`, exit codes, standard input as it comes, and time.
 */
import { describe, expect, it } from 'vitest';
import { EventLoop } from '../../src/core/event-loop.js';
import { ShellProcess, type ShellWorld } from '../../src/core/shell.js';

function run(argv: readonly string[], input?: readonly string[]): { stdout: string; stderr: string; code: number | undefined; loop: EventLoop; process: ShellProcess } {
  const loop = new EventLoop();
  const world: ShellWorld = {
    loop,
    hostname: 'agent1',
    cwd: '/mnt/mesos/sandbox',
    env: { MESOS_SANDBOX: '/mnt/mesos/sandbox', HOME: '/' },
    files: new Map([
      ['stdout', 'out of the task\n'],
      ['stderr', ''],
    ]),
  };
  const out = { stdout: '', stderr: '', code: undefined as number | undefined, loop, process: undefined as unknown as ShellProcess };
  const process = new ShellProcess(world, { stdout: (d) => (out.stdout += d), stderr: (d) => (out.stderr += d), exit: (c) => (out.code = c) }, argv);
  out.process = process;
  loop.runDue();
  for (const chunk of input ?? []) {
    process.write(chunk);
    loop.runDue();
  }
  if (input !== undefined) process.close();
  loop.runDue();
  // The object the callbacks write to: later output shows in it.
  return out;
}

const sh = (script: string, input?: readonly string[]) => run(['sh', '-c', script], input);

describe('the small shell', () => {
  it('runs the built-ins', () => {
    expect(run(['echo', 'hello'])).toMatchObject({ stdout: 'hello\n', code: 0 });
    expect(sh('echo -n a b; echo c')).toMatchObject({ stdout: 'a bc\n', code: 0 });
    expect(sh('hostname; pwd; ls')).toMatchObject({ stdout: 'agent1\n/mnt/mesos/sandbox\nstderr\nstdout\n', code: 0 });
    expect(sh('env').stdout).toBe('MESOS_SANDBOX=/mnt/mesos/sandbox\nHOME=/\n');
    expect(sh('cat stdout')).toMatchObject({ stdout: 'out of the task\n', code: 0 });
    expect(sh('cat nothing')).toMatchObject({ stderr: 'cat: nothing: No such file or directory\n', code: 1 });
  });

  it('exits with the code of the script', () => {
    expect(sh('exit 3').code).toBe(3);
    expect(sh('false').code).toBe(1);
    expect(sh('false || echo rescued').stdout).toBe('rescued\n');
    expect(sh('false && echo never; echo after')).toMatchObject({ stdout: 'after\n', code: 0 });
    expect(sh('exit 4; echo never')).toMatchObject({ stdout: '', code: 4 });
    expect(sh("sh -c 'exit 5'; echo after")).toMatchObject({ stdout: 'after\n', code: 0 });
    expect(sh("sh -c 'exit 5'").code).toBe(5);
  });

  it('says an unknown command is not found, with code 127', () => {
    expect(run(['frobnicate', '--now'])).toMatchObject({ stderr: 'sh: 1: frobnicate: not found\n', code: 127 });
  });

  it('pipes one command into the next; a pipeline has its last command code', () => {
    expect(sh('echo piped | cat')).toMatchObject({ stdout: 'piped\n', code: 0 });
    expect(sh('echo x | false').code).toBe(1);
    expect(sh('false | echo y')).toMatchObject({ stdout: 'y\n', code: 0 });
  });

  it('cat copies its input as it comes, and ends at the end of input', () => {
    const r = run(['cat'], ['typed ', 'line\n']);
    expect(r).toMatchObject({ stdout: 'typed line\n', code: 0 });
    expect(sh('cat | cat', ['a', 'b'])).toMatchObject({ stdout: 'ab', code: 0 });
  });

  it('sleeps in cluster time', () => {
    const r = sh('sleep 2; echo woke');
    expect(r.code).toBeUndefined();
    r.loop.runUntil(1_999);
    expect(r.stdout).toBe('');
    r.loop.runUntil(2_000);
    expect(r.stdout).toBe('woke\n');
    expect(r.code).toBe(0);
  });

  it('kill stops it: no more output, no exit of its own', () => {
    const r = sh('sleep 5; echo never');
    r.process.kill();
    r.loop.runUntil(10_000);
    expect(r.stdout).toBe('');
    expect(r.code).toBeUndefined();
    expect(r.process.done).toBe(true);
  });
});
