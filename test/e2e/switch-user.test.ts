/**
 * `--switch-user` with real executor processes (`--custom-executors
 * spawn`): the executor's command runs as CommandInfo.user, else
 * FrameworkInfo.user, in a sandbox given to that user; a user the host
 * lacks fails the launch with upstream's words (TASK_LOST, or TASK_DROPPED
 * for a partition-aware framework, REASON_EXECUTOR_TERMINATED); with
 * `switchUser: false` it runs as this process' user. The executor is a
 * shell command that prints `id -u` and `id -g` and exits.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonEvent } from '../../src/client/scheduler-client.js';
import { lookupUser, parsePasswd } from '../../src/runtime/users.js';
import { replay } from '../../src/scenario/replay.js';
import { startHarness, type Harness } from '../http/agent/executor-harness.js';

const WAIT_MS = 15_000;
const ROOT = process.getuid?.() === 0;
const NOBODY = lookupUser('nobody');

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const printIds = (user?: string) => ({ value: 'id -u; id -g', ...(user === undefined ? {} : { user }) });

/** The agent's last word on the task, and the sandbox of its container. */
async function ended(
  harness: Harness,
  taskId: string,
): Promise<{ status: JsonEvent['update']['status']; sandbox: string }> {
  const event = await harness.scheduler.nextUpdate(taskId, WAIT_MS);
  const status = event.update.status;
  const containerId = status.container_status.container_id.value as string;
  const sandbox = path.join(
    harness.cluster.workDir!,
    'slaves',
    harness.agentId,
    'frameworks',
    harness.frameworkId,
    'executors',
    'e1',
    'runs',
    containerId,
  );
  return { status, sandbox };
}

/** The uid and gid the executor printed. */
const printed = (sandbox: string): number[] =>
  readFileSync(path.join(sandbox, 'stdout'), 'utf8').trim().split('\n').map(Number);

describe('the user a spawned executor runs as', () => {
  it.skipIf(!ROOT || typeof NOBODY === 'string')(
    "is the framework's user (root switches to it; skipped unless the tests run as root on a host with a user nobody)",
    async () => {
      const nobody = NOBODY as Exclude<typeof NOBODY, string>;
      h = await startHarness({ customExecutors: 'spawn' }, { user: 'nobody' });
      await h.launch('t1', 'e1', printIds());
      const { status, sandbox } = await ended(h, 't1');
      expect([status.state, status.message]).toEqual(['TASK_FAILED', 'Executor terminated']);
      expect(printed(sandbox)).toEqual([nobody.uid, nobody.gid]);
      expect(statSync(sandbox)).toMatchObject({ uid: nobody.uid, gid: nobody.gid });
      expect(statSync(sandbox).mode & 0o777).toBe(0o750);
    },
  );

  it.skipIf(!ROOT || typeof NOBODY === 'string')(
    "is the command's user before the framework's (skipped unless root, with a user nobody)",
    async () => {
      const nobody = NOBODY as Exclude<typeof NOBODY, string>;
      h = await startHarness({ customExecutors: 'spawn' }, { user: 'root' });
      await h.launch('t1', 'e1', printIds('nobody'));
      const { sandbox } = await ended(h, 't1');
      expect(printed(sandbox)).toEqual([nobody.uid, nobody.gid]);
    },
  );

  it("is this process' user with switchUser false, whatever the framework says", async () => {
    h = await startHarness({ customExecutors: 'spawn', switchUser: false }, { user: 'no-such-user-clustersim' });
    await h.launch('t1', 'e1', printIds('nobody'));
    const { status, sandbox } = await ended(h, 't1');
    expect(status.state).toBe('TASK_FAILED');
    expect(printed(sandbox)).toEqual([process.getuid!(), process.getgid!()]);
  });
});

describe('a user the executor cannot run as', () => {
  const missing = 'no-such-user-clustersim';
  const reason = (sandbox: string) =>
    `Failed to create executor directory '${sandbox}': Failed to chown directory to '${missing}': No such user '${missing}'`;

  it("that the host lacks: TASK_LOST from the agent with upstream's reason, the sandbox removed", async () => {
    h = await startHarness({ customExecutors: 'spawn' }, { user: missing });
    await h.launch('t1', 'e1', printIds());
    const { status, sandbox } = await ended(h, 't1');
    expect(status).toMatchObject({
      state: 'TASK_LOST',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
      message: reason(sandbox),
    });
    expect(() => statSync(sandbox)).toThrow(/ENOENT/);
    // The executor is gone: the next task of the same executor gets a new container, which fails the same way.
    await h.launch('t2', 'e1', printIds());
    const again = await ended(h, 't2');
    expect(again.status.state).toBe('TASK_LOST');
    expect(again.sandbox).not.toBe(sandbox);
  });

  it('named by the command, for a partition-aware framework: TASK_DROPPED; the failure is an input a replay repeats', async () => {
    h = await startHarness(
      { customExecutors: 'spawn', recordTrace: true },
      { capabilities: [{ type: 'PARTITION_AWARE' }] },
    );
    await h.launch('t1', 'e1', printIds(missing));
    const { status, sandbox } = await ended(h, 't1');
    expect(status).toMatchObject({
      state: 'TASK_DROPPED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
      message: reason(sandbox),
    });
    const trace = h.cluster.trace();
    expect(trace.filter((e) => e.kind === 'input:containerLaunchFailed')).toHaveLength(1);
    const replayed = await replay(trace.map((e) => ({ seq: e.seq, timeMs: e.timeMs, kind: e.kind, line: e.line })));
    expect(replayed).toEqual({ entries: trace.length, hash: h.cluster.cluster.trace.hash(), divergence: undefined });
  });

  it.skipIf(ROOT)(
    'that this process may not switch to (root, this process not being root): TASK_LOST, Operation not permitted (skipped as root)',
    async () => {
      h = await startHarness({ customExecutors: 'spawn' }, { user: 'root' });
      await h.launch('t1', 'e1', printIds());
      const { status, sandbox } = await ended(h, 't1');
      expect(status).toMatchObject({
        state: 'TASK_LOST',
        message: `Failed to create executor directory '${sandbox}': Failed to chown directory to 'root': Operation not permitted`,
      });
    },
  );
});

describe('a command the host cannot execute', () => {
  it('over the argument limit (E2BIG): TASK_LOST with the reason, and the cluster keeps serving', async () => {
    h = await startHarness({ customExecutors: 'spawn', switchUser: false });
    await h.launch('t1', 'e1', { value: `echo ${'a'.repeat(200_000)}` });
    const { status } = await ended(h, 't1');
    expect(status).toMatchObject({ state: 'TASK_LOST', source: 'SOURCE_AGENT', reason: 'REASON_EXECUTOR_TERMINATED' });
    expect(status.message).toMatch(/^Failed to launch container: spawn .*E2BIG$/);
    await h.launch('t2', 'e1', printIds());
    expect((await ended(h, 't2')).status.state).toBe('TASK_FAILED');
  });
});

describe('user look-up', () => {
  it('finds users by name only, as getpwnam does', () => {
    expect(lookupUser('root')).toEqual({ name: 'root', uid: 0, gid: 0 });
    expect(lookupUser('0')).toBe("No such user '0'");
    for (const name of ['', '-h', '--', 'a:b', 'a\nroot', 'ro\u0000ot'])
      expect(lookupUser(name)).toBe(`No such user '${name}'`);
    expect(parsePasswd('a:x:1:2::/:/bin/sh\nb:x:3:4::/:/bin/sh\n', 'b')).toEqual({ name: 'b', uid: 3, gid: 4 });
    expect(parsePasswd('b:x::4::/:/bin/sh\nb:x:z:4::/:/bin/sh\n', 'b')).toBeUndefined();
  });
});
