/**
 * The simulated container engine's API on its Unix socket, with a plain
 * HTTP client as the spec's exec helper uses it: ping and version, a DOCKER
 * task's container `cluster-<ContainerID>`, exec create, start (the
 * connection becomes the exec's stream: multiplexed frames, or raw with a
 * terminal, input from the client's writes), and inspect until ExitCode.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { openStream } from '../../src/client/event-queue.js';
import { postRaw } from '../../src/client/scheduler-client.js';
import { startHarness, type Harness } from './executor-harness.js';

let h: Harness;
let engineTask: string;
let commandTask: string;

async function runningContainer(taskId: string): Promise<string> {
  await h.acknowledge(await h.scheduler.nextUpdate(taskId));
  const running = await h.scheduler.nextUpdate(taskId);
  expect(running.update.status.state).toBe('TASK_RUNNING');
  return running.update.status.container_status.container_id.value;
}

beforeAll(async () => {
  h = await startHarness({ recordTrace: true });
  const docker = { container: { type: 'DOCKER', docker: { image: 'alpine:3.19' } } };
  await h.launch('web', 'unused', undefined, { executor: undefined, command: { value: './serve' }, ...docker });
  engineTask = await runningContainer('web');
  await h.launch('plain', 'unused', undefined, { executor: undefined, command: { value: './serve' } });
  commandTask = await runningContainer('plain');
});
afterAll(async () => {
  await h?.close();
});

function request(method: string, path: string, body?: object): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { host: 'localhost', ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) };
    const req = http.request({ socketPath: h.cluster.engineSocket!, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: res.headers['content-type'] === 'application/json' ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** POST /exec/{id}/start on a raw connection; writes `input`, half-closes, and collects what comes back. */
function start(id: string, tty: boolean, input?: string): Promise<{ head: string; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(h.cluster.engineSocket!);
    const body = JSON.stringify({ Detach: false, Tty: tty });
    let raw = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => (raw = Buffer.concat([raw, c])));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = raw.indexOf('\r\n\r\n');
      const head = raw.subarray(0, end).toString();
      let rest = raw.subarray(end + 4);
      const out = { head, stdout: '', stderr: '' };
      if (tty) return resolve({ ...out, stdout: rest.toString() });
      while (rest.length >= 8) {
        const size = rest.readUInt32BE(4);
        const text = rest.subarray(8, 8 + size).toString();
        if (rest[0] === 1) out.stdout += text;
        else out.stderr += text;
        rest = rest.subarray(8 + size);
      }
      resolve(out);
    });
    socket.write(`POST /v1.43/exec/${id}/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    if (input !== undefined) socket.end(input);
  });
}

async function exec(cmd: readonly string[], tty = false, stdin = false): Promise<string> {
  const created = await request('POST', `/containers/cluster-${engineTask}/exec`, { AttachStdin: stdin, AttachStdout: true, AttachStderr: true, Tty: tty, Cmd: cmd, Env: [] });
  expect(created.status).toBe(201);
  return created.json.Id;
}

describe('the container engine socket', () => {
  it('answers ping and version, and is open to its owner only', async () => {
    expect(await request('GET', '/_ping')).toMatchObject({ status: 200, text: 'OK' });
    expect((await request('GET', '/version')).json).toMatchObject({ ApiVersion: '1.43' });
    expect(statSync(h.cluster.engineSocket!).mode & 0o777).toBe(0o600);
  });

  it('knows the containers of DOCKER tasks only, by the name cluster-<ContainerID>', async () => {
    const found = await request('GET', `/containers/cluster-${engineTask}/json`);
    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({ Name: `/cluster-${engineTask}`, State: { Running: true }, Config: { Image: 'alpine:3.19' } });
    // The engine's own id: 64 hex digits, not the ContainerID; it names the container too.
    expect(found.json.Id).toMatch(/^[0-9a-f]{64}$/);
    expect((await request('GET', `/containers/${found.json.Id}/json`)).json.Name).toBe(`/cluster-${engineTask}`);
    expect(await request('GET', `/containers/cluster-${commandTask}/json`)).toMatchObject({ status: 404, json: { message: `No such container: cluster-${commandTask}` } });
    expect((await request('POST', `/containers/cluster-${commandTask}/exec`, { Cmd: ['true'] })).status).toBe(404);
  });

  it('runs an exec: its output multiplexed on the start connection, its exit code on inspect', async () => {
    const id = await exec(['sh', '-c', 'echo out; nothing-here; exit 3']);
    expect((await request('GET', `/exec/${id}/json`)).json).toMatchObject({ Running: false, ExitCode: null });
    const streamed = await start(id, false);
    expect(streamed.head).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(streamed).toMatchObject({ stdout: 'out\n', stderr: 'sh: 1: nothing-here: not found\n' });
    expect((await request('GET', `/exec/${id}/json`)).json).toMatchObject({ Running: false, ExitCode: 3 });
    expect((await request('POST', `/exec/${id}/start`, { Detach: false })).status).toBe(409);
  });

  it('with a terminal and standard input: the client writes are the input, the output is raw', async () => {
    const id = await exec(['cat'], true, true);
    expect(await start(id, true, 'typed on the socket\n')).toMatchObject({ stdout: 'typed on the socket\n' });
    expect((await request('GET', `/exec/${id}/json`)).json.ExitCode).toBe(0);
  });

  it('runs a pipeline of 20,000 commands; an argument of 128 KiB fails to start, the reason on stderr', async () => {
    const long = await exec(['sh', '-c', `echo a${' | cat'.repeat(20_000)}`]);
    expect(await start(long, false)).toMatchObject({ stdout: 'a\n', stderr: '' });
    expect((await request('GET', `/exec/${long}/json`)).json.ExitCode).toBe(0);
    const tooLong = await exec(['sh', '-c', 'x'.repeat(131_072)]);
    const refused = await start(tooLong, false);
    expect(refused).toMatchObject({ stdout: '', stderr: 'Argument 2 of the command is 131072 bytes; one argument holds at most 131071 (Argument list too long)\n' });
    // Never started: not running, and 126, as the engine reports an exec that could not start.
    expect((await request('GET', `/exec/${tooLong}/json`)).json).toMatchObject({ Running: false, ExitCode: 126 });
  });

  it('refuses an exec without a command, and unknown exec instances', async () => {
    expect((await request('POST', `/containers/cluster-${engineTask}/exec`, { Cmd: [] })).json).toEqual({ message: 'No exec command specified' });
    expect((await request('GET', '/exec/0123/json')).status).toBe(404);
  });
});

describe('a task exec session into an engine task', () => {
  it('goes through the engine socket, as the exec helper does: create, start, inspect', async () => {
    const id = randomUUID();
    const call = {
      type: 'LAUNCH_NESTED_CONTAINER_SESSION',
      launch_nested_container_session: { container_id: { parent: { value: engineTask }, value: id }, command: { shell: false, value: 'sh', arguments: ['sh', '-c', 'echo via engine; exit 4'] } },
    };
    let out = '';
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const headers = { 'content-type': 'application/json', accept: 'application/recordio', 'message-accept': 'application/json' };
    const { answer } = openStream(new URL('/api/v1', h.agentUrl), headers, JSON.stringify(call), {
      record: (record) => (out += Buffer.from(JSON.parse(record.toString()).data.data, 'base64').toString()),
      closed: () => ended(),
    });
    expect((await answer).status).toBe(200);
    await done;
    expect(out).toBe('via engine\n');
    const wait = JSON.stringify({ type: 'WAIT_CONTAINER', wait_container: { container_id: { parent: { value: engineTask }, value: id } } });
    const waited = await postRaw(new URL('/api/v1', h.agentUrl), wait, { 'content-type': 'application/json', accept: 'application/json' });
    expect(JSON.parse(waited.body).wait_container.exit_status).toBe(4 << 8);
    // The session is the helper's; the command ran as an exec of the engine, a container of its own.
    const launches = h.cluster.cluster.trace.entries().filter((e) => e.line.includes('container:launch-nested')).map((e) => e.line);
    expect(launches.some((l) => l.includes(id) && l.includes('"external":true'))).toBe(true);
    expect(launches.some((l) => !l.includes(id) && l.includes('echo via engine'))).toBe(true);
  });
});

describe('UPDATE_CONTAINER_MEMORY_LIMIT on an engine task', () => {
  it('takes the ContainerID only: the engine container id, its name and the image are refused (400)', async () => {
    const engineId = (await request('GET', `/containers/cluster-${engineTask}/json`)).json.Id as string;
    const update = (value: string) =>
      postRaw(
        new URL('/api/v1', h.agentUrl),
        JSON.stringify({ type: 'UPDATE_CONTAINER_MEMORY_LIMIT', update_container_memory_limit: { container_id: { value }, memory_limit: { value: 256 } } }),
        { 'content-type': 'application/json', accept: 'application/json' },
      );
    for (const [id, what] of [
      [engineId, 'an engine container id'],
      [`cluster-${engineTask}`, 'an engine container name'],
      ['alpine:3.19', 'an engine image'],
    ]) {
      const res = await update(id!);
      expect(res.status, id).toBe(400);
      expect(res.body).toContain(`is ${what}`);
    }
    expect((await update(engineTask)).status).toBe(200);
  });
});

describe('--containerizers mesos', () => {
  it('runs no engine: a DOCKER task fails to launch, as no containerizer of the agent supports it', async () => {
    const bare = await startHarness({ containerizers: 'mesos' });
    try {
      expect(bare.cluster.engineSocket).toBeUndefined();
      await bare.launch('web', 'unused', undefined, { executor: undefined, command: { value: './serve' }, container: { type: 'DOCKER', docker: { image: 'alpine' } } });
      const failed = await bare.scheduler.nextUpdate('web');
      expect(failed.update.status).toMatchObject({ state: 'TASK_FAILED', source: 'SOURCE_AGENT', reason: 'REASON_CONTAINER_LAUNCH_FAILED' });
      // A task without a container runs as before.
      await bare.launch('plain', 'unused', undefined, { executor: undefined, command: { value: './serve' } });
      expect((await bare.scheduler.nextUpdate('plain')).update.status.state).toBe('TASK_STARTING');
    } finally {
      await bare.close();
    }
  });
});

describe('--work-dir', () => {
  it('is made when it is not there yet, the engine socket in it', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'clustersim-test-'));
    const workDir = path.join(base, 'not', 'yet');
    const started = await startHarness({ workDir });
    try {
      expect(started.cluster.engineSocket).toBe(path.join(workDir, 'engine.sock'));
      expect(statSync(started.cluster.engineSocket!).isSocket()).toBe(true);
    } finally {
      await started.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
});

/** One raw request on a connection of its own; what comes back before the engine closes it or 200 ms pass. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(h.cluster.engineSocket!);
    let text = '';
    const done = () => (socket.destroy(), resolve(text));
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (text += c));
    socket.on('error', reject);
    socket.on('close', done);
    setTimeout(done, 200);
    socket.write(bytes);
  });
}

describe('the engine socket under requests no engine client sends', () => {
  it('refuses an escape that is none in a container name with 400, and keeps serving', async () => {
    for (const name of ['%', '%zz', '%E0%A4%A', '%ed%a0%80']) {
      const answer = await raw(`GET /containers/${name}/json HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(answer).toContain('{"message":"invalid URL escape in ');
    }
    expect(await request('GET', '/_ping')).toMatchObject({ status: 200, text: 'OK' });
  });

  it('takes a create body of null as an empty one, and refuses JSON that is no object with 400', async () => {
    const create = (body: string) => raw(`POST /containers/cluster-${engineTask}/exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(await create('null')).toContain('{"message":"No exec command specified"}');
    for (const body of ['[]', '"x"', '1', 'true']) expect(await create(body)).toContain('{"message":"the exec create body is no JSON object"}');
    expect(await request('GET', '/_ping')).toMatchObject({ status: 200, text: 'OK' });
  });

  it('answers a head or a declared body past its limits with 431 or 413, and closes', async () => {
    expect(await raw(`GET /_ping HTTP/1.1\r\nX-Big: ${'x'.repeat(70 * 1024)}`)).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*Connection: close/);
    expect(await raw(`POST /containers/x/exec HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n{`)).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
  });
});

describe('HEAD on the engine socket', () => {
  it('answers with the head alone, so that the next answer on the connection is in step', async () => {
    const answer = await raw('HEAD /exec/none/json HTTP/1.1\r\nHost: localhost\r\n\r\nGET /_ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 Not Found\r\n[^]*Content-Length: \d+\r\n[^]*\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nOK$/);
  });
});

describe('a chunked request body on the engine socket', () => {
  it('is read as the body it encodes; a malformed one is 400, and the connection closes', async () => {
    const body = JSON.stringify({ Cmd: ['echo', 'chunked'] });
    const chunks = `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)};x=y\r\n${body.slice(10)}\r\n0\r\n\r\n`;
    const head = `POST /containers/cluster-${engineTask}/exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    // The next request on the connection is answered too: the chunks were the body, no request of their own.
    const answer = await raw(`${head}${chunks}GET /_ping HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 201 Created\r\n[^]*\{"Id":"[0-9a-f]{64}"\}HTTP\/1\.1 200 OK\r\n[^]*OK$/);
    expect(await raw(`${head}zz\r\n{}\r\n0\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[^]*Connection: close\r\n[^]*\{"message":"malformed chunked encoding"\}$/);
  });
});
