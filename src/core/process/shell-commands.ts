/**
 * The small shell's commands, with the messages and exit codes of dash's
 * built-ins (`sh: 1: cd: can't cd to x`) and of coreutils' programs
 * (`cat: x: No such file or directory`). A command reads its input as it
 * comes, writes its output and error through its `Io`, and finishes with
 * its code; one that needs no input finishes after the current step. The
 * list, for users, heads `shell.ts`.
 */
import {
  type Builtin,
  type Context,
  type Io,
  type Running,
  builtinError,
  ignore,
  NOT_FOUND,
  once,
} from './shell-io.js';
import { resolve } from './shell-files.js';
import { DATE_FORMAT, evaluateTest, formatDate, printf, backslashEscapes } from './shell-text.js';
import { grep, head, listing, mkdir, tail, touch, wc } from './shell-tools.js';

/** The program a word names: `/bin/cat` is `cat`; other paths name nothing here. */
export function programName(word: string): string {
  if (word[0] !== '/') return word;
  const m = /^\/(usr\/)?(local\/)?s?bin\/([^/]+)$/.exec(word);
  return m === null ? word : m[3]!;
}

/** Runs the command `words` names, or says it is not found (127) as dash does. */
export function runCommand(ctx: Context, words: readonly string[], io: Io): Running {
  const [written = '', ...args] = words;
  const command = COMMANDS.get(programName(written));
  if (command !== undefined) return command(ctx, args, io);
  io.error(`sh: ${ctx.state.line}: ${written}: not found\n`);
  return once(ctx, io, NOT_FOUND);
}

function cat(ctx: Context, args: readonly string[], io: Io): Running {
  if (args.length === 0 || (args.length === 1 && args[0] === '-')) {
    let ended = false;
    return {
      input: (data) => io.write(data),
      endOfInput: () => {
        if (ended) return;
        ended = true;
        io.finish(0, false);
      },
      kill: () => (ended = true),
    };
  }
  let code = 0;
  for (const file of args) {
    const entry = ctx.files.stat(resolve(ctx.state.cwd, file));
    if (entry?.kind === 'file') io.write(entry.data);
    else if (file !== '-') {
      io.error(`cat: ${file}: ${entry === undefined ? 'No such file or directory' : 'Is a directory'}\n`);
      code = 1;
    }
  }
  return once(ctx, io, code);
}

function echo(ctx: Context, args: readonly string[], io: Io): Running {
  let i = 0;
  let newline = true;
  let escapes = false;
  for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
    if (args[i]!.includes('n')) newline = false;
    if (args[i]!.includes('e')) escapes = true;
    if (args[i]!.includes('E')) escapes = false;
  }
  const text = args.slice(i).join(' ');
  const out = escapes ? backslashEscapes(text, false) : { text, stop: false };
  io.write(out.text + (newline && !out.stop ? '\n' : ''));
  return once(ctx, io, 0);
}

function printfCommand(ctx: Context, args: readonly string[], io: Io): Running {
  if (args.length === 0) {
    io.error(builtinError(ctx, 'printf', 'usage: printf format [arg ...]'));
    return once(ctx, io, 2);
  }
  const out = printf(args[0]!, args.slice(1));
  io.write(out.text);
  for (const e of out.errors) io.error(builtinError(ctx, 'printf', e));
  return once(ctx, io, out.errors.length > 0 ? 1 : 0);
}

function cd(ctx: Context, args: readonly string[], io: Io): Running {
  const target = args[0] ?? ctx.env.get('HOME');
  if (target === undefined) return once(ctx, io, 0);
  const abs = resolve(ctx.state.cwd, target);
  if (ctx.files.stat(abs)?.kind !== 'directory') {
    io.error(builtinError(ctx, 'cd', `can't cd to ${target}`));
    return once(ctx, io, 2);
  }
  ctx.state.vars.set('OLDPWD', ctx.state.cwd);
  ctx.state.vars.set('PWD', abs);
  ctx.state.cwd = abs;
  return once(ctx, io, 0);
}

function test(name: 'test' | '['): Builtin {
  return (ctx, args, io) => {
    let operands = args;
    if (name === '[') {
      if (args[args.length - 1] !== ']') {
        io.error(builtinError(ctx, '[', 'missing ]'));
        return once(ctx, io, 2);
      }
      operands = args.slice(0, -1);
    }
    const kind = (path: string) => ctx.files.stat(resolve(ctx.state.cwd, path))?.kind;
    const size = (path: string) => {
      const entry = ctx.files.stat(resolve(ctx.state.cwd, path));
      return entry?.kind === 'file' ? entry.size : 1;
    };
    const result = evaluateTest(operands, kind, size);
    if (typeof result === 'number') return once(ctx, io, result);
    io.error(builtinError(ctx, name, result.error));
    return once(ctx, io, 2);
  };
}

function exit(ctx: Context, args: readonly string[], io: Io): Running {
  const arg = args[0];
  if (arg === undefined) return once(ctx, io, ctx.state.lastCode, true);
  if (!/^[0-9]+$/.test(arg)) {
    io.error(builtinError(ctx, 'exit', `Illegal number: ${arg}`));
    return once(ctx, io, 2, true);
  }
  return once(ctx, io, Number(BigInt(arg) & 0xffn), true);
}

const SLEEP_UNITS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3_600, d: 86_400 };

function sleep(ctx: Context, args: readonly string[], io: Io): Running {
  const arg = args[0];
  const m = /^([0-9]*\.?[0-9]+)([smhd]?)$/.exec(arg ?? '');
  if (m === null) {
    const what = arg === undefined ? 'missing operand' : `invalid time interval '${arg}'`;
    io.error(`sleep: ${what}\nTry 'sleep --help' for more information.\n`);
    return once(ctx, io, 1);
  }
  const loop = ctx.world.loop;
  const ms = Math.round(Number(m[1]) * SLEEP_UNITS[m[2]!]! * 1000);
  const timer = loop.schedule(ms, 'shell:sleep', () => io.finish(0, false));
  return { input: ignore, endOfInput: ignore, kill: () => loop.cancel(timer) };
}

/** `sh -c SCRIPT` (or bash, dash, with any path); `sh FILE` runs a script of the sandbox. */
function shell(ctx: Context, args: readonly string[], io: Io): Running {
  if (args[0] === '-c') return ctx.subshell(['sh', ...args], io);
  if (args[0] === undefined || args[0] === '-s') return ctx.subshell(['sh', ...args], io);
  const script = ctx.files.read(resolve(ctx.state.cwd, args[0]));
  if (script === undefined) {
    io.error(`sh: 0: cannot open ${args[0]}: No such file\n`);
    return once(ctx, io, 2);
  }
  return ctx.subshell(['sh', '-c', script], io);
}

/** Known users' ids; any other user has 1000. */
const USERS: Readonly<Record<string, readonly [uid: number, group: string]>> = {
  root: [0, 'root'],
  daemon: [1, 'daemon'],
  bin: [2, 'bin'],
  sys: [3, 'sys'],
  nobody: [65_534, 'nogroup'],
};

function id(ctx: Context, args: readonly string[], io: Io): Running {
  const user = ctx.world.user ?? 'root';
  const [uid, group] = USERS[user] ?? [1000, user];
  const flags = args.join('').replace(/-/g, '');
  const names = flags.includes('n');
  if (flags.includes('u')) io.write(`${names ? user : uid}\n`);
  else if (flags.includes('g')) io.write(`${names ? group : uid}\n`);
  else io.write(`uid=${uid}(${user}) gid=${uid}(${group}) groups=${uid}(${group})\n`);
  return once(ctx, io, 0);
}

/** ps: the session's processes, as procps lists them. */
function ps(ctx: Context, _args: readonly string[], io: Io): Running {
  const loop = ctx.world.loop;
  // After the step, so that the commands started beside it in a pipeline are listed.
  const timer = loop.schedule(0, 'shell:step', () => {
    let out = '    PID TTY          TIME CMD\n';
    for (const [pid, name] of ctx.state.session.running)
      out += `${String(pid).padStart(7)} ?        00:00:00 ${name}\n`;
    io.write(out);
    io.finish(0, false);
  });
  return { input: ignore, endOfInput: ignore, kill: () => loop.cancel(timer) };
}

function date(ctx: Context, args: readonly string[], io: Io): Running {
  const operands = args.filter((a) => a !== '-u' && a !== '--utc');
  const format = operands[0];
  if (format !== undefined && !format.startsWith('+')) {
    io.error(`date: invalid date '${format}'\n`);
    return once(ctx, io, 1);
  }
  io.write(`${formatDate(ctx.world.wallTimeMs(), format === undefined ? DATE_FORMAT : format.slice(1))}\n`);
  return once(ctx, io, 0);
}

function env(ctx: Context, args: readonly string[], io: Io): Running {
  const vars = new Map(ctx.env);
  let i = 0;
  for (; i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!); i++) {
    const eq = args[i]!.indexOf('=');
    vars.set(args[i]!.slice(0, eq), args[i]!.slice(eq + 1));
  }
  if (i < args.length) return runCommand({ ...ctx, env: vars }, args.slice(i), io);
  io.write([...vars].map(([k, v]) => `${k}=${v}\n`).join(''));
  return once(ctx, io, 0);
}

function write(text: (ctx: Context) => string): Builtin {
  return (ctx, _args, io) => {
    io.write(text(ctx));
    return once(ctx, io, 0);
  };
}

const COMMANDS = new Map<string, Builtin>([
  ['cat', cat],
  ['echo', echo],
  ['printf', printfCommand],
  ['cd', cd],
  ['test', test('test')],
  ['[', test('[')],
  ['exit', exit],
  ['sleep', sleep],
  ['sh', shell],
  ['bash', shell],
  ['dash', shell],
  ['id', id],
  ['ps', ps],
  ['date', date],
  ['env', env],
  ['true', (ctx, _args, io) => once(ctx, io, 0)],
  [':', (ctx, _args, io) => once(ctx, io, 0)],
  ['false', (ctx, _args, io) => once(ctx, io, 1)],
  ['pwd', write((ctx) => `${ctx.state.cwd}\n`)],
  ['hostname', write((ctx) => `${ctx.world.hostname}\n`)],
  ['whoami', write((ctx) => `${ctx.world.user ?? 'root'}\n`)],
  ['ls', listing],
  ['head', head],
  ['tail', tail],
  ['wc', wc],
  ['grep', grep],
  ['mkdir', mkdir],
  ['touch', touch],
]);

/** The names of the commands, for the documentation's list and its test. */
export const COMMAND_NAMES: readonly string[] = [...COMMANDS.keys()];
