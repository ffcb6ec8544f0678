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
import { openStream } from '../../../src/client/event-queue.js';
import { postRaw } from '../../../src/client/scheduler-client.js';
import { Connections } from '../../../src/http/connections.js';
import { RequestParser, type Step } from '../../../src/http/engine/reader.js';
import { createEngineServer, type EngineOptions } from '../../../src/http/engine/socket.js';
import { startHarness, type Harness } from '../agent/executor-harness.js';

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
    const headers = {
      host: 'localhost',
      ...(payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
    };
    const req = http.request({ socketPath: h.cluster.engineSocket!, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text,
          json: res.headers['content-type'] === 'application/json' ? JSON.parse(text) : undefined,
        }),
      );
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
    socket.write(
      `POST /v1.43/exec/${id}/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    if (input !== undefined) socket.end(input);
  });
}

async function exec(cmd: readonly string[], tty = false, stdin = false): Promise<string> {
  const created = await request('POST', `/containers/cluster-${engineTask}/exec`, {
    AttachStdin: stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: tty,
    Cmd: cmd,
    Env: [],
  });
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
    expect(found.json).toMatchObject({
      Name: `/cluster-${engineTask}`,
      State: { Running: true },
      Config: { Image: 'alpine:3.19' },
    });
    // The engine's own id: 64 hex digits, not the ContainerID; it names the container too.
    expect(found.json.Id).toMatch(/^[0-9a-f]{64}$/);
    expect((await request('GET', `/containers/${found.json.Id}/json`)).json.Name).toBe(`/cluster-${engineTask}`);
    expect(await request('GET', `/containers/cluster-${commandTask}/json`)).toMatchObject({
      status: 404,
      json: { message: `No such container: cluster-${commandTask}` },
    });
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
    expect(refused).toMatchObject({
      stdout: '',
      stderr: 'Argument 2 of the command is 131072 bytes; one argument holds at most 131071 (Argument list too long)\n',
    });
    // Never started: not running, and 126, as the engine reports an exec that could not start.
    expect((await request('GET', `/exec/${tooLong}/json`)).json).toMatchObject({ Running: false, ExitCode: 126 });
  });

  it('refuses an exec without a command, and unknown exec instances', async () => {
    expect((await request('POST', `/containers/cluster-${engineTask}/exec`, { Cmd: [] })).json).toEqual({
      message: 'No exec command specified',
    });
    expect((await request('GET', '/exec/0123/json')).status).toBe(404);
  });
});

describe('a task exec session into an engine task', () => {
  it('goes through the engine socket, as the exec helper does: create, start, inspect', async () => {
    const id = randomUUID();
    const call = {
      type: 'LAUNCH_NESTED_CONTAINER_SESSION',
      launch_nested_container_session: {
        container_id: { parent: { value: engineTask }, value: id },
        command: { shell: false, value: 'sh', arguments: ['sh', '-c', 'echo via engine; exit 4'] },
      },
    };
    let out = '';
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    const headers = {
      'content-type': 'application/json',
      accept: 'application/recordio',
      'message-accept': 'application/json',
    };
    const { answer } = openStream(new URL('/api/v1', h.agentUrl), headers, JSON.stringify(call), {
      record: (record) => (out += Buffer.from(JSON.parse(record.toString()).data.data, 'base64').toString()),
      closed: () => ended(),
    });
    expect((await answer).status).toBe(200);
    await done;
    expect(out).toBe('via engine\n');
    const wait = JSON.stringify({
      type: 'WAIT_CONTAINER',
      wait_container: { container_id: { parent: { value: engineTask }, value: id } },
    });
    const waited = await postRaw(new URL('/api/v1', h.agentUrl), wait, {
      'content-type': 'application/json',
      accept: 'application/json',
    });
    expect(JSON.parse(waited.body).wait_container.exit_status).toBe(4 << 8);
    // The session is the helper's; the command ran as an exec of the engine, a container of its own.
    const launches = h.cluster.cluster.trace
      .entries()
      .filter((e) => e.line.includes('container:launch-nested'))
      .map((e) => e.line);
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
        JSON.stringify({
          type: 'UPDATE_CONTAINER_MEMORY_LIMIT',
          update_container_memory_limit: { container_id: { value }, memory_limit: { value: 256 } },
        }),
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
      await bare.launch('web', 'unused', undefined, {
        executor: undefined,
        command: { value: './serve' },
        container: { type: 'DOCKER', docker: { image: 'alpine' } },
      });
      const failed = await bare.scheduler.nextUpdate('web');
      expect(failed.update.status).toMatchObject({
        state: 'TASK_FAILED',
        source: 'SOURCE_AGENT',
        reason: 'REASON_CONTAINER_LAUNCH_FAILED',
      });
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

  it('names a container whose name holds a line break on one line, quoted, in its 404', async () => {
    for (const method of ['GET /containers/%0a/json', 'POST /containers/a%0d%0ab/exec']) {
      const answer = await raw(`${method} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n`);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { message: string };
      expect(answer).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
      expect(body.message).toMatch(/^No such container: "[^\n\r]*"$/);
    }
    expect(await request('GET', '/_ping')).toMatchObject({ status: 200, text: 'OK' });
  });

  it('takes a create body of null as an empty one, and refuses JSON that is no object with 400', async () => {
    const create = (body: string) =>
      raw(
        `POST /containers/cluster-${engineTask}/exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
    expect(await create('null')).toContain('{"message":"No exec command specified"}');
    for (const body of ['[]', '"x"', '1', 'true'])
      expect(await create(body)).toContain('{"message":"the exec create body is no JSON object"}');
    expect(await request('GET', '/_ping')).toMatchObject({ status: 200, text: 'OK' });
  });

  it('answers a head or a declared body past its limits with 431 or 413, and closes', async () => {
    expect(await raw(`GET /_ping HTTP/1.1\r\nX-Big: ${'x'.repeat(70 * 1024)}`)).toMatch(
      /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*Connection: close/,
    );
    expect(await raw(`POST /containers/x/exec HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n{`)).toMatch(
      /^HTTP\/1\.1 413 Payload Too Large\r\n/,
    );
  });
});

describe('HEAD on the engine socket', () => {
  it('answers with the head alone, so that the next answer on the connection is in step', async () => {
    const answer = await raw(
      'HEAD /exec/none/json HTTP/1.1\r\nHost: localhost\r\n\r\nGET /_ping HTTP/1.1\r\nHost: localhost\r\n\r\n',
    );
    expect(answer).toMatch(
      /^HTTP\/1\.1 404 Not Found\r\n[^]*Content-Length: \d+\r\n[^]*\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nOK$/,
    );
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
    expect(await raw(`${head}zz\r\n{}\r\n0\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 400 Bad Request\r\n[^]*Connection: close\r\n[^]*\{"message":"malformed chunked encoding"\}$/,
    );
  });
});

/** What a raw connection gets, and whether the engine closed it, within `waitMs` (a bound, never reached when all goes well). */
function exchange(socketPath: string, bytes: string, waitMs = 10_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let text = '';
    const done = (closed: boolean) => (clearTimeout(timer), socket.destroy(), resolve({ text, closed }));
    const timer = setTimeout(() => done(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (text += c));
    socket.on('error', reject);
    socket.on('close', () => done(true));
    if (bytes !== '') socket.write(bytes);
  });
}

/** An engine of its own on the cluster, with small limits: its timeouts in milliseconds, its bound of idle execs. */
async function smallEngine(
  limits: Pick<EngineOptions, 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxIdleExecs' | 'maxIdleExecBytes'>,
) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clustersim-engine-'));
  const socketPath = path.join(dir, 'engine.sock');
  // Its own connection ids: the cluster's server delivers nothing to them (an exec's output is dropped).
  const server = createEngineServer({
    driver: h.cluster.driver,
    connections: new Connections('test-engine-'),
    ...limits,
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  return { socketPath, close };
}

function rawRequest(method: string, target: string, body?: object): string {
  const payload = body === undefined ? '' : JSON.stringify(body);
  return `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
}

/** One request on a connection of its own to `socketPath`, the answer's status and JSON body. */
function ask(
  socketPath: string,
  method: string,
  target: string,
  body?: object,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const headers = {
      host: 'localhost',
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
    };
    const req = http.request({ socketPath, path: target, method, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('the engine socket against a slow or dead client', () => {
  it('answers 408 with a one-line message and closes when the head or the body does not come in time', async () => {
    const engine = await smallEngine({ headersTimeoutMs: 100, requestTimeoutMs: 300 });
    try {
      const head = await exchange(engine.socketPath, 'GET /_ping HTTP/1.1\r\nHost: localhost\r\n');
      expect(head.closed).toBe(true);
      expect(head.text).toMatch(
        /^HTTP\/1\.1 408 Request Timeout\r\n[^]*Connection: close\r\n\r\n\{"message":"the request's head did not come within 0\.1 s"\}$/,
      );
      const body = await exchange(
        engine.socketPath,
        'POST /containers/x/exec HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n{',
      );
      expect(body.closed).toBe(true);
      expect(body.text).toMatch(
        /^HTTP\/1\.1 408 Request Timeout\r\n[^]*\{"message":"the whole request did not come within 0\.3 s"\}$/,
      );
      // Not a byte, or nothing after an answer: closed without a word, as an idle keep-alive connection is.
      expect(await exchange(engine.socketPath, '')).toEqual({ text: '', closed: true });
      const kept = await exchange(engine.socketPath, 'GET /_ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
      expect(kept.closed).toBe(true);
      expect(kept.text).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nOK$/);
    } finally {
      await engine.close();
    }
  });

  it('never cuts an exec stream, which is no request being read', async () => {
    const engine = await smallEngine({ headersTimeoutMs: 50, requestTimeoutMs: 100 });
    try {
      const created = await ask(engine.socketPath, 'POST', `/containers/cluster-${engineTask}/exec`, {
        Cmd: ['cat'],
        AttachStdin: true,
      });
      const socket = net.connect(engine.socketPath);
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => (text += c));
      let closed = false;
      socket.on('close', () => (closed = true));
      socket.write(rawRequest('POST', `/exec/${created.json.Id}/start`, { Detach: false }));
      // Four times the request timeout: a timer still armed would have closed the stream by then.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(closed).toBe(false);
      expect((await ask(engine.socketPath, 'GET', `/exec/${created.json.Id}/json`)).json).toMatchObject({
        Running: true,
        ExitCode: null,
      });
      // Its input still reaches it: the end of it ends `cat`.
      socket.end();
      const exitCode = await until(
        async () => (await ask(engine.socketPath, 'GET', `/exec/${created.json.Id}/json`)).json.ExitCode,
      );
      expect(exitCode).toBe(0);
      socket.destroy();
    } finally {
      await engine.close();
    }
  });
});

/** `look` until it gives a number, at most 100 times 20 ms apart (a bound, never reached when all goes well). */
async function until(look: () => Promise<number | null>): Promise<number | null> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = await look();
    if (typeof value === 'number') return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

describe('the execs the engine keeps', () => {
  it('are the running ones and the newest of the others: the oldest ended ones are forgotten (404)', async () => {
    const engine = await smallEngine({ maxIdleExecs: 3 });
    const create = async (cmd: string[], stdin = false) =>
      (await ask(engine.socketPath, 'POST', `/containers/cluster-${engineTask}/exec`, { Cmd: cmd, AttachStdin: stdin }))
        .json.Id as string;
    const inspect = (id: string) => ask(engine.socketPath, 'GET', `/exec/${id}/json`);
    const streams: net.Socket[] = [];
    const start = (id: string) => {
      const socket = net.connect(engine.socketPath);
      socket.on('error', () => {});
      socket.write(rawRequest('POST', `/exec/${id}/start`, { Detach: false }));
      streams.push(socket);
    };
    try {
      // The oldest exec of all runs (`cat` waits for its input) and stays.
      const running = await create(['cat'], true);
      start(running);
      const ended: string[] = [];
      for (let i = 0; i < 5; i++) {
        const id = await create(['sh', '-c', `exit ${10 + i}`]);
        start(id);
        expect(await until(async () => (await inspect(id)).json.ExitCode)).toBe(10 + i);
        ended.push(id);
      }
      for (const id of ended.slice(0, 2))
        expect(await inspect(id)).toEqual({ status: 404, json: { message: `No such exec instance: ${id}` } });
      for (const [i, id] of ended.entries())
        if (i >= 2) expect((await inspect(id)).json).toMatchObject({ Running: false, ExitCode: 10 + i });
      expect((await inspect(running)).json).toMatchObject({ Running: true, ExitCode: null });
      // Execs created and never started count too: they push the ended ones out, the running one stays.
      const idle = [await create(['true']), await create(['true']), await create(['true']), await create(['true'])];
      expect((await inspect(ended[4]!)).status).toBe(404);
      expect((await inspect(idle[0]!)).status).toBe(404);
      for (const id of idle.slice(1))
        expect((await inspect(id)).json).toMatchObject({ Running: false, ExitCode: null });
      expect((await inspect(running)).json).toMatchObject({ Running: true, ExitCode: null });
    } finally {
      for (const socket of streams) socket.destroy();
      await engine.close();
    }
  });

  it('hold their commands within a number of bytes too, the oldest idle ones going first', async () => {
    const engine = await smallEngine({ maxIdleExecBytes: 3100 });
    const create = async (argument: string) =>
      (await ask(engine.socketPath, 'POST', `/containers/cluster-${engineTask}/exec`, { Cmd: ['echo', argument] })).json
        .Id as string;
    try {
      // 1,004 bytes each (echo and its argument): three fit in 3,100 bytes, not four.
      const ids = [await create('a'.repeat(1000)), await create('b'.repeat(1000)), await create('c'.repeat(1000))];
      expect((await ask(engine.socketPath, 'GET', `/exec/${ids[0]}/json`)).status).toBe(200);
      ids.push(await create('d'.repeat(1000)));
      expect((await ask(engine.socketPath, 'GET', `/exec/${ids[0]}/json`)).status).toBe(404);
      for (const id of ids.slice(1)) expect((await ask(engine.socketPath, 'GET', `/exec/${id}/json`)).status).toBe(200);
    } finally {
      await engine.close();
    }
  });
});

/** Every request `parser` finds in `bytes` pushed in pieces of the sizes `sizes` gives, in turn. */
function parseInPieces(bytes: Buffer, sizes: (index: number) => number): Step[] {
  const parser = new RequestParser();
  const found: Step[] = [];
  for (let at = 0, index = 0; at < bytes.length; index++) {
    const size = sizes(index);
    parser.push(bytes.subarray(at, at + size));
    at += size;
    for (let step = parser.next(); step !== 'incomplete'; step = parser.next()) {
      if (step === 'head') continue;
      found.push(step);
      // A refusal ends the connection.
      if ('status' in step) return found;
    }
  }
  return found;
}

/** `bytes` written to a connection of the engine in pieces of `piece` bytes; resolves with the first whole answer. */
function sendInPieces(bytes: Buffer, piece: number): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(h.cluster.engineSocket!);
    let got = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      const end = got.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(got.subarray(0, end).toString())?.[1]);
      if (end < 0 || got.length < end + 4 + length) return;
      socket.destroy();
      resolve({ status: Number(got.subarray(9, 12).toString()), json: JSON.parse(got.subarray(end + 4).toString()) });
    });
    socket.on('error', reject);
    for (let at = 0; at < bytes.length; at += piece) socket.write(bytes.subarray(at, at + piece));
  });
}

describe('a request arriving in many small pieces', () => {
  const body = JSON.stringify({ Cmd: ['echo', 'a ünïcode body split anywhere'] });
  const chunked = `1\r\n${body[0]}\r\n${(Buffer.byteLength(body) - 1).toString(16)};ext=1\r\n${body.slice(1)}\r\n0\r\n\r\n`;
  const stream = Buffer.from(
    `POST /v1.43/containers/c/exec HTTP/1.1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
      `POST /containers/c/exec HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}` +
      'GET /_ping HTTP/1.1\r\n\r\n',
  );

  it('is parsed as when it comes whole, whatever its pieces (one byte at a time, or of uneven sizes)', () => {
    const whole = parseInPieces(stream, () => stream.length);
    expect(whole).toEqual([
      { method: 'POST', path: '/containers/c/exec', body },
      { method: 'POST', path: '/containers/c/exec', body },
      { method: 'GET', path: '/_ping', body: '' },
    ]);
    expect(parseInPieces(stream, () => 1)).toEqual(whole);
    expect(parseInPieces(stream, (i) => [3, 1, 7, 2, 13][i % 5]!)).toEqual(whole);
  });

  it('takes a body of almost 16 MiB in 4 KiB pieces, with a length or chunked, as the body it is', async () => {
    // A pattern that a piece lost, repeated or out of place would break.
    const argument = Array.from({ length: (16 * 1024 * 1024) / 8 - 64 }, (_, i) =>
      (i % 10_000_000).toString(36).padStart(8, '.'),
    ).join('');
    const payload = JSON.stringify({ Cmd: ['echo', argument] });
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(16 * 1024 * 1024);
    const head = `POST /containers/cluster-${engineTask}/exec HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n`;
    const chunks = payload
      .match(/[^]{1,1000}/g)!
      .map((c) => `${c.length.toString(16)}\r\n${c}\r\n`)
      .join('');
    for (const wire of [
      `${head}Content-Length: ${payload.length}\r\n\r\n${payload}`,
      `${head}Transfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`,
    ]) {
      const created = await sendInPieces(Buffer.from(wire), 4096);
      expect(created.status).toBe(201);
      const inspected = await request('GET', `/exec/${created.json.Id}/json`);
      expect(inspected.json.ProcessConfig.arguments[0] === argument).toBe(true);
    }
  });
});

describe('a client that does not read its answers', () => {
  it('is not read from until it does, so that its answers do not pile up; then all come', async () => {
    const engine = await smallEngine({});
    try {
      const created = await ask(engine.socketPath, 'POST', `/containers/cluster-${engineTask}/exec`, {
        Cmd: ['echo', 'x'.repeat(65_536)],
      });
      // 300 inspects of 16 KiB each (4.8 MiB, past what the kernel buffers), each answered with 64 KiB: 19 MiB unread.
      const one = `GET /exec/${created.json.Id}/json HTTP/1.1\r\nHost: localhost\r\nX-Pad: ${'p'.repeat(16_384)}\r\n\r\n`;
      const socket = net.connect(engine.socketPath);
      socket.write(one.repeat(300));
      // Read everything, the engine would have emptied the client's queue at once; it stops reading instead.
      for (let wait = 0; wait < 50 && socket.writableLength > 0; wait++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(socket.writableLength).toBeGreaterThan(0);
      const answers = await new Promise<number>((resolve, reject) => {
        let got = Buffer.alloc(0);
        let count = 0;
        socket.on('data', (c: Buffer) => {
          got = Buffer.concat([got, c]);
          for (let end = got.indexOf('\r\n\r\n'); end >= 0; end = got.indexOf('\r\n\r\n')) {
            const length = Number(/content-length: (\d+)/i.exec(got.subarray(0, end).toString())![1]);
            if (got.length < end + 4 + length) break;
            expect(got.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
            got = got.subarray(end + 4 + length);
            if (++count === 300) resolve(count);
          }
        });
        socket.on('error', reject);
      });
      expect(answers).toBe(300);
      socket.destroy();
    } finally {
      await engine.close();
    }
  });
});
