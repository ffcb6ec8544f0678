/**
 * The small shell that nested containers run (task exec sessions), as
 * dash (`/bin/sh`) behaves: a script of pipelines, `;`, `&&` and `||`,
 * with redirections into the container's sandbox, interpreted in cluster
 * time with its standard input and output as streams of bytes. `sh -c`,
 * `bash -c` and `dash -c` (also as `/bin/sh`, `/bin/bash`) all run it;
 * bash is this shell too, with dash's rules and messages.
 *
 * Its commands (built in; `/bin/NAME` and `/usr/bin/NAME` name them too):
 *
 *   cat [FILE...]          files, or standard input as it comes
 *   ls [-l] [-a] [FILE...] a directory's entries, one a line
 *   echo [-n] [-e] WORDS   the words, then a newline (not with -n); -e reads backslash escapes
 *   printf FORMAT [ARG...] %s %d %i %u %x %o %c %b %f %%, widths, \n \t \\ \NNN escapes
 *   env [NAME=V...] [CMD]  the environment, NAME=value a line; or CMD with those added
 *   pwd / cd [DIR]         the working directory (the sandbox at the start) / change it
 *   hostname               the agent's host name
 *   id [-u|-g] [-n]        the container's user: root (uid 0) unless the launch names one
 *   whoami                 the user's name
 *   sleep N[s|m|h|d]       N seconds (fractions allowed), in cluster time
 *   test EXPR / [ EXPR ]   -f -d -e -s -z -n, = !=, -eq -ne -lt -gt -le -ge, !
 *   true / false / :       0 / 1 / 0
 *   head / tail [-n N]     the first / last N lines (10); tail -n +N from line N
 *   wc [-l] [-w] [-c]      lines, words and bytes
 *   grep [-FEvcinqhHs] [-e] PATTERN [FILE...]
 *                          the lines that match; 1 when none, 2 on an error
 *   mkdir [-p] DIR...      directories of the sandbox
 *   touch FILE...          files of the sandbox, made empty when they are not there
 *   ps                     the session's processes: its shells and the commands they run
 *   date [-u] [+FORMAT]    the cluster's time, in UTC (`date +%s` the seconds)
 *   exit [N]               ends the script with N (the last code when none)
 *   sh / bash / dash       -c SCRIPT; a FILE of the sandbox; with neither (or -s), the
 *                          script its input holds, each line as it comes
 *
 * Redirections `>`, `>>`, `<`, `2>`, `2>>`, `>&2`, `1>&2`, `2>&1`, `>&-`
 * write to files of the sandbox (`/dev/null` too) or read them; a file
 * that cannot be created or opened stops its command with code 2 and
 * dash's message (`sh: 1: cannot create x/y: Directory nonexistent`), and
 * a write past the sandbox's bound fails with `write error: No space left
 * on device`. Words expand `$NAME`, `${NAME}` and `$?`; `NAME=value`
 * before a command (or alone) sets a variable. Anything else exits 127
 * with `sh: 1: NAME: not found`, as dash says it; parentheses, braces,
 * `$(…)`, backquotes, `&` and here-documents are not supported.
 *
 * Nothing here recurses as deep as its input is long: the parser is one
 * loop, a script goes on from command to command through the event loop,
 * and the calls from one command of a pipeline to the next go through a
 * relay that bounds their nesting. What bounds a script is what bounds any
 * program's arguments on Linux (`argvRefusal`).
 */
import { byteLength } from './sandbox.js';
import { type Command, type Script, type Word, parse } from './shell-parse.js';
import { ShellFiles } from './shell-files.js';
import {
  type Context,
  type Io,
  type Running,
  type ShellState,
  type ShellWorld,
  Session,
  ignore,
  once,
} from './shell-io.js';
import { programName, runCommand } from './shell-commands.js';
import { redirect } from './shell-redirect.js';
import { Relay } from './shell-relay.js';

export type { ShellWorld } from './shell-io.js';

export interface ShellOutput {
  stdout(data: string): void;
  stderr(data: string): void;
  /** The script ended with this exit code (0-255). */
  exit(code: number): void;
}

/** What a subshell takes from the shell that runs it. */
interface Inherited {
  readonly files: ShellFiles;
  readonly cwd: string;
  readonly vars: ReadonlyMap<string, string>;
  readonly session: Session;
}

const SHELLS = new Set(['sh', 'bash', 'dash']);
/** Commands that are dash's built-ins: their messages start `sh: LINE:`. */
const DASH_BUILTINS = new Set(['echo', 'printf', 'pwd', 'cd', 'test', '[', 'true', 'false', ':', 'exit']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

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
 * One shell process: started with its argv (`sh -c script`, or a command
 * with its arguments), fed standard input with `write` and `close`, ended
 * early with `kill`.
 */
export class ShellProcess {
  #stages: Running[] = [];
  #done = false;
  #inputClosed = false;
  readonly #files: ShellFiles;
  readonly #state: ShellState;
  /** What its commands are given, while no assignment adds to their environment. */
  readonly #ctx: Context;
  readonly #error = (data: string): void => this.out.stderr(data);
  /** Its pid in the session when it is a shell (`ps`). */
  readonly #pid: number | undefined;
  /** A shell that reads its script from its input (`sh`, `sh -s`): what it has read and not run, and whether it waits for more. */
  readonly #reading: { buffer: string; idle: boolean } | undefined;
  /** Lines of the script run before the present piece (a script read from the input comes in pieces). */
  #lineOffset = 0;
  /** The lines of the input run so far. */
  #linesRead = 0;

  /** `relay`: a subshell's is its parent's, since they share the stack; `inherited`: what it takes from its parent. */
  constructor(
    private readonly world: ShellWorld,
    private readonly out: ShellOutput,
    argv: readonly string[],
    private readonly relay = new Relay(),
    inherited?: Inherited,
  ) {
    const name = programName(argv[0] ?? '');
    const isShell = SHELLS.has(name) && argv[1] === '-c';
    const reads = SHELLS.has(name) && (argv.length === 1 || (argv.length === 2 && argv[1] === '-s'));
    this.#files = inherited?.files ?? new ShellFiles(world.sandbox, () => world.loop.now());
    const session = inherited?.session ?? new Session();
    this.#state = {
      cwd: inherited?.cwd ?? world.cwd,
      vars: new Map(inherited?.vars ?? Object.entries(world.env)),
      lastCode: 0,
      line: 1,
      session,
    };
    this.#pid = isShell || reads ? session.start(name) : undefined;
    const state = this.#state;
    this.#ctx = {
      world,
      files: this.#files,
      state,
      env: state.vars,
      subshell: (a, io) => this.#subshell(a, io, state.vars),
    };
    if (reads) {
      this.#reading = { buffer: '', idle: true };
      return;
    }
    const script: Script = isShell
      ? parse(argv[2] ?? '')
      : { commands: [{ words: argv, redirects: [], op: ';', line: 1 }] };
    this.#runFrom(script, 0, 0);
  }

  get done(): boolean {
    return this.#done;
  }

  /** Standard input for the first command of the running pipeline. */
  write(data: string): void {
    if (this.#done || this.#inputClosed) return;
    if (this.#reading === undefined) return this.#stages[0]?.input(data);
    this.#reading.buffer += data;
    this.#readScript();
  }

  /** End of standard input. */
  close(): void {
    if (this.#inputClosed) return;
    this.#inputClosed = true;
    if (this.#reading !== undefined) this.#readScript();
    else if (!this.#done) this.#stages[0]?.endOfInput();
  }

  /** Ends it with signal `signal` (a wait status of the signal number). */
  kill(): void {
    if (this.#done) return;
    for (const stage of this.#stages) stage.kill();
    this.#done = true;
    if (this.#pid !== undefined) this.#state.session.end(this.#pid);
  }

  /** Runs the commands from `i` on, the last code being `code`; a syntax error ends the script (2). */
  #runFrom(script: Script, i: number, code: number): void {
    if (this.#done) return;
    const commands = script.commands;
    let start = i;
    while (start < commands.length) {
      const op = commands[start]!.op;
      if ((op === '&&' && code !== 0) || (op === '||' && code === 0)) {
        start = endOfPipeline(commands, start);
        continue;
      }
      break;
    }
    if (start >= commands.length) {
      if (script.error !== undefined) {
        this.out.stderr(`sh: ${script.error.line + this.#lineOffset}: ${script.error.message}\n`);
        return this.#end(2);
      }
      if (this.#reading === undefined) return this.#end(code);
      this.#state.lastCode = code;
      this.#reading.idle = true;
      return this.#readScript();
    }
    this.#state.lastCode = code;
    const end = endOfPipeline(commands, start);
    this.#runPipeline(
      commands.slice(start, end),
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
      stages[i] = this.#start(commands[i]!, write, (code, exits) => finished(i, code, exits));
    }
    this.#stages = stages;
    // A shell reading its script from its input leaves none to its commands.
    if (this.#inputClosed || this.#reading !== undefined) stages[0]?.endOfInput();
  }

  /**
   * Runs the whole lines read so far (all that is left, at the end of the
   * input) when the shell is idle; a quote still open waits for its end.
   * At the end of the input with nothing left, the shell exits with the last code.
   */
  #readScript(): void {
    const reading = this.#reading!;
    if (this.#done || !reading.idle) return;
    const end = this.#inputClosed ? reading.buffer.length : reading.buffer.lastIndexOf('\n') + 1;
    if (end === 0) {
      if (this.#inputClosed) this.#end(this.#state.lastCode);
      return;
    }
    const text = reading.buffer.slice(0, end);
    const script = parse(text);
    if (!this.#inputClosed && script.error?.message === 'Syntax error: Unterminated quoted string') return;
    reading.buffer = reading.buffer.slice(end);
    reading.idle = false;
    this.#lineOffset = this.#linesRead;
    this.#linesRead += countLines(text);
    this.#runFrom(script, 0, this.#state.lastCode);
  }

  #end(code: number): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#pid !== undefined) this.#state.session.end(this.#pid);
    this.out.exit(code & 0xff);
  }

  /** Starts a command: its words expanded, its assignments made, its redirections applied. */
  #start(command: Command, write: (data: string) => void, finish: (code: number, exits: boolean) => void): Running {
    const state = this.#state;
    state.line = command.line + this.#lineOffset;
    const words = this.#expand(command.words);
    let ctx = this.#ctx;
    let argv = words;
    if (words.length > 0 && ASSIGNMENT.test(words[0]!)) {
      let first = 0;
      while (first < words.length && ASSIGNMENT.test(words[first]!)) first++;
      const vars = first === words.length ? state.vars : new Map(state.vars);
      for (const word of words.slice(0, first))
        vars.set(word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1));
      if (vars !== state.vars) ctx = { ...ctx, env: vars, subshell: (a, io) => this.#subshell(a, io, vars) };
      argv = words.slice(first);
    }
    const error = this.#error;
    const base: Io = { write, error, finish, relay: this.relay };
    if (command.redirects.length === 0) return argv.length === 0 ? once(ctx, base, 0) : this.#run(ctx, argv, base);
    const targets = command.redirects.map((r) => this.#expandOne(r.target));
    const r = redirect(command.redirects, targets, { out: write, err: error }, this.#files, state.cwd);
    if ('error' in r) {
      error(`sh: ${state.line}: ${r.error}\n`);
      return once(ctx, base, 2);
    }
    const name = programName(argv[0] ?? '');
    const io: Io = {
      write: r.out,
      error: r.err,
      relay: this.relay,
      finish: (code, exits) => {
        const failed = r.files.find((f) => f.failed);
        if (failed === undefined) return finish(code, exits);
        // dash's built-ins say only that the write failed; coreutils say why.
        r.err(
          DASH_BUILTINS.has(name)
            ? `sh: ${state.line}: ${name}: ${name}: I/O error\n`
            : `${name}: write error: ${failed.reason}\n`,
        );
        finish(code === 0 ? 1 : code, exits);
      },
    };
    const running = argv.length === 0 ? once(ctx, io, 0) : this.#run(ctx, argv, io);
    if (r.input === undefined) return running;
    // Its input is the file's: what comes down the pipeline is not read.
    const loop = this.world.loop;
    const text = r.input;
    const timer = loop.schedule(0, 'shell:step', () => {
      running.input(text);
      running.endOfInput();
    });
    return { input: ignore, endOfInput: ignore, kill: () => (loop.cancel(timer), running.kill()) };
  }

  /** Runs a command as a process of the session (`ps` lists it while it runs). */
  #run(ctx: Context, argv: readonly string[], io: Io): Running {
    const name = programName(argv[0]!);
    // A shell is listed by the subshell it starts.
    if (SHELLS.has(name)) return runCommand(ctx, argv, io);
    const session = this.#state.session;
    const pid = session.start(name);
    const finish = io.finish;
    const ended = (code: number, exits: boolean) => {
      session.end(pid);
      finish(code, exits);
    };
    // A command killed is one of a shell killed whole: the session's list goes with it.
    return runCommand(ctx, argv, { write: io.write, error: io.error, relay: io.relay, finish: ended });
  }

  /** `sh -c SCRIPT`: a shell of its own, whose `exit` ends only itself; it starts where this one is. */
  #subshell(argv: readonly string[], io: Io, vars: ReadonlyMap<string, string>): Running {
    const out: ShellOutput = { stdout: io.write, stderr: io.error, exit: (code) => io.finish(code, false) };
    const inherited = { files: this.#files, cwd: this.#state.cwd, vars, session: this.#state.session };
    const child = new ShellProcess(this.world, out, argv, io.relay, inherited);
    return { input: (d) => child.write(d), endOfInput: () => child.close(), kill: () => child.kill() };
  }

  /** Words with their `$` expansions; an unquoted one splits at blanks, and vanishes when empty. */
  #expand(words: readonly Word[]): readonly string[] {
    if (words.every((w) => typeof w === 'string')) return words as readonly string[];
    const out: string[] = [];
    for (const word of words) {
      if (typeof word === 'string') out.push(word);
      else if (word.quoted) out.push(this.#expandOne(word));
      else for (const field of this.#expandOne(word).split(/[ \t\n]+/)) if (field !== '') out.push(field);
    }
    return out;
  }

  #expandOne(word: Word): string {
    if (typeof word === 'string') return word;
    let text = '';
    for (const part of word.parts) {
      if (typeof part === 'string') text += part;
      else if (part.name === '?') text += String(this.#state.lastCode);
      else if (part.name === '$') text += String(this.#pid ?? 1);
      else text += this.#state.vars.get(part.name) ?? '';
    }
    return text;
  }
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The index after the pipeline that starts at `start`. */
function endOfPipeline(script: readonly Command[], start: number): number {
  let end = start + 1;
  while (end < script.length && script[end]!.op === '|') end++;
  return end;
}
