/**
 * Property test of the small shell over generated text: words, quotes
 * (closed or not), pipes, `&&`, `||`, `;`, newlines, parentheses, braces,
 * redirections of every form, `$` variables, the commands of the shell,
 * `sh -c` nested through quoting, and very long chains of any of these. Every input either runs (to an exit code
 * in 0-255, or a sleep still under way) or is refused with a one-line
 * reason before it starts; nothing throws, the event loop's guard
 * included. A task's command of the same text is planned without throwing.
 *
 * fast-check prints the seed and the shrunk text on failure; pass them
 * back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planFor } from '../../../src/core/process/behaviour.js';
import { EventLoop } from '../../../src/core/kernel/event-loop.js';
import { argvRefusal, ShellProcess, type ShellWorld } from '../../../src/core/process/shell.js';
import { Sandbox, SandboxBudget } from '../../../src/core/process/sandbox.js';

const WORDS = [
  'echo',
  '-n',
  'cat',
  'env',
  'hostname',
  'pwd',
  'ls',
  'true',
  'false',
  ':',
  'exit',
  'sleep',
  'sh',
  '-c',
  'stdout',
  'nothing',
  'frobnicate',
  'bash',
  'printf',
  '%d',
  '%s\\n',
  'grep',
  '-v',
  'head',
  'tail',
  '-n',
  'wc',
  'test',
  '[',
  ']',
  '-f',
  'cd',
  '..',
  '/',
  'mkdir',
  '-p',
  'touch',
  'a/b',
  'ps',
  'date',
  'id',
  'whoami',
  '0',
  '1',
  '0.5',
  '3',
  '256',
  '-1',
  'x',
];
const OPERATORS = [
  '|',
  '||',
  '&&',
  ';',
  '\n',
  '&',
  '(',
  ')',
  '{',
  '}',
  '<',
  '>',
  '>>',
  '2>&1',
  '2>',
  '2>>',
  '>&2',
  '1>&2',
  '>&-',
  '<&',
  '>|',
  '<>',
  '<<',
  '$?',
  '$X',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, written as a user would
  '${HOME}',
  '$(',
  '`',
  '\\',
  '#',
  '\t',
  ' ',
  "'",
  '"',
];

const token: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 4, arbitrary: fc.constantFrom(...OPERATORS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => `'${s}'`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => `"${s}"`) },
);

const text: fc.Arbitrary<string> = fc
  .array(fc.tuple(token, fc.constantFrom(' ', '')), { maxLength: 20 })
  .map((parts) => parts.map(([t, gap]) => t + gap).join(''));

/** A word that `sh -c` reads back as `script`. */
const quoted = (script: string) => `'${script.replaceAll("'", `'"'"'`)}'`;

/** Text made long or deep: a unit repeated, wrapped in parentheses or braces, or nested in `sh -c` through quoting. */
const hostile: fc.Arbitrary<string> = fc.oneof(
  text,
  fc.record({ unit: text, times: fc.integer({ min: 2, max: 25_000 }) }).map(({ unit, times }) => unit.repeat(times)),
  fc
    .record({
      head: text,
      join: fc.constantFrom(' | cat', ' && true', ' || false', '; :', '\n:', ' | sh -c cat'),
      times: fc.integer({ min: 1_000, max: 25_000 }),
    })
    .map(({ head, join, times }) => head + join.repeat(times)),
  fc
    .record({ body: text, open: fc.constantFrom('( ', '(', '{ ', '$('), depth: fc.integer({ min: 1, max: 25_000 }) })
    .map(({ body, open, depth }) => open.repeat(depth) + body + (open === '{ ' ? ' }' : ')').repeat(depth)),
  // Each level about triples the quotes: 11 levels pass the most an argument holds.
  fc
    .record({ body: text, depth: fc.integer({ min: 1, max: 12 }) })
    .map(({ body, depth }) => {
      let script = body;
      for (let i = 0; i < depth; i++) script = `sh -c ${quoted(script)}`;
      return script;
    }),
  fc
    .record({ char: fc.constantFrom('x', 'é', ' ', "'"), length: fc.integer({ min: 100_000, max: 300_000 }) })
    .map(({ char, length }) => `echo '${char.repeat(length)}'`),
);

interface Ran {
  readonly refused?: string;
  readonly code?: number;
  readonly sleeping?: boolean;
}

function runText(argv: readonly string[], input: readonly string[]): Ran {
  const refused = argvRefusal(argv);
  if (refused !== undefined) return { refused };
  const loop = new EventLoop();
  const world: ShellWorld = {
    loop,
    hostname: 'agent1',
    cwd: '/sandbox',
    env: { HOME: '/' },
    sandbox: new Sandbox('/sandbox', new SandboxBudget(1 << 22), 1 << 20, 0),
    wallTimeMs: () => loop.now(),
  };
  world.sandbox.write('stdout', 'out\n', false, 0);
  let code: number | undefined;
  const process = new ShellProcess(
    world,
    { stdout: () => undefined, stderr: () => undefined, exit: (c) => (code = c) },
    argv,
  );
  for (const chunk of input) process.write(chunk);
  process.close();
  // With the guard of the event loop, which every run of the cluster has.
  loop.runUntil(Number.MAX_SAFE_INTEGER);
  return code === undefined ? { sleeping: loop.pending() > 0 } : { code };
}

function check(ran: Ran): void {
  if (ran.refused !== undefined) {
    expect(ran.refused).toMatch(/^[^\n]+\(Argument list too long\)$/);
  } else if (ran.code !== undefined) {
    expect(ran.code).toBeGreaterThanOrEqual(0);
    expect(ran.code).toBeLessThanOrEqual(255);
  } else {
    // Only a sleep longer than the event loop's time can still be waiting.
    expect(ran.sleeping).toBe(true);
  }
}

describe('the small shell, on any text', () => {
  it('runs or refuses short scripts and argv of random words; nothing throws', () => {
    fc.assert(
      fc.property(text, fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), (script, input) => {
        check(runText(['sh', '-c', script], input));
        check(runText(script.split(' '), input));
        expect(['exits', 'forever']).toContain(planFor({ shell: true, value: script, arguments: [] }).kind);
      }),
      { numRuns: 500 },
    );
  });

  it('runs or refuses long chains, deep nesting and long quoted words; nothing throws', () => {
    fc.assert(
      fc.property(hostile, (script) => {
        check(runText(['sh', '-c', script], ['in']));
        expect(['exits', 'forever']).toContain(planFor({ shell: true, value: script, arguments: [] }).kind);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
