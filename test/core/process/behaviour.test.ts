import { describe, expect, it } from 'vitest';
import { planFor } from '../../../src/core/process/behaviour.js';
import type { CommandSpec } from '../../../src/core/model/types.js';

const out = (data: string) => ({ path: 'stdout', data, append: true });
const shell = (value: string): CommandSpec => ({ shell: true, value, arguments: [] });

describe('task behaviour from its command', () => {
  it.each([
    ['sleep 1', { kind: 'exits', runMs: 1000, exitCode: 0, writes: [] }],
    ['sleep 0.5 && exit 3', { kind: 'exits', runMs: 500, exitCode: 3, writes: [] }],
    ['false || echo x', { kind: 'exits', runMs: 0, exitCode: 0, writes: [out('x\n')] }],
    ['exit 0', { kind: 'exits', runMs: 0, exitCode: 0, writes: [] }],
    ['exit 2', { kind: 'exits', runMs: 0, exitCode: 2, writes: [] }],
    ['true', { kind: 'exits', runMs: 0, exitCode: 0, writes: [] }],
    ['false', { kind: 'exits', runMs: 0, exitCode: 1, writes: [] }],
    ['echo hi', { kind: 'exits', runMs: 0, exitCode: 0, writes: [out('hi\n')] }],
    ['echo "a  b"; echo c', { kind: 'exits', runMs: 0, exitCode: 0, writes: [out('a  b\n'), out('c\n')] }],
    ['sleep 2; false', { kind: 'exits', runMs: 2000, exitCode: 1, writes: [] }],
    ['false && sleep 5', { kind: 'exits', runMs: 0, exitCode: 1, writes: [] }],
    ['true || exit 4', { kind: 'exits', runMs: 0, exitCode: 0, writes: [] }],
    ['sleep 1\nsleep 2\nexit 7', { kind: 'exits', runMs: 3000, exitCode: 7, writes: [] }],
    ['false; exit', { kind: 'exits', runMs: 0, exitCode: 1, writes: [] }],
    ['exit 256', { kind: 'exits', runMs: 0, exitCode: 0, writes: [] }],
    ['exit nope', { kind: 'exits', runMs: 0, exitCode: 2, writes: [] }],
    ['sleep abc', { kind: 'exits', runMs: 0, exitCode: 1, writes: [] }],
  ] as const)('%j', (command, plan) => {
    expect(planFor(shell(command))).toEqual(plan);
  });

  it.each([
    './my-server --port 80',
    'python -m http.server',
    'sleep 1 && ./serve',
    'nginx -g "daemon off;"',
  ])('an unknown command runs until killed: %j', (command) => {
    expect(planFor(shell(command)).kind).toBe('forever');
  });

  it('keeps the time spent before an unknown command', () => {
    expect(planFor(shell('sleep 2; ./serve'))).toEqual({ kind: 'forever', runMs: 2000, writes: [] });
  });

  it('a task without a command runs until killed', () => {
    expect(planFor(undefined)).toEqual({ kind: 'forever', runMs: 0, writes: [] });
  });

  it('shell=false runs value with arguments as argv (argv[0] included)', () => {
    expect(planFor({ shell: false, value: '/bin/sleep', arguments: ['sleep', '2'] })).toEqual({
      kind: 'exits',
      runMs: 2000,
      exitCode: 0,
      writes: [],
    });
    expect(planFor({ shell: false, value: '/usr/bin/echo', arguments: ['echo', 'a', 'b'] })).toMatchObject({
      writes: [out('a b\n')],
    });
    expect(planFor({ shell: false, value: 'false', arguments: ['false'] })).toMatchObject({ exitCode: 1 });
    // No shell: operators are plain arguments, not sequencing.
    expect(planFor({ shell: false, value: 'true', arguments: ['true', '&&', 'exit', '3'] })).toMatchObject({
      exitCode: 0,
    });
    expect(planFor({ shell: false, arguments: ['sleep', '1'] })).toMatchObject({ kind: 'exits', runMs: 1000 });
    expect(planFor({ shell: false, value: '/opt/app/server', arguments: ['server'] }).kind).toBe('forever');
  });

  it("trap '' TERM: the task ignores SIGTERM, and the rest of the script runs as before", () => {
    const sh = (value: string) => planFor({ shell: true, value, arguments: [] });
    expect(sh("trap '' TERM; sleep 2")).toMatchObject({ kind: 'exits', runMs: 2000, exitCode: 0, ignoresTerm: true });
    expect(sh('trap "" SIGTERM; ./serve')).toMatchObject({ kind: 'forever', ignoresTerm: true });
    expect(sh("trap '' 15; sleep 1").ignoresTerm).toBe(true);
    expect(sh("trap 'echo bye' TERM; sleep 1").ignoresTerm).toBeUndefined();
    expect(sh("trap '' INT; sleep 1").ignoresTerm).toBeUndefined();
    expect(sh('sleep 1').ignoresTerm).toBeUndefined();
  });

  it('shares one plan among the tasks of one script, and a plan is the same however many scripts came between', () => {
    const first = planFor(shell('sleep 7; exit 3'));
    expect(planFor(shell('sleep 7; exit 3'))).toBe(first);
    // More scripts than the cache keeps: the plan is made again, equal to the first.
    for (let i = 0; i < 1_100; i++) planFor(shell(`sleep ${i}`));
    const again = planFor(shell('sleep 7; exit 3'));
    expect(again).toEqual({ kind: 'exits', runMs: 7000, exitCode: 3, writes: [] });
    expect(again).toEqual(first);
  });

  describe('what a task writes: its redirections, printf, and echo to stderr', () => {
    const err = (data: string) => ({ path: 'stderr', data, append: true });
    const file = (path: string, data: string, append = true) => ({ path, data, append });

    it.each([
      ["printf 'hello' > a.txt", [file('a.txt', '', false), file('a.txt', 'hello')], 0],
      [
        'echo a > a.txt; echo b >> a.txt',
        [file('a.txt', '', false), file('a.txt', 'a\n'), file('a.txt', '', true), file('a.txt', 'b\n')],
        0,
      ],
      ['echo to-stderr >&2; exit 3', [err('to-stderr\n')], 3],
      ['echo x 1>&2', [err('x\n')], 0],
      ['echo both 2>&1', [out('both\n')], 0],
      ['echo log 2>e.txt >&2', [file('e.txt', '', false), file('e.txt', 'log\n')], 0],
      ["printf '%s=%d\\n' a 1 b 2", [out('a=1\nb=2\n')], 0],
      ["printf '%d' x", [out('0'), err('sh: 1: printf: x: expected numeric value\n')], 1],
      ['echo gone > /dev/null', [], 0],
      ['echo quiet >&-', [], 0],
      [
        'echo $MESOS_SANDBOX/in.txt > $MESOS_SANDBOX/in.txt',
        [file('in.txt', '', false), file('in.txt', '$MESOS_SANDBOX/in.txt\n')],
        0,
      ],
      ["echo '>' plain", [out('> plain\n')], 0],
      ['echo a >', [err('sh: 1: Syntax error: end of file unexpected\n')], 2],
    ] as const)('%j', (command, writes, exitCode) => {
      expect(planFor(shell(command))).toEqual({ kind: 'exits', runMs: 0, exitCode, writes });
    });

    it('a long-running command opens its files as it starts', () => {
      expect(planFor(shell('sleep 1; ./server > server.log 2>&1'))).toEqual({
        kind: 'forever',
        runMs: 1000,
        writes: [file('server.log', '', false)],
      });
    });
  });
});
