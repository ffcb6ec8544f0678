/**
 * What the small shell's commands are given and give back: the world of
 * the container they run in, the shell's state, their input, output and
 * end (`Io`, `Running`), and the helpers every command uses.
 */
import type { Timers } from '../kernel/event-loop.js';
import type { Relay } from './shell-relay.js';
import type { Sandbox } from './sandbox.js';
import type { ShellFiles } from './shell-files.js';

export interface ShellWorld {
  readonly loop: Timers;
  readonly hostname: string;
  /** The working directory the shell starts in: the sandbox's path. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** The container's sandbox: what `cat` reads, `ls` lists and `>` writes. */
  readonly sandbox: Sandbox;
  /** The cluster's time of day, in ms since the epoch (`date`). */
  wallTimeMs(): number;
  /** The container's user (`whoami`, `id`); root when none is given, as upstream's. */
  readonly user?: string;
}

/** A command of a pipeline, running: what it reads, and how it ends. */
export interface Running {
  input(data: string): void;
  endOfInput(): void;
  kill(): void;
}

export interface Io {
  write(data: string): void;
  error(data: string): void;
  /** `exits`: the command was `exit`, which ends the whole script. */
  finish(code: number, exits: boolean): void;
  readonly relay: Relay;
}

/** The processes of one session, for `ps`: the shells and what they run, by pid from 1. */
export class Session {
  #nextPid = 1;
  readonly running = new Map<number, string>();

  start(name: string): number {
    const pid = this.#nextPid++;
    this.running.set(pid, name);
    return pid;
  }

  end(pid: number): void {
    this.running.delete(pid);
  }
}

/** What a shell keeps from command to command. */
export interface ShellState {
  cwd: string;
  readonly vars: Map<string, string>;
  /** `$?`. */
  lastCode: number;
  /** The line of the running command, for messages. */
  line: number;
  readonly session: Session;
}

export interface Context {
  readonly world: ShellWorld;
  readonly files: ShellFiles;
  readonly state: ShellState;
  /** The environment the command sees: the shell's variables and the command's assignments. */
  readonly env: ReadonlyMap<string, string>;
  /** A shell of its own (`sh -c`, `bash -c`) with this argv. */
  subshell(argv: readonly string[], io: Io): Running;
}

export type Builtin = (ctx: Context, args: readonly string[], io: Io) => Running;

export const NOT_FOUND = 127;
export const ignore = (): void => undefined;

/** Finishes with `code` after the current step (a timer that has run is cancelled harmlessly). */
export function once(ctx: Context, io: Io, code: number, exits = false): Running {
  const loop = ctx.world.loop;
  const timer = loop.schedule(0, 'shell:step', () => io.finish(code, exits));
  return { input: ignore, endOfInput: ignore, kill: () => loop.cancel(timer) };
}

/** A message of one of dash's built-ins. */
export const builtinError = (ctx: Context, name: string, message: string) =>
  `sh: ${ctx.state.line}: ${name}: ${message}\n`;

/** A command that reads its whole input, then writes what `done` makes of it and finishes with its code. */
export function readingInput(io: Io, done: (input: string) => number): Running {
  let input = '';
  let ended = false;
  return {
    input: (data) => (input += data),
    endOfInput: () => {
      if (ended) return;
      ended = true;
      io.finish(done(input), false);
    },
    kill: () => (ended = true),
  };
}
