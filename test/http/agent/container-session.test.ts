/**
 * Task exec sessions on the agent operator API over real sockets, as a
 * real exec client makes them: LAUNCH_NESTED_CONTAINER_SESSION under a
 * running task's container (a RecordIO stream of ProcessIO DATA records),
 * ATTACH_CONTAINER_INPUT (a probe holding only the CONTAINER_ID record,
 * then a chunked stream of STDIN records), WAIT_CONTAINER's wait(2)
 * status, KILL_CONTAINER, and the streaming header rules of wire-facts §7.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../../../src/client/event-queue.js';
import { postRaw } from '../../../src/client/scheduler-client.js';
import { frameRecord } from '../../../src/wire/recordio.js';
import { startHarness, tick, type Harness } from './executor-harness.js';

let h: Harness;
let parent: string;
/** What the cluster logged at warn and above: a session must not leave its route answering twice. */
const warnings: string[] = [];

beforeAll(async () => {
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (warnings.push(chunk.toString()), done()) });
  h = await startHarness({ logger: pino({ level: 'warn' }, sink) });
  await h.launch('t1', 'e1', { value: 'sleep 3600' });
  const starting = await h.scheduler.nextUpdate('t1');
  await h.acknowledge(starting);
  const running = await h.scheduler.nextUpdate('t1');
  expect(running.update.status.state).toBe('TASK_RUNNING');
  parent = running.update.status.container_status.container_id.value;
});
afterAll(async () => {
  await h?.close();
});

const api = () => new URL('/api/v1', h.agentUrl);

interface Session {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Output so far, by stream. */
  readonly out: { STDOUT: string; STDERR: string };
  readonly ended: Promise<void>;
  readonly id: string;
  /** The body of a refusal. */
  readonly body: string;
}

/** LAUNCH_NESTED_CONTAINER_SESSION with a command as real clients send it (shell false, argv). */
async function session(argv: readonly string[], headers: Record<string, string> = {}, user?: string): Promise<Session> {
  const id = randomUUID();
  const body = JSON.stringify({
    type: 'LAUNCH_NESTED_CONTAINER_SESSION',
    launch_nested_container_session: {
      container_id: { parent: { value: parent }, value: id },
      command: { shell: false, value: argv[0], arguments: argv, ...(user === undefined ? {} : { user }) },
    },
  });
  const out = { STDOUT: '', STDERR: '' };
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  const allHeaders = {
    'content-type': 'application/json',
    accept: 'application/recordio',
    'message-accept': 'application/json',
    ...headers,
  };
  const { answer } = openStream(api(), allHeaders, body, {
    record: (record) => {
      const io = JSON.parse(record.toString('utf8'));
      expect(io.type).toBe('DATA');
      expect(io.data.data).not.toBe('');
      out[io.data.type as 'STDOUT' | 'STDERR'] += Buffer.from(io.data.data, 'base64').toString('utf8');
    },
    closed: () => done(),
  });
  const result = await answer;
  if (result.status !== 200) done();
  return { status: result.status, headers: result.headers, out, ended, id, body: result.body };
}

async function waitContainer(id: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({
    type: 'WAIT_CONTAINER',
    wait_container: { container_id: { parent: { value: parent }, value: id } },
  });
  return postRaw(api(), body, { 'content-type': 'application/json', accept: 'application/json' });
}

const inputRecord = (process: Record<string, unknown>) =>
  frameRecord(Buffer.from(JSON.stringify({ type: 'ATTACH_CONTAINER_INPUT', attach_container_input: process })));
const containerIdRecord = (id: string) =>
  inputRecord({ type: 'CONTAINER_ID', container_id: { parent: { value: parent }, value: id } });
const stdin = (text: string) =>
  inputRecord({
    type: 'PROCESS_IO',
    process_io: { type: 'DATA', data: { type: 'STDIN', data: Buffer.from(text).toString('base64') } },
  });

/** ATTACH_CONTAINER_INPUT as a chunked stream: its records are written as they are typed. */
const inputStream = () =>
  http.request(api(), {
    method: 'POST',
    headers: {
      'content-type': 'application/recordio',
      'message-content-type': 'application/json',
      accept: 'application/json',
      'transfer-encoding': 'chunked',
    },
  });

describe('a task exec session', () => {
  it('runs a command in the task container and streams its output; WAIT_CONTAINER gives its status', async () => {
    const s = await session(['echo', 'hello']);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('application/recordio');
    expect(s.headers['message-content-type']).toBe('application/json');
    await s.ended;
    expect(s.out).toEqual({ STDOUT: 'hello\n', STDERR: '' });
    expect(await waitContainer(s.id)).toMatchObject({
      status: 200,
      body: JSON.stringify({ type: 'WAIT_CONTAINER', wait_container: { exit_status: 0 } }),
    });
    // The stream took the reply over: nothing tried to answer again.
    expect(warnings).toEqual([]);
  });

  it("gives the raw wait status: exit 3 is 768, and an unknown command 127 with dash's words", async () => {
    const three = await session(['sh', '-c', 'exit 3']);
    await three.ended;
    expect(JSON.parse((await waitContainer(three.id)).body).wait_container.exit_status).toBe(768);
    const unknown = await session(['frobnicate']);
    await unknown.ended;
    expect(unknown.out.STDERR).toBe('sh: 1: frobnicate: not found\n');
    expect(JSON.parse((await waitContainer(unknown.id)).body).wait_container.exit_status).toBe(127 << 8);
  });

  it('takes standard input as it is typed: a probe with the CONTAINER_ID record, then a chunked stream', async () => {
    const cat = await session(['cat']);
    expect(
      (
        await postRaw(api(), containerIdRecord(cat.id), {
          'content-type': 'application/recordio',
          'message-content-type': 'application/json',
          accept: 'application/json',
        })
      ).status,
    ).toBe(200);
    const req = inputStream();
    const answered = new Promise<number>((resolve) =>
      req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))),
    );
    req.write(containerIdRecord(cat.id));
    req.write(stdin('typed line\n'));
    for (let i = 0; i < 100 && cat.out.STDOUT === ''; i++) await tick(10);
    // Echoed while the input is still open.
    expect(cat.out.STDOUT).toBe('typed line\n');
    req.end(stdin(''));
    expect(await answered).toBe(200);
    await cat.ended;
    expect(JSON.parse((await waitContainer(cat.id)).body).wait_container.exit_status).toBe(0);
  });

  it('sleeps in cluster time; WAIT_CONTAINER waits for the end; KILL_CONTAINER ends it with its signal', async () => {
    const sleeper = await session(['sleep', '100']);
    const waiting = waitContainer(sleeper.id);
    await tick(50);
    const kill = JSON.stringify({
      type: 'KILL_CONTAINER',
      kill_container: { container_id: { parent: { value: parent }, value: sleeper.id }, signal: 15 },
    });
    expect((await postRaw(api(), kill, { 'content-type': 'application/json' })).status).toBe(200);
    const waited = JSON.parse((await waiting).body);
    expect(waited.wait_container.exit_status).toBe(15);
    await sleeper.ended;
  });
});

describe('the shell of a session', () => {
  const statusOf = async (id: string) => JSON.parse((await waitContainer(id)).body).wait_container.exit_status;

  it("writes to standard error with >&2 and exits with the script's code; bash -c is the same shell", async () => {
    const s = await session(['sh', '-c', 'echo to-stderr >&2; exit 3']);
    await s.ended;
    expect(s.out).toEqual({ STDOUT: '', STDERR: 'to-stderr\n' });
    expect(await statusOf(s.id)).toBe(3 << 8);
    const bash = await session(['bash', '-c', 'exit 10']);
    await bash.ended;
    expect(bash.out).toEqual({ STDOUT: '', STDERR: '' });
    expect(await statusOf(bash.id)).toBe(10 << 8);
  });

  it("a file one session writes into the task's sandbox is read by the next", async () => {
    const write = await session(['/bin/sh', '-c', "printf 'hello' > a.txt && echo more >> a.txt"]);
    await write.ended;
    expect(write.out).toEqual({ STDOUT: '', STDERR: '' });
    expect(await statusOf(write.id)).toBe(0);
    const read = await session(['cat', 'a.txt']);
    await read.ended;
    expect(read.out).toEqual({ STDOUT: 'hellomore\n', STDERR: '' });
    const missing = await session(['sh', '-c', 'cat < nofile']);
    await missing.ended;
    expect(missing.out.STDERR).toBe('sh: 1: cannot open nofile: No such file\n');
    expect(await statusOf(missing.id)).toBe(2 << 8);
  });

  it("runs as the command's user, root when it names none", async () => {
    const named = await session(['whoami'], {}, 'nobody');
    await named.ended;
    expect(named.out.STDOUT).toBe('nobody\n');
    const root = await session(['id', '-un']);
    await root.ended;
    expect(root.out.STDOUT).toBe('root\n');
  });

  it('bash with no script runs each line typed into it as it comes', async () => {
    const bash = await session(['bash']);
    const req = inputStream();
    req.on('response', (res) => res.resume());
    req.write(containerIdRecord(bash.id));
    req.write(stdin('cd /; pwd\n'));
    for (let i = 0; i < 100 && bash.out.STDOUT === ''; i++) await tick(10);
    expect(bash.out.STDOUT).toBe('/\n');
    req.end(stdin('exit 4\n'));
    await bash.ended;
    expect(await statusOf(bash.id)).toBe(4 << 8);
  });
});

describe('a long script in a session', () => {
  it('a pipeline of 20,000 commands (80 KB) runs and the cluster keeps serving; an argument of 128 KiB is refused with 400', async () => {
    const long = await session(['sh', '-c', `echo a${'|cat'.repeat(20_000)}`]);
    expect(long.status).toBe(200);
    await long.ended;
    expect(long.out).toEqual({ STDOUT: 'a\n', STDERR: '' });
    expect(JSON.parse((await waitContainer(long.id)).body).wait_container.exit_status).toBe(0);
    expect(h.cluster.driver.failure).toBeUndefined();
    // The trace, whose tail stays in memory, shows the start of the script and its length.
    const launched = h.cluster.driver.cluster.trace
      .entries()
      .find((e) => e.kind === 'container:launch-nested' && e.line.includes(long.id));
    expect(launched?.line).toContain(`"argv":"sh -c echo a|cat|cat|`);
    expect(launched?.line).toMatch(/\|c?a?t?… \(80012 characters\)"/);
    expect(launched!.line.length).toBeLessThan(500);
    // As Linux's execve refuses it (E2BIG): before anything starts, with the reason.
    const tooLong = await session(['sh', '-c', `echo a${' | cat'.repeat(21_845)}`]);
    expect(tooLong).toMatchObject({
      status: 400,
      body: 'Argument 2 of the command is 131076 bytes; one argument holds at most 131071 (Argument list too long)',
    });
    expect((await waitContainer(tooLong.id)).status).toBe(404);
    const detached = JSON.stringify({
      type: 'LAUNCH_NESTED_CONTAINER',
      launch_nested_container: {
        container_id: { parent: { value: parent }, value: randomUUID() },
        command: { value: 'x'.repeat(200_000) },
      },
    });
    expect(await postRaw(api(), detached, { 'content-type': 'application/json' })).toMatchObject({
      status: 400,
      body: 'Argument 2 of the command is 200000 bytes; one argument holds at most 131071 (Argument list too long)',
    });
    const after = await session(['echo', 'still serving']);
    await after.ended;
    expect(after.out.STDOUT).toBe('still serving\n');
  });
});

describe("WAIT_CONTAINER on a task's own container", () => {
  it('waits while the task runs, and answers at once once it has ended', async () => {
    // A command task: its executor ends with it.
    await h.launch('t2', 'unused', undefined, { executor: undefined, command: { value: 'sleep 3600' } });
    await h.acknowledge(await h.scheduler.nextUpdate('t2'));
    const running = await h.scheduler.nextUpdate('t2');
    await h.acknowledge(running);
    const own = running.update.status.container_status.container_id.value as string;
    const body = JSON.stringify({ type: 'WAIT_CONTAINER', wait_container: { container_id: { value: own } } });
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    let answered = false;
    const waiting = postRaw(api(), body, headers).then((r) => ((answered = true), r));
    await tick(50);
    expect(answered).toBe(false);
    expect(
      (await h.scheduler.call({ type: 'KILL', kill: { task_id: { value: 't2' }, agent_id: { value: h.agentId } } }))
        .status,
    ).toBe(202);
    const first = await waiting;
    expect(first.status).toBe(200);
    const status = JSON.parse(first.body).wait_container.exit_status;
    expect(typeof status).toBe('number');
    // Ended: the same answer at once.
    expect(JSON.parse((await postRaw(api(), body, headers)).body).wait_container.exit_status).toBe(status);
  });
});

describe('the container calls refuse as upstream does', () => {
  it('404 for an unknown container, 406 and 415 for the streaming media types used wrongly', async () => {
    expect(await waitContainer('no-such-container')).toMatchObject({
      status: 404,
      body: 'Container no-such-container cannot be found',
    });
    expect((await session(['echo', 'x'], { accept: 'application/json' })).status).toBe(406);
    const getState = JSON.stringify({ type: 'GET_STATE' });
    expect(
      (await postRaw(api(), getState, { 'content-type': 'application/json', accept: 'application/recordio' })).status,
    ).toBe(406);
    expect(
      (
        await postRaw(api(), getState, {
          'content-type': 'application/json',
          'message-content-type': 'application/json',
        })
      ).status,
    ).toBe(415);
    const input = JSON.stringify({
      type: 'ATTACH_CONTAINER_INPUT',
      attach_container_input: { type: 'CONTAINER_ID', container_id: { value: 'x' } },
    });
    expect((await postRaw(api(), input, { 'content-type': 'application/json' })).status).toBe(415);
    const unknownParent = JSON.stringify({
      type: 'LAUNCH_NESTED_CONTAINER_SESSION',
      launch_nested_container_session: {
        container_id: { parent: { value: 'nobody' }, value: randomUUID() },
        command: { value: 'true' },
      },
    });
    const res = await postRaw(api(), unknownParent, {
      'content-type': 'application/json',
      accept: 'application/recordio',
    });
    expect(res).toMatchObject({ status: 404, body: 'Container nobody cannot be found' });
  });
});

describe('an input stream whose RecordIO framing is broken', () => {
  it('is refused 400 with the reason, not 500, whatever the length prefix', async () => {
    const headers = { 'content-type': 'application/recordio', 'message-content-type': 'application/json' };
    const record = containerIdRecord('framing');
    for (const prefix of ['x', '0', '-1', '1'.repeat(25)]) {
      const body = Buffer.concat([record, Buffer.from(`${prefix}\n{}`)]);
      const res = await postRaw(api(), body, headers);
      expect(res.status).toBe(400);
      expect(res.body).toMatch(/^Failed to decode the input stream: recordio: /);
    }
  });
});
