/**
 * What a simulated task does, decided from its command. A small shell
 * subset, interpreted rather than run:
 *
 *   sleep N       runs N seconds (fractions allowed), exit code 0
 *   exit N        ends the script with code N
 *   true / :      code 0          false    code 1
 *   echo ...      code 0, the text is the task's output
 *   printf F ...  code 0 (1 when an argument is not a number), the formatted text is its output
 *   > >> 2> >&2 2>&1   redirections: the output goes to a file of the sandbox, or to stderr
 *   trap '' TERM  the task ignores SIGTERM: a kill waits out its grace period (also SIGTERM, 15)
 *   a; b  a && b  a || b          sequencing with shell semantics
 *   anything else                 runs until killed
 *
 * The plan is data: how long the task runs, how it ends, and what it
 * writes into its sandbox (its stdout and stderr, and files).
 */
import { type Redirect, parse as parseScript, wordText } from './shell-parse.js';
import { printf } from './shell-text.js';
import type { CommandSpec } from '../model/types.js';
import type { SandboxWrite } from './sandbox.js';

export type TaskPlan = (
  | { readonly kind: 'exits'; readonly runMs: number; readonly exitCode: number }
  | { readonly kind: 'forever'; readonly runMs: number }
) & {
  /** What it leaves in its sandbox as it starts: its standard output and error, and the files it writes. */
  readonly writes: readonly SandboxWrite[];
  /** It ignores SIGTERM: a kill ends it only with SIGKILL, once the kill policy's grace period is over. */
  readonly ignoresTerm?: boolean;
};

interface Step {
  readonly op: ';' | '&&' | '||';
  readonly words: readonly string[];
  readonly redirects: readonly Redirect[];
}

/** A command that is not given: the task runs until killed. */
const NO_COMMAND: TaskPlan = { kind: 'forever', runMs: 0, writes: [] };
/** Plans of shell scripts by their text: a plan is data, shared by every task of one script. */
const SHELL_PLANS = new Map<string, TaskPlan>();
/** Scripts whose plans are kept; past it the cache starts again (plans are pure, so nothing changes but the cost). */
const SHELL_PLANS_KEPT = 1_024;

export function planFor(command: CommandSpec | undefined): TaskPlan {
  if (command === undefined) return NO_COMMAND;
  if (command.shell) {
    const script = command.value ?? '';
    let plan = SHELL_PLANS.get(script);
    if (plan === undefined) {
      if (SHELL_PLANS.size >= SHELL_PLANS_KEPT) SHELL_PLANS.clear();
      SHELL_PLANS.set(script, (plan = run(parse(script))));
    }
    return plan;
  }
  const program = basename(command.value ?? command.arguments[0] ?? '');
  return run({ steps: [{ op: ';', words: [program, ...command.arguments.slice(1)], redirects: [] }] });
}

function run(script: Steps): TaskPlan {
  const plan = runSteps(script);
  return script.steps.some(ignoresTerm) ? { ...plan, ignoresTerm: true } : plan;
}

/** `trap '' TERM`: an empty action for SIGTERM. */
function ignoresTerm(step: Step): boolean {
  const [program, action, ...signals] = step.words;
  return program === 'trap' && action === '' && signals.some((s) => s === 'TERM' || s === 'SIGTERM' || s === '15');
}

function runSteps(script: Steps): TaskPlan {
  let runMs = 0;
  let code = 0;
  const writes: SandboxWrite[] = [];
  for (const step of script.steps) {
    if ((step.op === '&&' && code !== 0) || (step.op === '||' && code === 0)) continue;
    const [program = '', ...args] = step.words;
    const out = outputs(step.redirects, writes);
    switch (program) {
      case '':
      case 'true':
      case ':':
      case 'trap':
        code = 0;
        break;
      case 'false':
        code = 1;
        break;
      case 'echo':
        write(writes, out[1], `${args.join(' ')}\n`);
        code = 0;
        break;
      case 'printf': {
        const text = printf(args[0] ?? '', args.slice(1));
        write(writes, out[1], text.text);
        for (const e of text.errors) write(writes, out[2], `sh: 1: printf: ${e}\n`);
        code = text.errors.length > 0 ? 1 : 0;
        break;
      }
      case 'sleep': {
        const seconds = Number(args[0]);
        if (!Number.isFinite(seconds) || seconds < 0) code = 1;
        else {
          runMs += Math.round(seconds * 1000);
          code = 0;
        }
        break;
      }
      case 'exit': {
        const n = args[0] === undefined ? code : Number.parseInt(args[0], 10);
        return { kind: 'exits', runMs, exitCode: Number.isFinite(n) ? n & 0xff : 2, writes };
      }
      default:
        return { kind: 'forever', runMs, writes };
    }
  }
  if (script.error === undefined) return { kind: 'exits', runMs, exitCode: code, writes };
  writes.push({ path: 'stderr', data: `sh: ${script.error.line}: ${script.error.message}\n`, append: true });
  return { kind: 'exits', runMs, exitCode: 2, writes };
}

/** Where a step's output (1) and error (2) go, its redirections applied; a file opened with `>` starts empty. */
function outputs(redirects: readonly Redirect[], writes: SandboxWrite[]): (string | undefined)[] {
  const fds: (string | undefined)[] = [undefined, 'stdout', 'stderr'];
  for (const r of redirects) {
    const target = wordText(r.target);
    if (r.op === '>' || r.op === '>>') {
      const path = sandboxPath(target);
      if (path !== undefined) writes.push({ path, data: '', append: r.op === '>>' });
      fds[r.fd] = path;
    } else if (r.op === '>&' || (r.op === '<&' && r.fd !== 0))
      fds[r.fd] = target === '-' ? undefined : fds[Number(target)];
  }
  return fds;
}

/** A redirection's file in the task's sandbox (its working directory), or undefined for /dev/null and paths elsewhere. */
function sandboxPath(target: string): string | undefined {
  const inSandbox = /^(\$MESOS_SANDBOX|\$\{MESOS_SANDBOX\})\//.exec(target);
  const path = inSandbox === null ? target : target.slice(inSandbox[0].length);
  return path.startsWith('/') || path === '' ? undefined : path;
}

function write(writes: SandboxWrite[], path: string | undefined, data: string): void {
  if (path !== undefined && data !== '') writes.push({ path, data, append: true });
}

interface Steps {
  readonly steps: readonly Step[];
  readonly error?: { readonly line: number; readonly message: string };
}

/** The script's commands; a pipe runs its commands one after the other here. */
function parse(text: string): Steps {
  const script = parseScript(text);
  const steps = script.commands.map((c) => ({
    op: c.op === '|' ? ';' : c.op,
    words: c.words.map(wordText),
    redirects: c.redirects,
  }));
  return script.error === undefined ? { steps } : { steps, error: script.error };
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}
