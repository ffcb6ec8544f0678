/**
 * What a simulated task does, decided from its command. A small shell
 * subset, interpreted rather than run:
 *
 *   sleep N       runs N seconds (fractions allowed), exit code 0
 *   exit N        ends the script with code N
 *   true / :      code 0          false    code 1
 *   echo ...      code 0, the text is the task's output
 *   trap '' TERM  the task ignores SIGTERM: a kill waits out its grace period (also SIGTERM, 15)
 *   a; b  a && b  a || b          sequencing with shell semantics
 *   anything else                 runs until killed
 *
 * The plan is data: how long the task runs and how it ends.
 */
import { parse as parseScript } from './shell.js';
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
  return run([{ op: ';', words: [program, ...command.arguments.slice(1)] }]);
}

function run(steps: readonly Step[]): TaskPlan {
  const plan = runSteps(steps);
  return steps.some(ignoresTerm) ? { ...plan, ignoresTerm: true } : plan;
}

/** `trap '' TERM`: an empty action for SIGTERM. */
function ignoresTerm(step: Step): boolean {
  const [program, action, ...signals] = step.words;
  return program === 'trap' && action === '' && signals.some((s) => s === 'TERM' || s === 'SIGTERM' || s === '15');
}

function runSteps(steps: readonly Step[]): TaskPlan {
  let runMs = 0;
  let code = 0;
  const writes: SandboxWrite[] = [];
  for (const step of steps) {
    if ((step.op === '&&' && code !== 0) || (step.op === '||' && code === 0)) continue;
    const [program = '', ...args] = step.words;
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
        writes.push({ path: 'stdout', data: `${args.join(' ')}\n`, append: true });
        code = 0;
        break;
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
  return { kind: 'exits', runMs, exitCode: code, writes };
}

/** The script's commands; a pipe runs its commands one after the other here. */
function parse(script: string): Step[] {
  return parseScript(script).map((c) => ({ op: c.op === '|' ? ';' : c.op, words: c.words }));
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}
