/**
 * `clustersim task list` and `clustersim task exec`: a user's view of the
 * tasks of a running cluster (clustersim's or a real one), and a command
 * run inside one, its output printed as it arrives and its exit code
 * passed on.
 */
import type { Argv } from 'yargs';
import { ExecError, execInTask } from '../client/task-exec.js';
import { textFlag } from './flags.js';

const DEFAULT_MASTER = 'http://127.0.0.1:5050';

export interface TaskListArgs {
  master: string;
}

export interface TaskExecArgs {
  master: string;
  tty: boolean;
  interactive: boolean;
  user: string | undefined;
  'task-id': string;
  '--'?: string[];
  cmd?: string[];
}

export function taskCommands(yargs: Argv): Argv {
  return yargs
    .command(
      'list',
      'List the tasks of the cluster: id, state, framework, agent',
      (y) => masterOption(y),
      (args) => runList(args as unknown as TaskListArgs),
    )
    .command(
      'exec <task-id> [cmd..]',
      'Run a command inside a running task (a nested container session), printing its output and exiting with its code',
      (y) =>
        masterOption(y)
          .positional('task-id', { type: 'string', describe: 'The running task to run the command in' })
          .positional('cmd', { type: 'string', array: true, describe: 'The command and its arguments (after --)' })
          .option('tty', {
            alias: 't',
            type: 'boolean',
            default: false,
            describe: 'Ask for a terminal: one merged output stream',
          })
          .option('interactive', {
            alias: 'i',
            type: 'boolean',
            default: false,
            describe: 'Forward standard input to the command',
          })
          .option('user', { requiresArg: true, type: 'string', describe: 'Run the command as this user' })
          .example('$0 task exec my-task -- echo hello', 'Prints hello and exits 0')
          .example('$0 task exec -i my-task -- cat', 'Echoes what is typed until end of input'),
      (args) => runExec(args as unknown as TaskExecArgs),
    )
    .demandCommand(1, 'Name a task command: list or exec');
}

function masterOption(y: Argv): Argv {
  return y.option(
    'master',
    textFlag(
      'master',
      (t) => (URL.canParse(t) ? undefined : `${JSON.stringify(t)} is not a URL, e.g. ${DEFAULT_MASTER}`),
      { default: DEFAULT_MASTER, describe: "The master's URL" },
    ),
  );
}

async function runList(args: TaskListArgs): Promise<void> {
  const res = await fetch(new URL('/tasks', args.master), { headers: { accept: 'application/json' } }).catch(
    (e: Error) => e,
  );
  if (res instanceof Error || res.status !== 200) {
    process.stderr.write(
      `clustersim: cannot list tasks at ${args.master}: ${res instanceof Error ? res.message : res.status}\n`,
    );
    process.exitCode = 1;
    return;
  }
  const { tasks } = (await res.json()) as {
    tasks: { id: string; state: string; framework_id: string; slave_id: string }[];
  };
  const rows = tasks.map((t) => [t.id, t.state, t.framework_id, t.slave_id]);
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(['ID', 'STATE', 'FRAMEWORK', 'AGENT'][i]!.length, ...rows.map((r) => r[i]!.length)),
  );
  for (const row of [['ID', 'STATE', 'FRAMEWORK', 'AGENT'], ...rows]) {
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}

async function runExec(args: TaskExecArgs): Promise<void> {
  const argv = [...(args.cmd ?? []), ...(args['--'] ?? [])];
  if (argv.length === 0) {
    process.stderr.write('clustersim task exec: needs a command after the task id, e.g. -- echo hello\n');
    process.exitCode = 2;
    return;
  }
  try {
    process.exitCode = await execInTask({
      masterUrl: args.master,
      taskId: args['task-id'],
      argv,
      tty: args.tty,
      ...(args.interactive ? { input: process.stdin } : {}),
      ...(args.user === undefined ? {} : { user: args.user }),
      stdout: (data) => process.stdout.write(data),
      stderr: (data) => process.stderr.write(data),
    });
  } catch (error) {
    const message = error instanceof ExecError ? error.message : `cannot run the command: ${(error as Error).message}`;
    process.stderr.write(`clustersim: ${message}\n`);
    process.exitCode = 1;
  }
}
