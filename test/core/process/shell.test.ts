/**
 * The small shell of nested containers: built-ins, pipes, `;`, `&&`,
 * `||`, `sh -c`, exit codes, standard input as it comes, and time.
 */
import { describe, expect, it } from 'vitest';
import { EventLoop, FINITE_TIMERS, type Timers } from '../../../src/core/kernel/event-loop.js';
import {
  argvRefusal,
  MAX_ARGUMENT_BYTES,
  MAX_ARGV_BYTES,
  ShellProcess,
  type ShellWorld,
} from '../../../src/core/process/shell.js';
import { Sandbox, SandboxBudget } from '../../../src/core/process/sandbox.js';

const SANDBOX = '/mnt/mesos/sandbox';
/** 2026-11-28T20:58:18Z, a Saturday. */
const EPOCH_MS = Date.UTC(2026, 10, 28, 20, 58, 18);

function sandboxWith(files: Readonly<Record<string, string>>, maxBytes = 1 << 20): Sandbox {
  const sandbox = new Sandbox(SANDBOX, new SandboxBudget(1 << 24), maxBytes, 0);
  for (const [path, data] of Object.entries(files)) sandbox.write(path, data, false, 0);
  return sandbox;
}

function run(
  argv: readonly string[],
  input?: readonly string[],
): { stdout: string; stderr: string; code: number | undefined; loop: EventLoop; process: ShellProcess } {
  const loop = new EventLoop();
  const world: ShellWorld = {
    loop,
    hostname: 'agent1',
    cwd: '/mnt/mesos/sandbox',
    env: { MESOS_SANDBOX: '/mnt/mesos/sandbox', HOME: '/' },
    sandbox: sandboxWith({ stdout: 'out of the task\n' }),
    wallTimeMs: () => EPOCH_MS + loop.now(),
  };
  const out = {
    stdout: '',
    stderr: '',
    code: undefined as number | undefined,
    loop,
    process: undefined as unknown as ShellProcess,
  };
  const process = new ShellProcess(
    world,
    { stdout: (d) => (out.stdout += d), stderr: (d) => (out.stderr += d), exit: (c) => (out.code = c) },
    argv,
  );
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

/** A word that `sh -c` reads back as `script`: single quotes, a quote inside as '"'"'. */
const quoted = (script: string) => `'${script.replaceAll("'", `'"'"'`)}'`;

describe('long scripts run in a bounded stack, or are refused as execve refuses them', () => {
  const n = 20_000;

  it('a pipeline of 20,000 commands (80 KB) runs: the data goes through every stage', () => {
    const script = `echo a${' | cat'.repeat(n)}`;
    expect(script.length).toBeGreaterThan(80_000);
    expect(sh(script)).toMatchObject({ stdout: 'a\n', stderr: '', code: 0 });
    // Input typed into the first of 20,000 cats, and its end, go through them all.
    expect(sh(`cat${' | cat'.repeat(n)}`, ['x', 'y'])).toMatchObject({ stdout: 'xy', code: 0 });
    // Each stage a shell of its own.
    expect(sh(`echo b${' | sh -c cat'.repeat(n)}`)).toMatchObject({ stdout: 'b\n', code: 0 });
  });

  it('chains of 20,000 with &&, || and ; run to their code', () => {
    expect(sh(`true${' && true'.repeat(n)}; echo end`)).toMatchObject({ stdout: 'end\n', code: 0 });
    expect(sh(`false${' && echo never'.repeat(n)}`)).toMatchObject({ stdout: '', code: 1 });
    expect(sh(`false${' || false'.repeat(n)} || echo rescued`)).toMatchObject({ stdout: 'rescued\n', code: 0 });
    // Each cat ends at once, its input being closed: the script goes on without a step between.
    expect(sh(`cat${'; cat'.repeat(n)}; exit 7`, [])).toMatchObject({ code: 7 });
  });

  it('nesting: sh -c as deep as an argument can hold it, and parentheses (plain words here)', () => {
    let script = 'echo deep';
    let depth = 0;
    while (quoted(`sh -c ${quoted(script)}`).length < MAX_ARGUMENT_BYTES) (script = `sh -c ${quoted(script)}`), depth++;
    expect(depth).toBeGreaterThan(8);
    expect(sh(script)).toMatchObject({ stdout: 'deep\n', code: 0 });
    expect(sh(`${'( '.repeat(n)}echo x${' )'.repeat(n)}`)).toMatchObject({
      stderr: 'sh: 1: (: not found\n',
      code: 127,
    });
  });

  it('a long quoted word is one argument', () => {
    const word = 'w '.repeat(60_000);
    expect(sh(`echo '${word}' "${word}"`).stdout).toBe(`${word} ${word}\n`);
  });

  it('past the relay depth, output keeps its order: stdout and stderr of a stage, then the next stage', () => {
    const r = sh(`cat stdout nothing stdout${' | cat'.repeat(200)}; echo after`);
    expect(r).toMatchObject({
      stdout: 'out of the task\nout of the task\nafter\n',
      stderr: 'cat: nothing: No such file or directory\n',
      code: 0,
    });
    const chunks = Array.from({ length: 50 }, (_, i) => `${i},`);
    expect(sh(`cat${' | cat'.repeat(500)}`, chunks).stdout).toBe(chunks.join(''));
  });

  it("schedules only timers the event loop's zero-delay guard leaves uncounted, its steps being finite", () => {
    const loop = new EventLoop();
    const labels = new Set<string>();
    const timers: Timers = {
      now: () => loop.now(),
      cancel: (t) => loop.cancel(t),
      schedule: (ms, label, action) => (labels.add(label), loop.schedule(ms, label, action)),
    };
    const world: ShellWorld = {
      loop: timers,
      hostname: 'h',
      cwd: '/',
      env: {},
      sandbox: new Sandbox('/', new SandboxBudget(1 << 20), 1 << 20, 0),
      wallTimeMs: () => loop.now(),
    };
    let code: number | undefined;
    const script =
      "echo a | cat; true && false || sleep 0; sleep x; sleep 1; sh -c 'exit 2'; cat stdout nothing; env | cat";
    new ShellProcess(world, { stdout: () => undefined, stderr: () => undefined, exit: (c) => (code = c) }, [
      'sh',
      '-c',
      script,
    ]);
    loop.runUntil(2_000);
    expect(code).toBe(0);
    expect([...labels].sort()).toEqual([...FINITE_TIMERS].sort());
  });

  it("refuses an argument of 128 KiB or more, and 2 MiB of arguments, as Linux's execve does (E2BIG)", () => {
    const most = 'x'.repeat(MAX_ARGUMENT_BYTES - 1);
    expect(argvRefusal(['sh', '-c', most])).toBeUndefined();
    expect(argvRefusal(['sh', '-c', `${most}x`])).toBe(
      'Argument 2 of the command is 131072 bytes; one argument holds at most 131071 (Argument list too long)',
    );
    // Bytes of UTF-8, not characters: é is two, a character outside the BMP four.
    expect(argvRefusal(['echo', 'é'.repeat(65_535)])).toBeUndefined();
    expect(argvRefusal(['echo', 'é'.repeat(65_536)])).toMatch(/131072 bytes/);
    expect(argvRefusal(['echo', '😀'.repeat(32_768)])).toMatch(/131072 bytes/);
    const many = Array.from({ length: 17 }, () => 'y'.repeat(MAX_ARGUMENT_BYTES - 1));
    expect(argvRefusal(many)).toBe(
      `The command's 17 arguments take ${17 * MAX_ARGUMENT_BYTES} bytes with their NULs; at most ${MAX_ARGV_BYTES} (Argument list too long)`,
    );
    expect(argvRefusal(many.slice(1))).toBeUndefined();
  });
});
