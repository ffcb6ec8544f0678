/**
 * A task exec session, the client side, as the spec's steps 1-5 have it:
 * find the running task and its container through the master's `/tasks`,
 * its agent through `/slaves`, launch a nested container session on the
 * agent (output arrives as ProcessIO DATA records), feed it standard input
 * with ATTACH_CONTAINER_INPUT (a probe holding the CONTAINER_ID record,
 * then a chunked stream with heartbeats every 30 s and an empty STDIN
 * record at the end), and WAIT_CONTAINER for its wait status. Plain HTTP
 * and JSON, so it works against a real cluster as against clustersim.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { frameRecord } from '../wire/recordio.js';
import { openStream } from './event-queue.js';
import { postRaw } from './scheduler-client.js';

/** Heartbeats on the input stream, as upstream's CLI sends them. */
const INPUT_HEARTBEAT_MS = 30_000;

export interface ExecOptions {
  readonly masterUrl: string;
  readonly taskId: string;
  readonly argv: readonly string[];
  readonly tty?: boolean;
  /** Standard input to forward (interactive); without, none is attached, as upstream's client does. */
  readonly input?: AsyncIterable<Uint8Array | string>;
  readonly user?: string;
  readonly stdout: (data: Buffer) => void;
  readonly stderr: (data: Buffer) => void;
}

export class ExecError extends Error {}

interface Located {
  readonly agentUrl: URL;
  readonly parent: string;
}

/** Steps 1 and 2: the running task's container, and its agent's address. */
export async function locateTask(masterUrl: string, taskId: string): Promise<Located> {
  const tasks = await getJson(new URL(`/tasks?task_id=${encodeURIComponent(taskId)}`, masterUrl));
  const task = (tasks.tasks ?? []).find((t: any) => t.id === taskId && t.state === 'TASK_RUNNING');
  if (task === undefined) throw new ExecError(`No running task '${taskId}' on the master at ${masterUrl}`);
  const parent = (task.statuses ?? [])
    .map((s: any) => s.container_status?.container_id?.value)
    .find((v: unknown) => typeof v === 'string');
  if (parent === undefined) throw new ExecError(`Task '${taskId}' has no container id in its statuses`);
  const slaves = await getJson(new URL('/slaves', masterUrl));
  const agent = (slaves.slaves ?? []).find((s: any) => s.id === task.slave_id);
  const address = /@(.+)$/.exec(agent?.pid ?? '')?.[1];
  if (address === undefined)
    throw new ExecError(`The agent '${task.slave_id}' of task '${taskId}' is not known to the master`);
  return { agentUrl: new URL('/api/v1', `http://${address}`), parent };
}

/** Steps 1 to 5; resolves with the command's exit code (128 + N for signal N). */
export async function execInTask(options: ExecOptions): Promise<number> {
  const { agentUrl, parent } = await locateTask(options.masterUrl, options.taskId);
  const containerId = { parent: { value: parent }, value: randomUUID() };
  await launchSession(agentUrl, containerId, options);
  const status = await waitContainer(agentUrl, containerId);
  return (status & 0x7f) === 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f);
}

type ContainerId = { readonly parent: { readonly value: string }; readonly value: string };

/** Step 3 (and 4 alongside): resolves when the output stream ends. */
async function launchSession(agentUrl: URL, containerId: ContainerId, options: ExecOptions): Promise<void> {
  const [file, ...rest] = options.argv;
  const command = {
    shell: false,
    value: file,
    arguments: [file, ...rest],
    ...(options.user === undefined ? {} : { user: options.user }),
  };
  const call = {
    type: 'LAUNCH_NESTED_CONTAINER_SESSION',
    launch_nested_container_session: {
      container_id: containerId,
      command,
      ...(options.tty === true ? { container: { type: 'MESOS', tty_info: {} } } : {}),
    },
  };
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  const headers = {
    'content-type': 'application/json',
    accept: 'application/recordio',
    'message-accept': 'application/json',
    'accept-encoding': 'gzip',
  };
  const { answer } = openStream(agentUrl, headers, JSON.stringify(call), {
    record: (record) => {
      const io = JSON.parse(record.toString('utf8'));
      if (io.type !== 'DATA') return;
      const data = Buffer.from(io.data.data ?? '', 'base64');
      (io.data.type === 'STDERR' ? options.stderr : options.stdout)(data);
    },
    closed: () => ended(),
  });
  const result = await answer;
  if (result.status !== 200) throw new ExecError(`The agent refused the session: ${result.status} ${result.body}`);
  // As upstream's client: input is attached only when asked for (interactive).
  if (options.input !== undefined) await attachInput(agentUrl, containerId, options.input);
  await done;
}

const inputCall = (attach: Record<string, unknown>) =>
  frameRecord(JSON.stringify({ type: 'ATTACH_CONTAINER_INPUT', attach_container_input: attach }));
const stdinRecord = (data: Uint8Array) =>
  inputCall({
    type: 'PROCESS_IO',
    process_io: { type: 'DATA', data: { type: 'STDIN', data: Buffer.from(data).toString('base64') } },
  });

/** Step 4: the probe, then the input stream, ended by an empty STDIN record. */
async function attachInput(
  agentUrl: URL,
  containerId: ContainerId,
  input: AsyncIterable<Uint8Array | string>,
): Promise<void> {
  const headers = {
    'content-type': 'application/recordio',
    'message-content-type': 'application/json',
    accept: 'application/json',
  };
  const first = inputCall({ type: 'CONTAINER_ID', container_id: containerId });
  const probe = await postRaw(agentUrl, first, headers);
  if (probe.status < 200 || probe.status >= 300)
    throw new ExecError(`The agent refused the input: ${probe.status} ${probe.body}`);
  const req = http.request(agentUrl, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
  const answered = new Promise<void>((resolve, reject) => {
    req.on(
      'response',
      (res) => (
        res.resume(),
        res.statusCode === 200 ? resolve() : reject(new ExecError(`The agent refused the input: ${res.statusCode}`))
      ),
    );
    req.on('error', reject);
  });
  req.write(first);
  const heartbeat = inputCall({
    type: 'PROCESS_IO',
    process_io: {
      type: 'CONTROL',
      control: { type: 'HEARTBEAT', heartbeat: { interval: { nanoseconds: INPUT_HEARTBEAT_MS * 1e6 } } },
    },
  });
  const timer = setInterval(() => req.write(heartbeat), INPUT_HEARTBEAT_MS);
  try {
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (bytes.length > 0) req.write(stdinRecord(bytes));
    }
  } finally {
    clearInterval(timer);
  }
  req.end(stdinRecord(new Uint8Array()));
  await answered;
}

/** Step 5: the wait(2) status. */
async function waitContainer(agentUrl: URL, containerId: ContainerId): Promise<number> {
  const body = JSON.stringify({ type: 'WAIT_CONTAINER', wait_container: { container_id: containerId } });
  const res = await postRaw(agentUrl, body, { 'content-type': 'application/json', accept: 'application/json' });
  if (res.status !== 200) throw new ExecError(`WAIT_CONTAINER: ${res.status} ${res.body}`);
  return JSON.parse(res.body).wait_container?.exit_status ?? 0;
}

async function getJson(url: URL): Promise<any> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new ExecError(`${url.pathname}: ${res.status} ${await res.text()}`);
  return res.json();
}
