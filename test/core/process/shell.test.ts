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
import { COMMAND_NAMES } from '../../../src/core/process/shell-commands.js';
import { readFileSync } from 'node:fs';

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

/** The files of the sandbox the cases below run in, and their environment. */
const CASE_FILES = { 'a.txt': 'hello\nworld\nHello again\n', 'd/b.txt': 'x\n', 'n.txt': 'no newline' };
const CASE_ENV = { HOME: SANDBOX, PATH: '/usr/bin:/bin', X: 'ex' };

/** A script run in a sandbox of CASE_FILES, with `in1\nin2\n` on its input. */
function runCase(script: string) {
  const loop = new EventLoop();
  const world: ShellWorld = {
    loop,
    hostname: 'agent1',
    cwd: SANDBOX,
    env: CASE_ENV,
    sandbox: sandboxWith(CASE_FILES),
    wallTimeMs: () => EPOCH_MS + loop.now(),
  };
  const out = { stdout: '', stderr: '', code: undefined as number | undefined };
  const process = new ShellProcess(
    world,
    { stdout: (d) => (out.stdout += d), stderr: (d) => (out.stderr += d), exit: (c) => (out.code = c) },
    ['sh', '-c', script],
  );
  process.write('in1\nin2\n');
  process.close();
  loop.runUntil(60_000);
  return { ...out, sandbox: world.sandbox };
}

describe('scripts give what dash (and coreutils, grep) give: stdout, stderr, exit code', () => {
  // Each row as dash 0.5 gave it, run in a directory of the same files with the same input.
  it.each([
    ['echo to-stderr >&2; exit 3', '', 'to-stderr\n', 3],
    ['echo hi > x/y; echo $?', '2\n', 'sh: 1: cannot create x/y: Directory nonexistent\n', 0],
    ['cat < nofile; echo $?', '2\n', 'sh: 1: cannot open nofile: No such file\n', 0],
    ['echo a >', '', 'sh: 1: Syntax error: end of file unexpected\n', 2],
    ['echo hi >&foo', '', 'sh: 1: Syntax error: Bad fd number\n', 2],
    ['echo hi >&5', '', 'sh: 1: 5: Bad file descriptor\n', 2],
    ['exit abc', '', 'sh: 1: exit: Illegal number: abc\n', 2],
    ['[ 1 -eq a ]', '', 'sh: 1: [: Illegal number: a\n', 2],
    ['test -q x', '', 'sh: 1: test: -q: unexpected operator\n', 2],
    ['[ x', '', 'sh: 1: [: missing ]\n', 2],
    ['printf "%d\\n" abc', '0\n', 'sh: 1: printf: abc: expected numeric value\n', 1],
    ['printf', '', 'sh: 1: printf: usage: printf format [arg ...]\n', 2],
    ['cd nodir', '', "sh: 1: cd: can't cd to nodir\n", 2],
    ['echo hi>o.txt; cat o.txt', 'hi\n', '', 0],
    ['echo 1 >o; echo 2 >>o; cat o', '1\n2\n', '', 0],
    ['echo err 2>e.txt >&2; cat e.txt', 'err\n', '', 0],
    ["echo '>' x", '> x\n', '', 0],
    ['echo a\\>b', 'a>b\n', '', 0],
    ['echo a2>x; cat x', 'a2\n', '', 0],
    ['echo 2>x a; cat x', 'a\n', '', 0],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, written as a user would
    ['echo "$X" \'$X\' ${X} $?', 'ex $X ex 0\n', '', 0],
    ['false; echo $?', '1\n', '', 0],
    ['cat a.txt | grep -F hello', 'hello\n', '', 0],
    ['grep hello a.txt; echo $?', 'hello\n0\n', '', 0],
    ['grep -i hello a.txt', 'hello\nHello again\n', '', 0],
    ['grep -v hello a.txt', 'world\nHello again\n', '', 0],
    ['grep -c l a.txt', '3\n', '', 0],
    ['grep nomatch a.txt; echo $?', '1\n', '', 0],
    ['grep x nofile; echo $?', '2\n', 'grep: nofile: No such file or directory\n', 0],
    ['grep hello a.txt d/b.txt', 'a.txt:hello\n', '', 0],
    ["grep '^H' a.txt", 'Hello again\n', '', 0],
    ['grep -n o a.txt', '1:hello\n2:world\n3:Hello again\n', '', 0],
    ['head -n 1 a.txt', 'hello\n', '', 0],
    ['head -1 a.txt', 'hello\n', '', 0],
    ['tail -n 1 a.txt', 'Hello again\n', '', 0],
    ['tail -n +2 a.txt', 'world\nHello again\n', '', 0],
    ['head a.txt d/b.txt', '==> a.txt <==\nhello\nworld\nHello again\n\n==> d/b.txt <==\nx\n', '', 0],
    ['head nofile; echo $?', '1\n', "head: cannot open 'nofile' for reading: No such file or directory\n", 0],
    ['tail -n 1 n.txt; echo', 'no newline\n', '', 0],
    ['wc -l a.txt', '3 a.txt\n', '', 0],
    ['wc a.txt', ' 3  4 24 a.txt\n', '', 0],
    ['wc -c < a.txt', '24\n', '', 0],
    ['wc -w a.txt d/b.txt', ' 4 a.txt\n 1 d/b.txt\n 5 total\n', '', 0],
    ['cat a.txt | wc -l', '3\n', '', 0],
    ['cat a.txt | wc', '      3       4      24\n', '', 0],
    ['wc nofile', '', 'wc: nofile: No such file or directory\n', 1],
    ['cd d; pwd; ls; cd ..; pwd', '/mnt/mesos/sandbox/d\nb.txt\n/mnt/mesos/sandbox\n', '', 0],
    ['cd d && cat b.txt', 'x\n', '', 0],
    ["printf '%s-%s\\n' a b c", 'a-b\nc-\n', '', 0],
    ["printf 'hello'; echo", 'hello\n', '', 0],
    ["printf '%5s|%-5s|%05d\\n' ab cd 42", '   ab|cd   |00042\n', '', 0],
    ["printf '%d%%\\n' 50", '50%\n', '', 0],
    ["printf 'a\\tb\\n'", 'a\tb\n', '', 0],
    ["printf '%x %o %c\\n' 255 8 hello", 'ff 10 h\n', '', 0],
    ["printf '%s\\n'", '\n', '', 0],
    ['echo -n hi; echo', 'hi\n', '', 0],
    ['test -f a.txt; echo $?', '0\n', '', 0],
    ['test -d d; echo $?', '0\n', '', 0],
    ['test -e nofile; echo $?', '1\n', '', 0],
    ['[ -z "" ]; echo $?', '0\n', '', 0],
    ['[ -n "" ]; echo $?', '1\n', '', 0],
    ['[ a = a ]; echo $?', '0\n', '', 0],
    ['[ a != a ]; echo $?', '1\n', '', 0],
    ['[ 1 -lt 2 ] && echo yes', 'yes\n', '', 0],
    ['[ ! -f a.txt ]; echo $?', '1\n', '', 0],
    ['[ 3 -ge 3 ]; echo $?', '0\n', '', 0],
    ['test; echo $?', '1\n', '', 0],
    ['test x; echo $?', '0\n', '', 0],
    ['true; echo $?', '0\n', '', 0],
    ['false || echo rescued', 'rescued\n', '', 0],
    ['frobnicate', '', 'sh: 1: frobnicate: not found\n', 127],
    ['/bin/echo hi', 'hi\n', '', 0],
    ["sh -c 'exit 5'; echo $?", '5\n', '', 0],
    ["sh -c 'echo in sub >&2' 2>&1", 'in sub\n', '', 0],
    ["bash -c 'exit 10'; echo $?", '10\n', '', 0],
    ['exit', '', '', 0],
    ['false; exit', '', '', 1],
    ['A=1; echo $A', '1\n', '', 0],
    ['echo hi >&-; echo $?', '1\n', 'sh: 1: echo: echo: I/O error\n', 0],
    ['cat a.txt > /dev/null; echo $?', '0\n', '', 0],
    ['echo x > d', '', 'sh: 1: cannot create d: Is a directory\n', 2],
    ['cat d', '', 'cat: d: Is a directory\n', 1],
    ['cat nofile a.txt', 'hello\nworld\nHello again\n', 'cat: nofile: No such file or directory\n', 1],
    ['echo one; echo two >&2', 'one\n', 'two\n', 0],
    ['echo $UNSET x', 'x\n', '', 0],
    ['echo "$UNSET" x', ' x\n', '', 0],
    ['echo a  b   c', 'a b c\n', '', 0],
    ['echo a | cat - ', 'a\n', '', 0],
    ['echo x # comment', 'x\n', '', 0],
    ["echo 'a", '', 'sh: 1: Syntax error: Unterminated quoted string\n', 2],
    ['echo >', '', 'sh: 1: Syntax error: end of file unexpected\n', 2],
    ['echo $$ >/dev/null', '', '', 0],
    ['printf \'%s\\n\' "$?"', '0\n', '', 0],
    ['cat <a.txt', 'hello\nworld\nHello again\n', '', 0],
    ['cat <a.txt | wc -l', '3\n', '', 0],
    ['2>&1 echo hi', 'hi\n', '', 0],
    ["echo 'a", '', 'sh: 1: Syntax error: Unterminated quoted string\n', 2],
    ['echo "unterminated', '', 'sh: 1: Syntax error: Unterminated quoted string\n', 2],
    ['echo x; echo "y', '', 'sh: 1: Syntax error: Unterminated quoted string\n', 2],
    ['echo hi | grep -q hi; echo $?', '0\n', '', 0],
    ["printf '%s %s\\n' a b c d", 'a b\nc d\n', '', 0],
    ["printf '%b\\n' 'a\\tb'", 'a\tb\n', '', 0],
    ["printf '\\101\\n'", 'A\n', '', 0],
    ["grep -E 'hel+o' a.txt", 'hello\n', '', 0],
    ["grep 'hel\\+o' a.txt", 'hello\n', '', 0],
    ["grep -F 'l.' a.txt; echo $?", '1\n', '', 0],
    ["grep 'wor.d' a.txt", 'world\n', '', 0],
    ["grep '[Hh]ello' a.txt", 'hello\nHello again\n', '', 0],
    ['grep -e world a.txt', 'world\n', '', 0],
    [
      'grep; echo $?',
      '2\n',
      "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
      0,
    ],
    ['head -n x a.txt; echo $?', '1\n', "head: invalid number of lines: 'x'\n", 0],
    ['tail -n 0 a.txt; echo $?', '0\n', '', 0],
    ['wc -l n.txt', '0 n.txt\n', '', 0],
    ['wc -c n.txt a.txt', '10 n.txt\n24 a.txt\n34 total\n', '', 0],
    ['cat d', '', 'cat: d: Is a directory\n', 1],
    ['[ ]; echo $?', '1\n', '', 0],
    ['[ -f ]; echo $?', '0\n', '', 0],
    ['[ = ]; echo $?', '0\n', '', 0],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, written as a user would
    ['echo ${X}y "${X}z" "a"$X', 'exy exz aex\n', '', 0],
    ['exit 256', '', '', 0],
    ['exit 3 4', '', '', 3],
    ['echo hi 1>&2 2>/dev/null', '', 'hi\n', 0],
    ['echo hi 2>/dev/null 1>&2', '', '', 0],
    ['tail -n 1 nofile', '', "tail: cannot open 'nofile' for reading: No such file or directory\n", 1],
    ['echo a | head -n 5', 'a\n', '', 0],
    ['echo hi > /nodir/x; echo $?', '2\n', 'sh: 1: cannot create /nodir/x: Directory nonexistent\n', 0],
    ['true > d; echo $?', '2\n', 'sh: 1: cannot create d: Is a directory\n', 0],
    ['echo x 3>three.txt >&3; cat three.txt', 'x\n', '', 0],
    ['echo "a\\"b" \'c\\d\' e\\ f', 'a"b c\\d e f\n', '', 0],
    ['printf \'%s\\n\' "a b" c', 'a b\nc\n', '', 0],
    ['mkdir -p a/b/c; cd a/b; pwd', '/mnt/mesos/sandbox/a/b\n', '', 0],
    ['mkdir q/r; echo $?', '1\n', "mkdir: cannot create directory 'q/r': No such file or directory\n", 0],
    ['mkdir a.txt/x; echo $?', '1\n', "mkdir: cannot create directory 'a.txt/x': Not a directory\n", 0],
    ['mkdir; echo $?', '1\n', "mkdir: missing operand\nTry 'mkdir --help' for more information.\n", 0],
    ['touch t; cat t; touch a.txt; cat a.txt', 'hello\nworld\nHello again\n', '', 0],
    ['touch nodir/x; echo $?', '1\n', "touch: cannot touch 'nodir/x': No such file or directory\n", 0],
    ['touch d; echo $?', '0\n', '', 0],
  ] as const)('%j', (script, stdout, stderr, code) => {
    expect(runCase(script)).toMatchObject({ stdout, stderr, code });
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

describe('the container the shell runs in', () => {
  it('ls lists the sandbox (its stdout and stderr too); -a adds . and ..; -l as coreutils writes it', () => {
    expect(runCase('ls')).toMatchObject({ stdout: 'a.txt\nd\nn.txt\nstderr\nstdout\n', code: 0 });
    expect(runCase('ls -a d')).toMatchObject({ stdout: '.\n..\nb.txt\n', code: 0 });
    expect(runCase('ls -l')).toMatchObject({
      stdout: [
        'total 12',
        '-rw-r--r-- 1 root root   24 Nov 28 20:58 a.txt',
        'drwxr-xr-x 2 root root 4096 Nov 28 20:58 d',
        '-rw-r--r-- 1 root root   10 Nov 28 20:58 n.txt',
        '-rw-r--r-- 1 root root    0 Nov 28 20:58 stderr',
        '-rw-r--r-- 1 root root    0 Nov 28 20:58 stdout',
        '',
      ].join('\n'),
      code: 0,
    });
    expect(runCase('ls d a.txt nothing')).toMatchObject({
      stdout: 'a.txt\n\nd:\nb.txt\n',
      stderr: "ls: cannot access 'nothing': No such file or directory\n",
      code: 2,
    });
  });

  it('cd moves the shell within the sandbox for the commands after it, and a subshell starts there', () => {
    expect(runCase('cd d; pwd; cat b.txt; sh -c pwd; cd ..; pwd')).toMatchObject({
      stdout: `${SANDBOX}/d\nx\n${SANDBOX}/d\n${SANDBOX}\n`,
      code: 0,
    });
    expect(runCase("sh -c 'cd d'; pwd").stdout).toBe(`${SANDBOX}\n`);
  });

  it('hostname, whoami and id say the container: root unless the launch names a user', () => {
    expect(runCase('hostname; whoami; id; id -u; id -un')).toMatchObject({
      stdout: 'agent1\nroot\nuid=0(root) gid=0(root) groups=0(root)\n0\nroot\n',
      code: 0,
    });
    const loop = new EventLoop();
    let stdout = '';
    const world: ShellWorld = {
      loop,
      hostname: 'h',
      cwd: SANDBOX,
      env: {},
      sandbox: sandboxWith({}),
      wallTimeMs: () => 0,
      user: 'nobody',
    };
    new ShellProcess(world, { stdout: (d) => (stdout += d), stderr: () => undefined, exit: () => undefined }, [
      'sh',
      '-c',
      'whoami; id',
    ]);
    loop.runDue();
    expect(stdout).toBe('nobody\nuid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n');
  });

  it('date is the cluster time, in UTC', () => {
    expect(runCase('date; date +%s; date -u +%Y-%m-%dT%H:%M:%S')).toMatchObject({
      stdout: `Sat Nov 28 20:58:18 UTC 2026\n${EPOCH_MS / 1000}\n2026-11-28T20:58:18\n`,
      code: 0,
    });
    expect(runCase('sleep 59; date +%T').stdout).toBe('20:59:17\n');
    expect(runCase('date tomorrow')).toMatchObject({ stderr: "date: invalid date 'tomorrow'\n", code: 1 });
  });

  it("ps lists the session's processes: its shells and the commands running", () => {
    expect(runCase('ps')).toMatchObject({
      stdout: '    PID TTY          TIME CMD\n      1 ?        00:00:00 sh\n      2 ?        00:00:00 ps\n',
      code: 0,
    });
    expect(runCase("sleep 1; sh -c 'ps | cat'").stdout).toBe(
      [
        '    PID TTY          TIME CMD',
        '      1 ?        00:00:00 sh',
        '      3 ?        00:00:00 sh',
        '      4 ?        00:00:00 cat',
        '      5 ?        00:00:00 ps',
        '',
      ].join('\n'),
    );
  });

  it('env shows the environment with the variables set before a command; unknown commands are not found', () => {
    expect(runCase('env')).toMatchObject({ stdout: `HOME=${SANDBOX}\nPATH=/usr/bin:/bin\nX=ex\n`, code: 0 });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, written as a user would
    expect(runCase('Y=1 env | grep Y; echo ${Y}-')).toMatchObject({ stdout: 'Y=1\n-\n', code: 0 });
    expect(runCase('env Z=2 printenv')).toMatchObject({ stderr: 'sh: 1: printenv: not found\n', code: 127 });
  });

  it('what a script writes stays in the sandbox, with the cluster time as its mtime', () => {
    const r = runCase("sleep 2; printf 'hello' > a.txt; echo more >> a.txt; echo e 2> logs.txt >&2");
    expect(r).toMatchObject({ stdout: '', stderr: '', code: 0 });
    expect(r.sandbox.stat('a.txt')).toEqual({ kind: 'file', data: 'hellomore\n', size: 10, mtimeMs: 2_000 });
    expect(r.sandbox.read('logs.txt')).toBe('e\n');
  });

  it('a write past the sandbox bound fails as a full disk does: what fits is kept', () => {
    const loop = new EventLoop();
    const out = { stdout: '', stderr: '', code: -1 };
    const world: ShellWorld = {
      loop,
      hostname: 'h',
      cwd: SANDBOX,
      env: {},
      sandbox: sandboxWith({}, 8),
      wallTimeMs: () => 0,
    };
    new ShellProcess(
      world,
      { stdout: (d) => (out.stdout += d), stderr: (d) => (out.stderr += d), exit: (c) => (out.code = c) },
      ['sh', '-c', 'echo 0123456789 > big; echo $?; cat big > copy; echo $?'],
    );
    loop.runDue();
    expect(out).toEqual({
      stdout: '1\n1\n',
      stderr: 'sh: 1: echo: echo: I/O error\ncat: write error: No space left on device\n',
      code: 0,
    });
    expect(world.sandbox.read('big')).toBe('01234567');
  });

  it('sh, bash and dash with -c, at any path, nested; sh reads a script from its input or a file', () => {
    expect(run(['/bin/bash', '-c', 'echo $0 >&2; exit 10'])).toMatchObject({ code: 10 });
    expect(run(['dash', '-c', 'sh -c \'bash -c "exit 4"\'']).code).toBe(4);
    expect(run(['sh'], ['echo from input; ', 'exit 6\n'])).toMatchObject({ stdout: 'from input\n', code: 6 });
    expect(runCase("echo 'echo in a file; exit 7' > s.sh; sh s.sh")).toMatchObject({ stdout: 'in a file\n', code: 7 });
    expect(runCase('sh nothing.sh')).toMatchObject({
      stderr: 'sh: 0: cannot open nothing.sh: No such file\n',
      code: 2,
    });
  });

  it('sh with no script runs its input line by line as it comes, keeping its directory and variables', () => {
    const r = run(
      ['bash'],
      ['echo one\n', 'mkd', 'ir d\n', 'cd d; V=x\n', 'echo "$V \'a\n', 'b\'"; pwd\n', 'nope\n', 'false\n'],
    );
    expect(r).toMatchObject({
      stdout: `one\nx 'a\nb'\n${SANDBOX}/d\n`,
      stderr: 'sh: 6: nope: not found\n',
      code: 1,
    });
    // Each line runs as soon as it is whole.
    const s = run(['sh', '-s'], ['echo typed\n', 'echo no newline yet']);
    expect(s).toMatchObject({ stdout: 'typed\nno newline yet\n', code: 0 });
  });

  it('says the line of a command that is not found, as dash does', () => {
    expect(runCase('true\n\nnope')).toMatchObject({ stderr: 'sh: 3: nope: not found\n', code: 127 });
    expect(runCase('echo ok\necho >')).toMatchObject({
      stdout: 'ok\n',
      stderr: 'sh: 2: Syntax error: end of file unexpected\n',
      code: 2,
    });
  });
});

describe('the list of commands', () => {
  it('docs/agent-api.md and the header of shell.ts name every command', () => {
    const page = readFileSync(new URL('../../../docs/agent-api.md', import.meta.url), 'utf8');
    const section = page.slice(
      page.indexOf('## The shell in a simulated container'),
      page.indexOf('## Containers and cgroups'),
    );
    const header = readFileSync(new URL('../../../src/core/process/shell.ts', import.meta.url), 'utf8').split('*/')[0]!;
    for (const name of COMMAND_NAMES) {
      expect(section, name).toMatch(new RegExp(`\`${name.replace('[', '\\[')}[ \`]`));
      expect(header, name).toMatch(new RegExp(`(^|[ /])${name.replace('[', '\\[')}( |$)`, 'm'));
    }
  });
});
