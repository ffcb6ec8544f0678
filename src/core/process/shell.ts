/**
 * The small shell that nested containers run (task exec sessions): a
 * script of pipelines, `;`, `&&` and `||`, interpreted in cluster time with
 * its standard input and output as streams of bytes. The built-in
 * commands:
 *
 *   echo [-n] WORDS   the words, then a newline (not with -n)
 *   cat [FILE...]     standard input to standard output as it comes; a file of the sandbox
 *   env               the environment, NAME=value a line
 *   hostname          the agent's host name
 *   pwd               the sandbox
 *   ls [DIR]          the sandbox's files
 *   sleep N           N seconds (fractions allowed)
 *   exit [N]          ends the script with code N
 *   true / false      0 / 1
 *   sh -c SCRIPT      the script, in a shell of its own
 *
 * Anything else exits 127 with `sh: 1: NAME: not found` on standard error,
 * as dash says it. Words split on blanks, with '…' and "…" quoting.
 *
 * Nothing here recurses as deep as its input is long: the parser is one
 * loop, a script goes on from command to command through the event loop,
 * and the calls from one command of a pipeline to the next go through a
 * relay that bounds their nesting. What bounds a script is what bounds any
 * program's arguments on Linux (`argvRefusal`).
 */
import type { Timers, TimerId } from '../kernel/event-loop.js';
import { byteLength } from './sandbox.js';

export interface ShellWorld {
  readonly loop: Timers;
  readonly hostname: string;
  /** The working directory, and the sandbox `ls` lists. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** The sandbox's files, by name. */
  readonly files: ReadonlyMap<string, string>;
}

export interface ShellOutput {
  stdout(data: string): void;
  stderr(data: string): void;
  /** The script ended with this exit code (0-255). */
  exit(code: number): void;
}

type Op = ';' | '&&' | '||' | '|';

interface Command {
  readonly words: readonly string[];
  /** How it joins the command before it. */
  readonly op: Op;
}

/** A command of a pipeline, running: what it reads, and how it ends. */
interface Running {
  input(data: string): void;
  endOfInput(): void;
  kill(): void;
}

const NOT_FOUND = 127;

/** Linux's MAX_ARG_STRLEN: the most bytes one argument of execve(2) may take, its closing NUL included. */
export const MAX_ARGUMENT_BYTES = 131_072;
/** Linux's usual ARG_MAX (a quarter of an 8 MiB stack): the most bytes all the arguments may take, with their NULs. */
export const MAX_ARGV_BYTES = 2_097_152;

/**
 * Why a command cannot start, as execve(2) would refuse it (E2BIG), or
 * undefined: an argument of MAX_ARGUMENT_BYTES or more (the NUL counted),
 * or arguments over MAX_ARGV_BYTES in all. A script is an argument of
 * `sh -c`, so this bounds the scripts the shell runs.
 */
export function argvRefusal(argv: readonly string[]): string | undefined {
  let total = 0;
  for (let i = 0; i < argv.length; i++) {
    const bytes = byteLength(argv[i]!) + 1;
    if (bytes > MAX_ARGUMENT_BYTES) {
      const most = MAX_ARGUMENT_BYTES - 1;
      return `Argument ${i} of the command is ${bytes - 1} bytes; one argument holds at most ${most} (Argument list too long)`;
    }
    total += bytes;
  }
  if (total <= MAX_ARGV_BYTES) return undefined;
  return `The command's ${argv.length} arguments take ${total} bytes with their NULs; at most ${MAX_ARGV_BYTES} (Argument list too long)`;
}

/**
 * How deep the calls from one command of a pipeline to the next (its
 * input, the end of its input, the script going on) nest as plain calls.
 * Past it a call waits until the one at this depth returns, then runs in
 * the order plain calls would have taken (depth first): a pipeline of any
 * length runs in a bounded stack, and a shorter one exactly as before.
 */
const MAX_NESTED_CALLS = 64;

/** The calls of one shell and its subshells (`sh -c`) from command to command; see MAX_NESTED_CALLS. */
class Relay {
  #depth = 0;
  /** The calls made at the deepest level, in order, while a call there runs. */
  #waiting: (() => void)[] = [];

  call(action: () => void): void {
    if (this.#depth >= MAX_NESTED_CALLS) {
      this.#waiting.push(action);
      return;
    }
    this.#depth++;
    try {
      action();
      if (this.#depth === MAX_NESTED_CALLS) this.#runWaiting();
    } finally {
      this.#depth--;
    }
  }

  /** Runs the calls made at the deepest level, each one's own calls before its next sibling's. */
  #runWaiting(): void {
    const stack: (() => void)[] = [];
    for (;;) {
      const made = this.#waiting;
      this.#waiting = [];
      for (let i = made.length - 1; i >= 0; i--) stack.push(made[i]!);
      const next = stack.pop();
      if (next === undefined) return;
      next();
    }
  }
}

/**
 * One shell process: started with its argv (`sh -c script`, or a command
 * with its arguments), fed standard input with `write` and `close`, ended
 * early with `kill`.
 */
export class ShellProcess {
  #stages: Running[] = [];
  #done = false;
  #inputClosed = false;

  /** `relay`: a subshell's is its parent's, since they share the stack. */
  constructor(
    private readonly world: ShellWorld,
    private readonly out: ShellOutput,
    argv: readonly string[],
    private readonly relay = new Relay(),
  ) {
    const script = argv[0] === 'sh' && argv[1] === '-c' ? parse(argv[2] ?? '') : [{ words: argv, op: ';' as Op }];
    this.#runFrom(script, 0, 0);
  }

  get done(): boolean {
    return this.#done;
  }

  /** Standard input for the first command of the running pipeline. */
  write(data: string): void {
    if (!this.#done && !this.#inputClosed) this.#stages[0]?.input(data);
  }

  /** End of standard input. */
  close(): void {
    if (this.#inputClosed) return;
    this.#inputClosed = true;
    if (!this.#done) this.#stages[0]?.endOfInput();
  }

  /** Ends it with signal `signal` (a wait status of the signal number). */
  kill(): void {
    if (this.#done) return;
    for (const stage of this.#stages) stage.kill();
    this.#done = true;
  }

  /** Runs the commands from `i` on, the last code being `code`. */
  #runFrom(script: readonly Command[], i: number, code: number): void {
    if (this.#done) return;
    let start = i;
    while (start < script.length) {
      const op = script[start]!.op;
      if ((op === '&&' && code !== 0) || (op === '||' && code === 0)) {
        start = endOfPipeline(script, start);
        continue;
      }
      break;
    }
    if (start >= script.length) return this.#end(code);
    const end = endOfPipeline(script, start);
    this.#runPipeline(
      script.slice(start, end),
      (last) => this.#runFrom(script, end, last),
      (exitCode) => this.#end(exitCode),
    );
  }

  /** A pipeline: each command's output is the next one's input; its code is the last one's. */
  #runPipeline(commands: readonly Command[], next: (code: number) => void, exitScript: (code: number) => void): void {
    let remaining = commands.length;
    let lastCode = 0;
    const stages: Running[] = [];
    const relay = this.relay;
    const finished = (index: number, code: number, exits: boolean) => {
      if (exits) return exitScript(code);
      if (index === commands.length - 1) lastCode = code;
      // A command that ends closes the input of the one after it.
      const after = stages[index + 1];
      if (after !== undefined) relay.call(() => after.endOfInput());
      if (--remaining === 0 && !this.#done) relay.call(() => next(lastCode));
    };
    for (let i = commands.length - 1; i >= 0; i--) {
      const write =
        i === commands.length - 1
          ? (d: string) => this.out.stdout(d)
          : (d: string) => relay.call(() => stages[i + 1]!.input(d));
      stages[i] = this.#start(commands[i]!.words, write, (code, exits) => finished(i, code, exits));
    }
    this.#stages = stages;
    if (this.#inputClosed) stages[0]?.endOfInput();
  }

  #end(code: number): void {
    if (this.#done) return;
    this.#done = true;
    this.out.exit(code & 0xff);
  }

  #start(
    words: readonly string[],
    write: (data: string) => void,
    finish: (code: number, exits: boolean) => void,
  ): Running {
    return builtin(this.world, words, { write, error: (d) => this.out.stderr(d), finish, relay: this.relay });
  }
}

interface Io {
  write(data: string): void;
  error(data: string): void;
  /** `exits`: the command was `exit`, which ends the whole script. */
  finish(code: number, exits: boolean): void;
  readonly relay: Relay;
}

const ignore = (): void => undefined;

/** A command that reads no input and ends with its timer (no object spread: a script may start tens of thousands). */
function timed(loop: Timers, timer: TimerId): Running {
  return { input: ignore, endOfInput: ignore, kill: () => loop.cancel(timer) };
}

/** Starts a built-in command; those that need no input finish at once (after the current step). */
function builtin(world: ShellWorld, words: readonly string[], io: Io): Running {
  const [name = '', ...args] = words;
  const once = (code: number, exits = false): Running => {
    // A timer that has run is cancelled harmlessly.
    return timed(
      world.loop,
      world.loop.schedule(0, 'shell:step', () => io.finish(code, exits)),
    );
  };
  switch (name) {
    case 'echo': {
      const noNewline = args[0] === '-n';
      io.write(`${(noNewline ? args.slice(1) : args).join(' ')}${noNewline ? '' : '\n'}`);
      return once(0);
    }
    case 'cat':
      return args.length === 0 ? cat(io) : catFiles(world, args, io, once);
    case 'env':
      io.write(
        Object.entries(world.env)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      );
      return once(0);
    case 'hostname':
      io.write(`${world.hostname}\n`);
      return once(0);
    case 'pwd':
      io.write(`${world.cwd}\n`);
      return once(0);
    case 'ls':
      io.write(
        [...world.files.keys()]
          .sort()
          .map((f) => `${f}\n`)
          .join(''),
      );
      return once(0);
    case 'true':
    case ':':
      return once(0);
    case 'false':
      return once(1);
    case 'exit':
      return once(args[0] === undefined ? 0 : Number.parseInt(args[0], 10) & 0xff, true);
    case 'sleep':
      return sleep(world, args[0], io);
    case 'sh':
      if (args[0] === '-c') return subshell(world, args.slice(1), io);
      io.error('sh: 0: interactive shells are not supported here\n');
      return once(2);
    default:
      io.error(`sh: 1: ${name}: not found\n`);
      return once(NOT_FOUND);
  }
}

function cat(io: Io): Running {
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

function catFiles(world: ShellWorld, files: readonly string[], io: Io, once: (code: number) => Running): Running {
  let code = 0;
  for (const file of files) {
    const text = world.files.get(file.replace(/^\.\//, ''));
    if (text === undefined) {
      io.error(`cat: ${file}: No such file or directory\n`);
      code = 1;
    } else io.write(text);
  }
  return once(code);
}

function sleep(world: ShellWorld, arg: string | undefined, io: Io): Running {
  const seconds = Number(arg);
  if (arg === undefined || !Number.isFinite(seconds) || seconds < 0) {
    io.error(`sleep: invalid time interval '${arg ?? ''}'\n`);
    return timed(
      world.loop,
      world.loop.schedule(0, 'shell:step', () => io.finish(1, false)),
    );
  }
  return timed(
    world.loop,
    world.loop.schedule(Math.round(seconds * 1000), 'shell:sleep', () => io.finish(0, false)),
  );
}

/** `sh -c SCRIPT`: a shell of its own, whose `exit` ends only itself. */
function subshell(world: ShellWorld, args: readonly string[], io: Io): Running {
  const out: ShellOutput = { stdout: io.write, stderr: io.error, exit: (code) => io.finish(code, false) };
  const child = new ShellProcess(world, out, ['sh', '-c', args[0] ?? ''], io.relay);
  return { input: (d) => child.write(d), endOfInput: () => child.close(), kill: () => child.kill() };
}

/** The index after the pipeline that starts at `start`. */
function endOfPipeline(script: readonly Command[], start: number): number {
  let end = start + 1;
  while (end < script.length && script[end]!.op === '|') end++;
  return end;
}

/** The characters that end a run of plain ones in a word. */
const SPECIAL = '"\';\n&| \t';

/** Splits a script into commands joined by `;`, newlines, `&&`, `||` and `|`; words with quotes. */
export function parse(script: string): Command[] {
  const commands: Command[] = [];
  let op: Op = ';';
  let words: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (next: Op) => {
    endWord();
    if (words.length > 0) commands.push({ words, op });
    words = [];
    op = next;
  };
  // Quoted parts and runs of plain characters join the word as one slice each.
  let i = 0;
  while (i < script.length) {
    const c = script[i]!;
    if (c === '"' || c === "'") {
      const close = script.indexOf(c, i + 1);
      const end = close < 0 ? script.length : close;
      word += script.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === ';' || c === '\n') endCommand(';');
    else if (c === '&' && script[i + 1] === '&') endCommand('&&'), i++;
    else if (c === '|' && script[i + 1] === '|') endCommand('||'), i++;
    else if (c === '|') endCommand('|');
    else if (c === ' ' || c === '\t') endWord();
    else {
      let end = i + 1;
      while (end < script.length && !SPECIAL.includes(script[end]!)) end++;
      word += script.slice(i, end);
      inWord = true;
      i = end;
      continue;
    }
    i++;
  }
  endCommand(';');
  return commands;
}
