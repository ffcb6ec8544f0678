/**
 * LAUNCH_CONTAINER and ATTACH_CONTAINER_OUTPUT on the agent operator API
 * over real sockets, with the headers upstream's CLI sends for `task
 * attach` (`Accept: application/recordio`, `Message-Accept:
 * application/json`), protobuf records, the input through
 * ATTACH_CONTAINER_INPUT, and upstream's refusals.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../../../src/client/event-queue.js';
import { postRaw } from '../../../src/client/scheduler-client.js';
import { decodeProto, encodeProto } from '../../../src/wire/proto-codec.js';
import { frameRecord } from '../../../src/wire/recordio.js';
import type { mesos } from '../../../src/wire/generated/types.js';
import { startHarness, tick, type Harness } from './executor-harness.js';

let h: Harness;
let parent: string;

beforeAll(async () => {
  h = await startHarness({});
  await h.launch('t1', 'e1', { value: 'sleep 3600' });
  await h.acknowledge(await h.scheduler.nextUpdate('t1'));
  const running = await h.scheduler.nextUpdate('t1');
  expect(running.update.status.state).toBe('TASK_RUNNING');
  parent = running.update.status.container_status.container_id.value;
});
afterAll(async () => {
  await h?.close();
});

const api = () => new URL('/api/v1', h.agentUrl);
const JSON_CALL = { 'content-type': 'application/json', accept: 'application/json' };
/** What upstream's CLI sends for `task attach` (and `task exec`). */
const CLI_ATTACH = {
  'content-type': 'application/json',
  accept: 'application/recordio',
  'message-accept': 'application/json',
};

const nestedId = (id: string) => ({ parent: { value: parent }, value: id });

function call(type: string, payload: Record<string, unknown>): string {
  return JSON.stringify({ type, [type.toLowerCase()]: payload });
}

/** LAUNCH_CONTAINER of a nested container running `argv`, with a TTY or not. */
function launch(id: string, argv: readonly string[], tty: boolean) {
  const container = tty ? { container: { type: 'MESOS', tty_info: {} } } : {};
  const body = call('LAUNCH_CONTAINER', {
    container_id: nestedId(id),
    command: { shell: false, value: argv[0], arguments: argv },
    ...container,
  });
  return postRaw(api(), body, JSON_CALL);
}

interface Attached {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly records: Buffer[];
  readonly ended: Promise<void>;
}

function attach(containerId: Record<string, unknown>, headers: Record<string, string> = CLI_ATTACH): Promise<Attached> {
  const records: Buffer[] = [];
  let done!: () => void;
  const ended = new Promise<void>((resolve) => (done = resolve));
  const body = call('ATTACH_CONTAINER_OUTPUT', { container_id: containerId });
  const { answer } = openStream(api(), headers, body, { record: (r) => records.push(r), closed: () => done() });
  return answer.then((a) => {
    if (a.status !== 200) done();
    return { status: a.status, body: a.body, headers: a.headers, records, ended };
  });
}

/** The STDOUT and STDERR text of JSON ProcessIO records. */
function outputOf(records: readonly Buffer[]): { STDOUT: string; STDERR: string } {
  const out = { STDOUT: '', STDERR: '' };
  for (const r of records) {
    const io = JSON.parse(r.toString('utf8'));
    if (io.type === 'DATA') out[io.data.type as 'STDOUT'] += Buffer.from(io.data.data, 'base64').toString('utf8');
  }
  return out;
}

const inputRecord = (input: Record<string, unknown>) =>
  frameRecord(Buffer.from(JSON.stringify({ type: 'ATTACH_CONTAINER_INPUT', attach_container_input: input })));
const stdin = (text: string) =>
  inputRecord({
    type: 'PROCESS_IO',
    process_io: { type: 'DATA', data: { type: 'STDIN', data: Buffer.from(text).toString('base64') } },
  });

/** ATTACH_CONTAINER_INPUT as upstream's CLI streams it: the CONTAINER_ID record, then STDIN records. */
function typeInto(id: string, ...lines: string[]): Promise<number> {
  return typeIntoContainer(nestedId(id), ...lines);
}

async function typeIntoContainer(containerId: Record<string, unknown>, ...lines: string[]): Promise<number> {
  const body = Buffer.concat([inputRecord({ type: 'CONTAINER_ID', container_id: containerId }), ...lines.map(stdin)]);
  const headers = {
    'content-type': 'application/recordio',
    'message-content-type': 'application/json',
    accept: 'application/json',
  };
  return (await postRaw(api(), body, headers)).status;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await tick(10);
}

describe('LAUNCH_CONTAINER', () => {
  it('launches a nested container (200), answers 202 while it runs, and WAIT, KILL and REMOVE work on it', async () => {
    const id = randomUUID();
    expect((await launch(id, ['sleep', '1000'], false)).status).toBe(200);
    expect((await launch(id, ['sleep', '5'], true)).status).toBe(202);
    const waiting = postRaw(api(), call('WAIT_CONTAINER', { container_id: nestedId(id) }), JSON_CALL);
    await tick(20);
    const kill = call('KILL_CONTAINER', { container_id: nestedId(id), signal: 9 });
    expect((await postRaw(api(), kill, JSON_CALL)).status).toBe(200);
    expect(JSON.parse((await waiting).body).wait_container.exit_status).toBe(9);
    const remove = call('REMOVE_CONTAINER', { container_id: nestedId(id) });
    expect((await postRaw(api(), remove, JSON_CALL)).status).toBe(200);
    expect((await postRaw(api(), call('WAIT_CONTAINER', { container_id: nestedId(id) }), JSON_CALL)).status).toBe(404);
  });

  it('refuses what the model cannot do, saying why: a standalone container, resources of a nested one, DOCKER', async () => {
    const standalone = call('LAUNCH_CONTAINER', {
      container_id: { value: randomUUID() },
      command: { value: 'sleep 10' },
      resources: [{ name: 'cpus', type: 'SCALAR', scalar: { value: 0.1 } }],
    });
    const refused = await postRaw(api(), standalone, JSON_CALL);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(
      /^Standalone containers \(LAUNCH_CONTAINER without 'container_id.parent'\) are not supported/,
    );
    const withResources = call('LAUNCH_CONTAINER', {
      container_id: nestedId(randomUUID()),
      command: { value: 'sleep 10' },
      resources: [{ name: 'cpus', type: 'SCALAR', scalar: { value: 0.1 } }],
    });
    expect((await postRaw(api(), withResources, JSON_CALL)).body).toMatch(/^Resources or limits of a nested container/);
    const docker = call('LAUNCH_CONTAINER', {
      container_id: nestedId(randomUUID()),
      command: { value: 'true' },
      container: { type: 'DOCKER', docker: { image: 'alpine' } },
    });
    expect(await postRaw(api(), docker, JSON_CALL)).toMatchObject({
      status: 400,
      body: 'The provided ContainerInfo is not supported',
    });
    // A stream is asked of a call that has none: upstream's 406.
    const launchStream = call('LAUNCH_CONTAINER', { container_id: nestedId(randomUUID()), command: { value: 'true' } });
    expect(await postRaw(api(), launchStream, CLI_ATTACH)).toMatchObject({
      status: 406,
      body: 'Streaming response is not supported for LAUNCH_CONTAINER call',
    });
    const orphan = call('LAUNCH_CONTAINER', {
      container_id: { parent: { value: 'no-such-parent' }, value: 'x' },
      command: { value: 'true' },
    });
    expect(await postRaw(api(), orphan, JSON_CALL)).toMatchObject({
      status: 400,
      body: 'Parent container no-such-parent does not exist',
    });
  });
});

describe('ATTACH_CONTAINER_OUTPUT', () => {
  it("streams a TTY container's output with the CLI's headers; input goes in by ATTACH_CONTAINER_INPUT; it ends with the container", async () => {
    const id = randomUUID();
    expect((await launch(id, ['cat'], true)).status).toBe(200);
    const attached = await attach(nestedId(id));
    expect(attached.status).toBe(200);
    expect(attached.headers['content-type']).toBe('application/recordio');
    expect(attached.headers['message-content-type']).toBe('application/json');
    // A second reader hears the same output.
    const second = await attach(nestedId(id));
    expect(await typeInto(id, 'hello\n', 'again\n')).toBe(200);
    await until(() => outputOf(second.records).STDOUT === 'hello\nagain\n');
    expect(outputOf(attached.records)).toEqual({ STDOUT: 'hello\nagain\n', STDERR: '' });
    const kill = call('KILL_CONTAINER', { container_id: nestedId(id) });
    expect((await postRaw(api(), kill, JSON_CALL)).status).toBe(200);
    await attached.ended;
    await second.ended;
    // Once it has ended, it cannot be attached to: upstream's containerizer no longer knows it.
    expect(await attach(nestedId(id))).toMatchObject({ status: 500, body: `Unknown container ${parent}.${id}` });
  });

  it('writes protobuf records when Message-Accept asks for them', async () => {
    const id = randomUUID();
    expect((await launch(id, ['cat'], true)).status).toBe(200);
    const attached = await attach(nestedId(id), { ...CLI_ATTACH, 'message-accept': 'application/x-protobuf' });
    expect(attached.headers['message-content-type']).toBe('application/x-protobuf');
    expect(await typeInto(id, 'in protobuf\n')).toBe(200);
    await until(() => attached.records.length > 0);
    const io = decodeProto<mesos.v1.agent.ProcessIO>('mesos.v1.agent.ProcessIO', attached.records[0]!, 'ProcessIO');
    expect(io.ok && io.value.type).toBe('DATA');
    expect(io.ok && Buffer.from(io.value.data!.data!).toString()).toBe('in protobuf\n');
    await postRaw(api(), call('KILL_CONTAINER', { container_id: nestedId(id) }), JSON_CALL);
    await attached.ended;
  });

  it('takes the calls in protobuf, and answers protobuf records to an Accept of protobuf', async () => {
    const id = randomUUID();
    const PROTO = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };
    const protoCall = (call: mesos.v1.agent.Call) => Buffer.from(encodeProto('mesos.v1.agent.Call', call));
    const container_id = nestedId(id);
    const launched = protoCall({
      type: 'LAUNCH_CONTAINER',
      launch_container: {
        container_id,
        command: { shell: false, value: 'cat', arguments: ['cat'] },
        container: { type: 'MESOS', tty_info: {} },
      },
    });
    expect((await postRaw(api(), launched, PROTO)).status).toBe(200);
    expect((await postRaw(api(), launched, PROTO)).status).toBe(202);
    const records: Buffer[] = [];
    let done!: () => void;
    const ended = new Promise<void>((resolve) => (done = resolve));
    const body = protoCall({ type: 'ATTACH_CONTAINER_OUTPUT', attach_container_output: { container_id } });
    const { answer } = openStream(api(), PROTO, body, { record: (r) => records.push(r), closed: () => done() });
    const answered = await answer;
    expect(answered.status).toBe(200);
    expect(answered.headers['content-type']).toBe('application/x-protobuf');
    expect(await typeInto(id, 'proto in, proto out\n')).toBe(200);
    await until(() => records.length > 0);
    const io = decodeProto<mesos.v1.agent.ProcessIO>('mesos.v1.agent.ProcessIO', records[0]!, 'ProcessIO');
    expect(io.ok && Buffer.from(io.value.data!.data!).toString()).toBe('proto in, proto out\n');
    const kill = protoCall({ type: 'KILL_CONTAINER', kill_container: { container_id } });
    expect((await postRaw(api(), kill, PROTO)).status).toBe(200);
    await ended;
  });

  it('answers JSON records under Content-Type application/json to an Accept that allows JSON', async () => {
    const id = randomUUID();
    expect((await launch(id, ['cat'], true)).status).toBe(200);
    const attached = await attach(nestedId(id), JSON_CALL);
    expect(attached.status).toBe(200);
    expect(attached.headers['content-type']).toBe('application/json');
    expect(attached.headers['message-content-type']).toBeUndefined();
    await postRaw(api(), call('KILL_CONTAINER', { container_id: nestedId(id) }), JSON_CALL);
    await attached.ended;
  });

  it("a session's container can be attached to as well", async () => {
    const id = randomUUID();
    const body = call('LAUNCH_NESTED_CONTAINER_SESSION', {
      container_id: nestedId(id),
      command: { shell: false, value: 'cat', arguments: ['cat'] },
    });
    const session: Buffer[] = [];
    const { answer } = openStream(api(), CLI_ATTACH, body, { record: (r) => session.push(r), closed: () => {} });
    expect((await answer).status).toBe(200);
    const attached = await attach(nestedId(id));
    expect(attached.status).toBe(200);
    expect(await typeInto(id, 'both\n')).toBe(200);
    await until(() => outputOf(attached.records).STDOUT === 'both\n' && outputOf(session).STDOUT === 'both\n');
    expect(outputOf(attached.records).STDOUT).toBe('both\n');
    await postRaw(api(), call('KILL_CONTAINER', { container_id: nestedId(id) }), JSON_CALL);
    await attached.ended;
  });

  it('reaches a command task launched with a TTY through its container, as `task attach` does', async () => {
    const command = { value: 'cat' };
    await h.launch('tty-task', 'unused', undefined, {
      executor: undefined,
      command,
      container: { type: 'MESOS', tty_info: {} },
    });
    await h.acknowledge(await h.scheduler.nextUpdate('tty-task'));
    const running = await h.scheduler.nextUpdate('tty-task');
    expect(running.update.status.state).toBe('TASK_RUNNING');
    await h.acknowledge(running);
    // What upstream's CLI reads from the task's statuses: the executor's ContainerID, no parent.
    const containerId = running.update.status.container_status.container_id;
    expect(containerId.parent).toBeUndefined();
    const attached = await attach(containerId);
    expect(attached.status).toBe(200);
    expect(await typeIntoContainer(containerId, 'typed into the task\n')).toBe(200);
    await until(() => outputOf(attached.records).STDOUT === 'typed into the task\n');
    expect(outputOf(attached.records).STDOUT).toBe('typed into the task\n');
    // The end of its input ends `cat`, and with it the task and the stream.
    expect(await typeIntoContainer(containerId, '')).toBe(200);
    await attached.ended;
    const finished = await h.scheduler.nextUpdate('tty-task');
    expect(finished.update.status.state).toBe('TASK_FINISHED');
    await h.acknowledge(finished);
  });

  it("refuses as upstream's agent: 404, 500 with its containerizer's words, 406", async () => {
    expect(await attach({ value: 'no-such-container' })).toMatchObject({
      status: 404,
      body: 'Container no-such-container cannot be found',
    });
    expect(await attach(nestedId('never-launched'))).toMatchObject({
      status: 500,
      body: `Unknown container ${parent}.never-launched`,
    });
    const plain = randomUUID();
    expect((await launch(plain, ['sleep', '1000'], false)).status).toBe(200);
    const noTty = { status: 500, body: 'I/O switchboard server was disabled for this container' };
    expect(await attach(nestedId(plain))).toMatchObject(noTty);
    // The task's own container has no TTY: what upstream's CLI reports as a task launched without one.
    expect(await attach({ value: parent })).toMatchObject(noTty);
    expect(await attach(nestedId(plain), { ...CLI_ATTACH, accept: 'text/plain' })).toMatchObject({
      status: 406,
      body: "Expecting 'Accept' to allow application/json or application/x-protobuf or application/recordio",
    });
    expect(await attach(nestedId(plain), { ...CLI_ATTACH, 'message-accept': 'text/plain' })).toMatchObject({
      status: 406,
      body: "Expecting 'Message-Accept' to allow application/json or application/x-protobuf",
    });
    expect(await attach(nestedId(plain), { ...JSON_CALL, 'message-accept': 'application/json' })).toMatchObject({
      status: 406,
      body: "Expecting 'Message-Accept' to be not set for non-streaming responses",
    });
  });
});
