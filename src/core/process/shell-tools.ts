/**
 * The small shell's file tools, with coreutils' and grep's messages and
 * exit codes: `ls`, `head`, `tail`, `wc` and `grep`, reading files of the
 * sandbox or their standard input.
 */
import { type Builtin, type Context, type Io, type Running, once, readingInput } from './shell-io.js';
import { dirname, resolve } from './shell-files.js';
import type { SandboxEntry } from './sandbox.js';
import {
  type Counts,
  MONTHS,
  count,
  grepPattern,
  head as firstLines,
  lines,
  tail as lastLines,
  utc,
} from './shell-text.js';

/** A file a tool was given, read; or standard input (`name` undefined); or why it cannot be read. */
type Input =
  | { readonly name: string | undefined; readonly text: string }
  | { readonly name: string; readonly text?: undefined; readonly reason: string };

/** Reads the files (or standard input when there are none), then finishes with what `done` answers. */
function withInputs(
  ctx: Context,
  files: readonly string[],
  io: Io,
  done: (inputs: readonly Input[]) => number,
): Running {
  if (files.length === 0) return readingInput(io, (text) => done([{ name: undefined, text }]));
  const inputs = files.map((name): Input => {
    const entry = ctx.files.stat(resolve(ctx.state.cwd, name));
    if (entry?.kind === 'file') return { name, text: entry.data };
    return { name, reason: entry === undefined ? 'No such file or directory' : 'Is a directory' };
  });
  return once(ctx, io, done(inputs));
}

/** Options as getopt takes them (`-la`, `-n 5`, `-n5`): the flags, their values, the operands, or the bad option. */
function options(
  args: readonly string[],
  flags: string,
  withValue: string,
): { set: Map<string, string>; operands: string[] } | { bad: string } {
  const set = new Map<string, string>();
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      operands.push(arg);
      continue;
    }
    if (/^-[0-9]+$/.test(arg) && withValue.includes('n')) {
      set.set('n', arg.slice(1));
      continue;
    }
    for (let j = 1; j < arg.length; j++) {
      const c = arg[j]!;
      if (withValue.includes(c)) {
        set.set(c, j + 1 < arg.length ? arg.slice(j + 1) : (args[++i] ?? ''));
        break;
      }
      if (!flags.includes(c)) return { bad: c };
      set.set(c, '');
    }
  }
  return { set, operands };
}

function badOption(ctx: Context, io: Io, tool: string, option: string, code: number, usage = ''): Running {
  io.error(`${tool}: invalid option -- '${option}'\n${usage}Try '${tool} --help' for more information.\n`);
  return once(ctx, io, code);
}

/** head and tail: `-n N` lines (10 unless said), of each file with a `==> name <==` header when there are several. */
function lineTool(tool: 'head' | 'tail'): Builtin {
  return (ctx, args, io) => {
    const parsed = options(args, '', 'n');
    if ('bad' in parsed) return badOption(ctx, io, tool, parsed.bad, 1);
    const value = parsed.set.get('n') ?? '10';
    const fromStart = tool === 'tail' && value.startsWith('+');
    if (!/^[+-]?[0-9]+$/.test(value)) {
      io.error(`${tool}: invalid number of lines: '${value}'\n`);
      return once(ctx, io, 1);
    }
    const n = Math.abs(Number(value));
    return withInputs(ctx, parsed.operands, io, (inputs) => {
      let code = 0;
      inputs.forEach((input, i) => {
        if (input.text === undefined) {
          const reason =
            input.reason === 'Is a directory'
              ? `error reading '${input.name}'`
              : `cannot open '${input.name}' for reading`;
          io.error(`${tool}: ${reason}: ${input.reason}\n`);
          code = 1;
          return;
        }
        if (inputs.length > 1) io.write(`${i > 0 ? '\n' : ''}==> ${input.name} <==\n`);
        io.write(tool === 'head' ? firstLines(input.text, n) : lastLines(input.text, n, fromStart));
      });
      return code;
    });
  };
}

export const head = lineTool('head');
export const tail = lineTool('tail');

/** wc: lines, words and bytes (or those the flags choose), a line per input and a total for several. */
export const wc: Builtin = (ctx, args, io) => {
  const parsed = options(args, 'lwcm', '');
  if ('bad' in parsed) return badOption(ctx, io, 'wc', parsed.bad, 1);
  const chosen = (['l', 'w', 'c'] as const).filter((f) => parsed.set.has(f) || (f === 'c' && parsed.set.has('m')));
  const which = chosen.length === 0 ? (['l', 'w', 'c'] as const) : chosen;
  const field = { l: 'lines', w: 'words', c: 'bytes' } as const;
  return withInputs(ctx, parsed.operands, io, (inputs) => {
    let code = 0;
    const rows: [Counts, string | undefined][] = [];
    const total = { lines: 0, words: 0, bytes: 0 };
    for (const input of inputs) {
      if (input.text === undefined) {
        io.error(`wc: ${input.name}: ${input.reason}\n`);
        code = 1;
        continue;
      }
      const c = count(input.text);
      rows.push([c, input.name]);
      for (const k of ['lines', 'words', 'bytes'] as const) total[k] += c[k];
    }
    if (rows.length > 1) rows.push([total, 'total']);
    // coreutils: no padding for one number of one input; else the width of the total bytes, 7 for standard input.
    const single = which.length === 1 && inputs.length === 1;
    const width = single ? 1 : inputs[0]?.name === undefined ? 7 : String(total.bytes).length;
    for (const [c, name] of rows) {
      const numbers = which.map((f) => String(c[field[f]]).padStart(width)).join(' ');
      io.write(`${numbers}${name === undefined ? '' : ` ${name}`}\n`);
    }
    return code;
  });
};

const GREP_USAGE = 'Usage: grep [OPTION]... PATTERNS [FILE]...\n';

/** grep: the lines that hold the pattern (-v: that do not); 0 when one is selected, 1 when none, 2 on an error. */
export const grep: Builtin = (ctx, args, io) => {
  const parsed = options(args, 'FEGvciqnHhs', 'e');
  if ('bad' in parsed) return badOption(ctx, io, 'grep', parsed.bad, 2, GREP_USAGE);
  const { set, operands } = parsed;
  const pattern = set.get('e') ?? operands.shift();
  if (pattern === undefined) {
    io.error(`${GREP_USAGE}Try 'grep --help' for more information.\n`);
    return once(ctx, io, 2);
  }
  const regexp = grepPattern(pattern, set.has('F'), set.has('E'), set.has('i'));
  if (regexp === undefined) {
    io.error('grep: Unmatched [, [^, [:, [., or [=\n');
    return once(ctx, io, 2);
  }
  const named = operands.length > 1 ? !set.has('h') : set.has('H');
  return withInputs(ctx, operands, io, (inputs) => {
    let selected = 0;
    let error = false;
    for (const input of inputs) {
      if (input.text === undefined) {
        if (!set.has('s')) io.error(`grep: ${input.name}: ${input.reason}\n`);
        error = true;
        continue;
      }
      const prefix = named ? `${input.name ?? '(standard input)'}:` : '';
      let found = 0;
      lines(input.text).forEach((line, i) => {
        const text = line.endsWith('\n') ? line.slice(0, -1) : line;
        if (regexp.test(text) === set.has('v')) return;
        found++;
        if (!set.has('c') && !set.has('q')) io.write(`${prefix}${set.has('n') ? `${i + 1}:` : ''}${text}\n`);
      });
      if (set.has('c') && !set.has('q')) io.write(`${prefix}${found}\n`);
      selected += found;
    }
    if (set.has('q') && selected > 0) return 0;
    return error ? 2 : selected > 0 ? 0 : 1;
  });
};

/** ls [-l] [-a] [-1] [FILE...]: names one a line (not a terminal), files first, then each directory. */
export const listing: Builtin = (ctx, args, io) => {
  const parsed = options(args, 'laA1', '');
  if ('bad' in parsed) return badOption(ctx, io, 'ls', parsed.bad, 2);
  const { set } = parsed;
  const operands = parsed.operands.length === 0 ? ['.'] : parsed.operands;
  let code = 0;
  const files: [string, SandboxEntry][] = [];
  const dirs: [string, string][] = [];
  for (const name of operands) {
    const abs = resolve(ctx.state.cwd, name);
    const entry = ctx.files.stat(abs);
    if (entry === undefined) {
      io.error(`ls: cannot access '${name}': No such file or directory\n`);
      code = 2;
    } else if (entry.kind === 'file') files.push([name, entry]);
    else dirs.push([name, abs]);
  }
  const blocks: string[] = [];
  if (files.length > 0)
    blocks.push(
      lsBlock(
        ctx,
        files.sort(([a], [b]) => (a < b ? -1 : 1)),
        set.has('l'),
        false,
      ),
    );
  for (const [name, abs] of dirs) {
    let entries = ctx.files.list(abs) ?? [];
    if (set.has('a')) entries = [['.', ctx.files.stat(abs)!], ['..', ctx.files.stat(resolve(abs, '..'))!], ...entries];
    else if (!set.has('A')) entries = entries.filter(([n]) => !n.startsWith('.'));
    const header = operands.length > 1 ? `${name}:\n` : '';
    blocks.push(header + lsBlock(ctx, entries, set.has('l'), true));
  }
  io.write(blocks.join('\n'));
  return once(ctx, io, code);
};

/** One block of ls's output; with `long` (-l) the modes, links, owner, size and time in aligned columns. */
function lsBlock(ctx: Context, entries: readonly [string, SandboxEntry][], long: boolean, total: boolean): string {
  if (!long) return entries.map(([name]) => `${name}\n`).join('');
  const user = ctx.world.user ?? 'root';
  const now = ctx.world.wallTimeMs();
  const offset = now - ctx.world.loop.now();
  const rows = entries.map(([name, e]) => [
    e.kind === 'file' ? '-rw-r--r--' : 'drwxr-xr-x',
    e.kind === 'file' ? '1' : '2',
    user,
    user,
    String(e.kind === 'file' ? e.size : 4096),
    lsTime(e.mtimeMs + offset, now),
    name,
  ]);
  const widths = [0, 1, 2, 3, 4].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  const blocks = entries.reduce((sum, [, e]) => sum + (e.kind === 'file' ? Math.ceil(e.size / 4096) * 4 : 4), 0);
  const lines = rows.map(
    ([mode, links, owner, group, size, time, name]) =>
      `${mode} ${links!.padStart(widths[1]!)} ${owner!.padEnd(widths[2]!)} ${group!.padEnd(widths[3]!)} ${size!.padStart(widths[4]!)} ${time} ${name}\n`,
  );
  return (total ? `total ${blocks}\n` : '') + lines.join('');
}

/** ls's time: `Nov 28 20:58` within six months, else `Nov 28  2025`. */
function lsTime(ms: number, now: number): string {
  const d = utc(ms);
  const day = `${MONTHS[d.month]} ${String(d.day).padStart(2)}`;
  const recent = ms <= now && now - ms < 183 * 86_400_000;
  const two = (n: number) => String(n).padStart(2, '0');
  return recent ? `${day} ${two(d.hours)}:${two(d.minutes)}` : `${day}  ${d.year}`;
}

/** mkdir [-p] DIR...: directories of the sandbox (-p: with their parents, and no complaint when one exists). */
export const mkdir: Builtin = (ctx, args, io) => {
  const parsed = options(args, 'p', '');
  if ('bad' in parsed) return badOption(ctx, io, 'mkdir', parsed.bad, 1);
  const parents = parsed.set.has('p');
  if (parsed.operands.length === 0) {
    io.error("mkdir: missing operand\nTry 'mkdir --help' for more information.\n");
    return once(ctx, io, 1);
  }
  let code = 0;
  for (const name of parsed.operands) {
    const abs = resolve(ctx.state.cwd, name);
    const why = makeDirectory(ctx, abs, parents);
    if (why !== undefined) {
      io.error(`mkdir: cannot create directory '${name}': ${why}\n`);
      code = 1;
    }
  }
  return once(ctx, io, code);
};

function makeDirectory(ctx: Context, abs: string, parents: boolean): string | undefined {
  const files = ctx.files;
  const entry = files.stat(abs);
  if (entry !== undefined) return parents && entry.kind === 'directory' ? undefined : 'File exists';
  const parent = files.stat(dirname(abs));
  if (!parents && parent === undefined) return 'No such file or directory';
  if (parent?.kind === 'file') return 'Not a directory';
  return files.mkdir(abs) ? undefined : 'Read-only file system';
}

/** touch FILE...: files of the sandbox, made when they are not there. */
export const touch: Builtin = (ctx, args, io) => {
  if (args.length === 0) {
    io.error("touch: missing file operand\nTry 'touch --help' for more information.\n");
    return once(ctx, io, 1);
  }
  let code = 0;
  for (const name of args) {
    const opened = ctx.files.open(resolve(ctx.state.cwd, name), true);
    if (typeof opened === 'string') {
      const why = opened === 'Directory nonexistent' ? 'No such file or directory' : opened;
      if (opened !== 'Is a directory') {
        io.error(`touch: cannot touch '${name}': ${why}\n`);
        code = 1;
      }
    }
  }
  return once(ctx, io, code);
};
