/**
 * A real executor process (test/fixtures/executor.mjs, written against the
 * executor HTTP API) spawned by the agent (`--custom-executors spawn`), in
 * virtual time: it subscribes, receives LAUNCH, reports TASK_RUNNING and
 * TASK_FINISHED, gets ACKNOWLEDGED, exchanges MESSAGEs with its framework
 * both ways, survives an agent restart (its stream breaks; with
 * checkpointing it subscribes again), and is shut down with the grace
 * period; with either set of environment names, and with executor
 * authentication.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ExecutorClient } from '../../src/client/executor-client.js';
import type { JsonEvent } from '../../src/client/scheduler-client.js';
import { replay } from '../../src/scenario/replay.js';
import { ExecutorTokens } from '../../src/http/agent/executor-token.js';
import { sandboxPath, startHarness, tick, type Harness } from '../http/agent/executor-harness.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/executor.mjs');
const WAIT_MS = 15_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const command = (...flags: string[]) => ({ value: `exec ${process.execPath} ${FIXTURE} ${flags.join(' ')}` });
const behaviour = (value: string) => ({ labels: { labels: [{ key: 'behaviour', value }] } });

/** The sandbox of the container that sent `update`. */
function sandboxOf(h: Harness, executorId: string, update: JsonEvent): string {
  return sandboxPath(h, executorId, update.update.status.container_status.container_id.value as string);
}

/** Waits until the executor's stdout has a line starting with `prefix`. */
async function stdoutLine(sandbox: string, prefix: string): Promise<string> {
  const file = path.join(sandbox, 'stdout');
  for (let waited = 0; waited < WAIT_MS; waited += 20) {
    const line = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .find((l) => l.startsWith(prefix))
      : undefined;
    if (line !== undefined) return line;
    await tick(20);
  }
  throw new Error(`no line '${prefix}' in ${file}:\n${existsSync(file) ? readFileSync(file, 'utf8') : '(none)'}`);
}

async function update(h: Harness, taskId: string, state: string): Promise<JsonEvent> {
  const event = await h.scheduler.nextUpdate(taskId, WAIT_MS);
  expect(event.update.status.state, JSON.stringify(event.update.status)).toBe(state);
  return event;
}

describe.each(['CLUSTER', 'MESOS'])('a spawned executor reading the %s_* environment', (prefix) => {
  it('runs its tasks, talks with its framework, outlives an agent restart and is shut down', async () => {
    h = await startHarness({ customExecutors: 'spawn' });
    await h.launch('t1', 'e1', command('--env-prefix', prefix));
    const running = await update(h, 't1', 'TASK_RUNNING');
    expect(running.update.status).toMatchObject({ source: 'SOURCE_EXECUTOR', executor_id: { value: 'e1' } });
    const sandbox = sandboxOf(h, 'e1', running);
    await h.acknowledge(running);
    await stdoutLine(sandbox, `ack ${running.update.status.uuid}`);

    const bytes = Buffer.from([0, 1, 254, 255, 10, 13]).toString('base64');
    await h.scheduler.call({
      type: 'MESSAGE',
      message: { agent_id: { value: h.agentId }, executor_id: { value: 'e1' }, data: bytes },
    });
    expect((await h.scheduler.next('MESSAGE', WAIT_MS)).message).toEqual({
      agent_id: { value: h.agentId },
      executor_id: { value: 'e1' },
      data: bytes,
    });

    // The agent process dies and comes back: the stream breaks, the executor subscribes again.
    h.cluster.driver.input((c) => c.crashAgent(h!.agentId));
    await stdoutLine(sandbox, 'disconnected');
    h.cluster.driver.input((c) => c.restartAgent(h!.agentId));
    await stdoutLine(sandbox, 'resubscribe');

    await h.launch('t2', 'e1', command('--env-prefix', prefix), behaviour('finish:100'));
    await h.acknowledge(await update(h, 't2', 'TASK_RUNNING'));
    const finished = await update(h, 't2', 'TASK_FINISHED');
    expect(finished.update.status.source).toBe('SOURCE_EXECUTOR');
    await h.acknowledge(finished);

    await h.scheduler.call({
      type: 'SHUTDOWN',
      shutdown: { agent_id: { value: h.agentId }, executor_id: { value: 'e1' } },
    });
    expect((await update(h, 't1', 'TASK_KILLED')).update.status.source).toBe('SOURCE_EXECUTOR');
    expect((await h.scheduler.next('FAILURE', WAIT_MS)).failure).toMatchObject({
      executor_id: { value: 'e1' },
      status: 0,
    });
    await stdoutLine(sandbox, 'exit 0');
  }, 60_000);
});

describe('a spawned executor on an agent with an address of its own (--agent-addressing loopback)', () => {
  it('finds its agent at AGENT_ENDPOINT, one listener serving every agent', async () => {
    h = await startHarness({ customExecutors: 'spawn', agentAddressing: 'loopback' });
    expect(h.agentUrl).toMatch(/^http:\/\/127\.0\.0\.\d+:\d+$/);
    await h.launch('t1', 'e1', command(), behaviour('finish:50'));
    await h.acknowledge(await update(h, 't1', 'TASK_RUNNING'));
    expect((await update(h, 't1', 'TASK_FINISHED')).update.status.source).toBe('SOURCE_EXECUTOR');
  }, 60_000);
});

describe('a spawned executor that ignores SHUTDOWN', () => {
  it('is destroyed after the grace period, its task lost', async () => {
    h = await startHarness({ customExecutors: 'spawn', executorShutdownGracePeriodSeconds: 2 });
    await h.launch('t1', 'e1', command('--ignore-shutdown'));
    const running = await update(h, 't1', 'TASK_RUNNING');
    await h.acknowledge(running);
    await h.scheduler.call({
      type: 'SHUTDOWN',
      shutdown: { agent_id: { value: h.agentId }, executor_id: { value: 'e1' } },
    });
    await stdoutLine(sandboxOf(h, 'e1', running), 'shutdown');
    h.cluster.advance(2_000);
    expect((await update(h, 't1', 'TASK_LOST')).update.status).toMatchObject({
      source: 'SOURCE_AGENT',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
    expect((await h.scheduler.next('FAILURE', WAIT_MS)).failure.status).toBe(9);
  }, 60_000);
});

describe('--authenticate-http-executors', () => {
  it('gives the spawned executor its token (it runs its task), and refuses calls without a token or with a forged one', async () => {
    h = await startHarness({ customExecutors: 'spawn', authenticateHttpExecutors: true });
    await h.launch('t1', 'e1', command());
    const running = await update(h, 't1', 'TASK_RUNNING');
    await h.acknowledge(running);

    const anonymous = new ExecutorClient(h.agentUrl, { frameworkId: h.frameworkId, executorId: 'e1' });
    const refused = await anonymous.call({ type: 'MESSAGE', message: { data: '' } });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="mesos-agent-executor"');
    anonymous.close();

    // A token that does not verify.
    const forged = new ExecutorClient(h.agentUrl, { frameworkId: h.frameworkId, executorId: 'e1' }, 'json', {
      authorization: 'Bearer a.b.c',
    });
    expect((await forged.call({ type: 'MESSAGE', message: { data: '' } })).status).toBe(401);
    forged.close();
  }, 60_000);

  it('answers 403 to a token made for another executor or another container, 202 to its own', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-key-'));
    const keyFile = path.join(dir, 'jwt.key');
    writeFileSync(keyFile, 'a secret of the test, long enough for HS256 keys');
    try {
      h = await startHarness({
        customExecutors: 'spawn',
        authenticateHttpExecutors: true,
        jwtSecretKey: keyFile,
        recordTrace: true,
      });
      await h.launch('t1', 'e1', command());
      const running = await update(h, 't1', 'TASK_RUNNING');
      await h.acknowledge(running);
      const containerId = running.update.status.container_status.container_id.value as string;
      const tokens = await ExecutorTokens.fromFile(keyFile);
      const as = async (executorId: string, cid: string) => {
        const token = tokens.signSync({ frameworkId: h!.frameworkId, executorId, containerId: cid });
        const client = new ExecutorClient(h!.agentUrl, { frameworkId: h!.frameworkId, executorId: 'e1' }, 'json', {
          authorization: `Bearer ${token}`,
        });
        const result = await client.call({ type: 'MESSAGE', message: { data: Buffer.from('hi').toString('base64') } });
        client.close();
        return result;
      };
      const other = await as('e2', containerId);
      expect(other.status).toBe(403);
      expect(other.body).toContain("does not contain an 'eid' claim with the executor ID e1, which is set in the call");
      const stale = await as('e1', '00000000-0000-0000-0000-000000000000');
      expect(stale.status).toBe(403);
      expect(stale.body).toContain("a 'cid' claim with the correct active ContainerID");
      expect((await as('e1', containerId)).status).toBe(202);
      expect((await h.scheduler.next('MESSAGE', WAIT_MS)).message.data).toBe(Buffer.from('hi').toString('base64'));
      // The input record keeps each call's token claims: a replay checks them again and refuses the same calls.
      const trace = h.cluster.trace();
      expect(trace.some((e) => e.kind === 'input:executorCall' && e.line.includes('"$authorizer":{'))).toBe(true);
      const replayed = await replay(trace.map((e) => ({ seq: e.seq, timeMs: e.timeMs, kind: e.kind, line: e.line })));
      expect(replayed).toEqual({ entries: trace.length, hash: h.cluster.cluster.trace.hash(), divergence: undefined });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
