/**
 * `clustersim task exec` and `clustersim task list` against a running
 * `clustersim up`, as a user runs them: a command inside a running command
 * task, its output printed and its exit code passed on, standard input
 * forwarded with --interactive.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { startUp, type UpProcess } from './cli-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let up: UpProcess;
let client: SchedulerClient;

beforeAll(async () => {
  up = await startUp(['--agents', '1', '--log-level', 'warn']);
  client = new SchedulerClient(up.masterUrl);
  expect((await client.subscribe({ user: 'root', name: 'exec' })).status).toBe(200);
  const offer = (await client.next('OFFERS', 10_000)).offers.offers[0];
  const task = (id: string, extra: Record<string, unknown> = {}) => ({
    name: id,
    task_id: { value: id },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 64 } },
    ],
    // What the command writes as it starts stays in its sandbox, for exec sessions and the files API.
    command: { value: "printf 'from-task' > task.txt; ./serve --forever" },
    ...extra,
  });
  // A command task, and an engine task (container.type DOCKER).
  const tasks = [task('server'), task('engine', { container: { type: 'DOCKER', docker: { image: 'nginx:1.25' } } })];
  expect(
    (
      await client.call({
        type: 'ACCEPT',
        accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: tasks } }] },
      })
    ).status,
  ).toBe(202);
  for (const id of ['server', 'engine']) {
    for (;;) {
      const { status } = (await client.nextUpdate(id, 10_000)).update;
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
      if (status.state === 'TASK_RUNNING') break;
    }
  }
});

afterAll(async () => {
  client?.disconnect();
  expect(await up.stop()).toBe(0);
});

/** Runs the CLI from the sources with `input` on its standard input. */
function cli(
  args: readonly string[],
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  if (input !== undefined) child.stdin.end(input);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('clustersim task', () => {
  it.each([
    'server',
    'engine',
  ])('exec prints the output of a command in the running task %s and exits with its code', async (taskId) => {
    expect(await cli(['task', 'exec', '--master', up.masterUrl, taskId, '--', 'echo', 'hello'])).toMatchObject({
      code: 0,
      stdout: 'hello\n',
    });
    expect((await cli(['task', 'exec', '--master', up.masterUrl, taskId, '--', 'sh', '-c', 'exit 3'])).code).toBe(3);
  }, 60_000);

  it('exec passes on a command not found', async () => {
    const missing = await cli(['task', 'exec', '--master', up.masterUrl, 'server', '--', 'frobnicate']);
    expect(missing).toMatchObject({ code: 127, stderr: 'sh: 1: frobnicate: not found\n' });
  }, 60_000);

  it('exec --interactive forwards standard input: cat echoes what is typed', async () => {
    expect(
      await cli(['task', 'exec', '-i', '--master', up.masterUrl, 'server', '--', 'cat'], 'typed\nlines\n'),
    ).toMatchObject({ code: 0, stdout: 'typed\nlines\n' });
  }, 60_000);

  it("exec runs a shell as dash behaves: stderr, bash -c's code, and files that stay in the task's sandbox", async () => {
    const exec = (args: readonly string[], input?: string) =>
      cli(
        ['task', 'exec', ...(input === undefined ? [] : ['-i']), '--master', up.masterUrl, 'server', '--', ...args],
        input,
      );
    expect(await exec(['sh', '-c', 'echo to-stderr >&2; exit 3'])).toMatchObject({
      code: 3,
      stdout: '',
      stderr: 'to-stderr\n',
    });
    expect((await exec(['bash', '-c', 'exit 10'])).code).toBe(10);
    expect(await exec(['bash'], "printf 'hello' > a.txt\ncat a.txt; exit 5\n")).toMatchObject({
      code: 5,
      stdout: 'hello',
    });
    expect(await exec(['cat', 'a.txt'])).toMatchObject({ code: 0, stdout: 'hello' });
    // The file the task's own command wrote as it started.
    expect(await exec(['cat', 'task.txt'])).toMatchObject({ code: 0, stdout: 'from-task' });
  }, 60_000);

  it('exec says so when the task is not running', async () => {
    const res = await cli(['task', 'exec', '--master', up.masterUrl, 'nothing', '--', 'true']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`clustersim: No running task 'nothing' on the master at ${up.masterUrl}\n`);
  }, 60_000);

  it('list shows the running task', async () => {
    const res = await cli(['task', 'list', '--master', up.masterUrl]);
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+FRAMEWORK\s+AGENT$/);
    expect(res.stdout).toMatch(/^server\s+TASK_RUNNING\s+\S+-0000\s+\S+-S0$/m);
  }, 60_000);
});
