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
 */
import type { Timers, TimerId } from './event-loop.js';

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

/**
 * One shell process: started with its argv (`sh -c script`, or a command
 * with its arguments), fed standard input with `write` and `close`, ended
 * early with `kill`.
 */
export class ShellProcess {
  #stages: Running[] = [];
  #done = false;
  #inputClosed = false;

  constructor(
    private readonly world: ShellWorld,
    private readonly out: ShellOutput,
    argv: readonly string[],
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
    this.#runPipeline(script.slice(start, end), (last) => this.#runFrom(script, end, last), (exitCode) => this.#end(exitCode));
  }

  /** A pipeline: each command's output is the next one's input; its code is the last one's. */
  #runPipeline(commands: readonly Command[], next: (code: number) => void, exitScript: (code: number) => void): void {
    let remaining = commands.length;
    let lastCode = 0;
    const stages: Running[] = [];
    const finished = (index: number, code: number, exits: boolean) => {
      if (exits) return exitScript(code);
      if (index === commands.length - 1) lastCode = code;
      // A command that ends closes the input of the one after it.
      stages[index + 1]?.endOfInput();
      if (--remaining === 0 && !this.#done) next(lastCode);
    };
    for (let i = commands.length - 1; i >= 0; i--) {
      const write = i === commands.length - 1 ? (d: string) => this.out.stdout(d) : (d: string) => stages[i + 1]!.input(d);
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

  #start(words: readonly string[], write: (data: string) => void, finish: (code: number, exits: boolean) => void): Running {
    return builtin(this.world, words, { write, error: (d) => this.out.stderr(d), finish });
  }
}

interface Io {
  write(data: string): void;
  error(data: string): void;
  /** `exits`: the command was `exit`, which ends the whole script. */
  finish(code: number, exits: boolean): void;
}

const idle: Omit<Running, 'kill'> = { input: () => undefined, endOfInput: () => undefined };

/** Starts a built-in command; those that need no input finish at once (after the current step). */
function builtin(world: ShellWorld, words: readonly string[], io: Io): Running {
  const [name = '', ...args] = words;
  const once = (code: number, exits = false): Running => {
    let timer: TimerId | undefined = world.loop.schedule(0, 'shell:step', () => ((timer = undefined), io.finish(code, exits)));
    return { ...idle, kill: () => world.loop.cancel(timer) };
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
      io.write(Object.entries(world.env).map(([k, v]) => `${k}=${v}\n`).join(''));
      return once(0);
    case 'hostname':
      io.write(`${world.hostname}\n`);
      return once(0);
    case 'pwd':
      io.write(`${world.cwd}\n`);
      return once(0);
    case 'ls':
      io.write([...world.files.keys()].sort().map((f) => `${f}\n`).join(''));
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
    const timer = world.loop.schedule(0, 'shell:step', () => io.finish(1, false));
    return { ...idle, kill: () => world.loop.cancel(timer) };
  }
  const timer = world.loop.schedule(Math.round(seconds * 1000), 'shell:sleep', () => io.finish(0, false));
  return { ...idle, kill: () => world.loop.cancel(timer) };
}

/** `sh -c SCRIPT`: a shell of its own, whose `exit` ends only itself. */
function subshell(world: ShellWorld, args: readonly string[], io: Io): Running {
  const child = new ShellProcess(world, { stdout: io.write, stderr: io.error, exit: (code) => io.finish(code, false) }, ['sh', '-c', args[0] ?? '']);
  return { input: (d) => child.write(d), endOfInput: () => child.close(), kill: () => child.kill() };
}

/** The index after the pipeline that starts at `start`. */
function endOfPipeline(script: readonly Command[], start: number): number {
  let end = start + 1;
  while (end < script.length && script[end]!.op === '|') end++;
  return end;
}

/** Splits a script into commands joined by `;`, newlines, `&&`, `||` and `|`; words with quotes. */
export function parse(script: string): Command[] {
  const commands: Command[] = [];
  let op: Op = ';';
  let words: string[] = [];
  let word = '';
  let quote: string | undefined;
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
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === ';' || c === '\n') endCommand(';');
    else if (c === '&' && script[i + 1] === '&') endCommand('&&'), i++;
    else if (c === '|' && script[i + 1] === '|') endCommand('||'), i++;
    else if (c === '|') endCommand('|');
    else if (c === ' ' || c === '\t') endWord();
    else {
      word += c;
      inWord = true;
    }
  }
  endCommand(';');
  return commands;
}
