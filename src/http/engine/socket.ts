/**
 * The simulated container engine: the part of its HTTP API on a Unix
 * socket that exec helpers use (spec 001, the engine table), for the
 * containers of DOCKER tasks, named `cluster-<ContainerID>`:
 *
 *   GET  /_ping                         200 `OK`
 *   GET  /version                       200, the engine's version
 *   GET  /containers/{name}/json        200, the container; 404 {"message":"No such container: …"}
 *   POST /containers/{name}/exec        201 {"Id"}: an exec instance of `Cmd` (not started)
 *   POST /exec/{id}/start               `Detach` false: 200 and the connection becomes the exec's
 *                                       two-way stream (output multiplexed in 8-byte-headed frames
 *                                       without `Tty`, raw with it; input from the client's writes,
 *                                       its end at the client's half-close)
 *   GET  /exec/{id}/json                200 {"Running", "ExitCode"}: `ExitCode` null until the exec ends
 *
 * An exec runs in the small shell as a container nested in the task's
 * (the core's nested containers), in cluster time. Routes may carry an API
 * version prefix (`/v1.43/...`), as engine clients send them.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { ClusterView, EngineContainerView } from '../../core/view.js';
import type { ProcessOutput } from '../../core/model/executor-api.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { Connections } from '../connections.js';
import { readRequests, type EngineRequest } from './reader.js';
import { DEFAULT_LISTENER_LIMITS } from '../limits.js';

export const ENGINE_VERSION = {
  Version: '24.0.0-clustersim',
  ApiVersion: '1.43',
  MinAPIVersion: '1.12',
  Os: 'linux',
  Arch: 'amd64',
};

interface ExecInstance {
  readonly id: string;
  readonly container: EngineContainerView;
  readonly argv: readonly string[];
  /** The bytes of its command, for the bound of the execs kept. */
  readonly bytes: number;
  readonly tty: boolean;
  readonly stdin: boolean;
  started: boolean;
  /** Its command could not start (its arguments too long, its container gone): 126, as the engine reports such an exec. */
  failedToStart?: boolean;
  /** Its exit code once known: kept, since the agent forgets its ended nested containers in time. */
  exitCode?: number;
}

export interface EngineOptions {
  readonly driver: ClusterDriver;
  readonly connections: Connections;
  /** Milliseconds a client has to send a request's head, from its start (default 10 s, as `--headers-timeout`). */
  readonly headersTimeoutMs?: number;
  /** Milliseconds a client has to send a whole request, body included (default 60 s, as `--request-timeout`). */
  readonly requestTimeoutMs?: number;
  /** The most execs kept that are not running (ended, or never started); the oldest go first (default 1,000). */
  readonly maxIdleExecs?: number;
  /** The most bytes of commands those execs may hold, whatever their number (default 64 MiB). */
  readonly maxIdleExecBytes?: number;
}

/** The listeners' timeouts (docs/cli.md, "Limits"), and as many idle execs as an agent keeps ended nested containers. */
export const DEFAULT_ENGINE_LIMITS = {
  headersTimeoutMs: DEFAULT_LISTENER_LIMITS.headersTimeoutSeconds * 1000,
  requestTimeoutMs: DEFAULT_LISTENER_LIMITS.requestTimeoutSeconds * 1000,
  maxIdleExecs: 1_000,
  maxIdleExecBytes: 64 * 1024 * 1024,
} as const;

/**
 * The engine's server; listen on a socket path with `listen(path)`. HTTP/1.1
 * is read by hand (engine/reader.ts), not by node's server:
 * `/exec/{id}/start` turns its connection into a raw two-way stream without
 * an upgrade request, which node's parser would not give up.
 */
export function createEngineServer(options: EngineOptions): net.Server {
  const limits = { ...DEFAULT_ENGINE_LIMITS, ...definedOnly(options) };
  const execs = new ExecStore(options.driver, limits);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const answer = (status: number, message: string) =>
      new Reply(socket).send(status, 'application/json', JSON.stringify({ message }), true);
    readRequests(socket, limits, answer, (request) => route(options, execs, request, socket));
  });
  const close = server.close.bind(server);
  // Closing ends the open exec streams too; they would hold the close forever.
  server.close = (callback?: (error?: Error) => void) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return server;
}

function definedOnly(options: EngineOptions): Partial<typeof DEFAULT_ENGINE_LIMITS> {
  const { headersTimeoutMs, requestTimeoutMs, maxIdleExecs, maxIdleExecBytes } = options;
  const limits = { headersTimeoutMs, requestTimeoutMs, maxIdleExecs, maxIdleExecBytes };
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
}

/**
 * The exec instances, by id, in the order of their creation. A running one
 * is kept until it ends; of the others (ended, or never started) the newest
 * `maxIdleExecs` are, within `maxIdleExecBytes` of commands: the engine forgets
 * finished execs in time too, and a client creating execs in a loop must not
 * grow the process' memory for ever.
 */
class ExecStore {
  readonly #execs = new Map<string, ExecInstance>();

  constructor(
    private readonly driver: ClusterDriver,
    private readonly limits: { readonly maxIdleExecs: number; readonly maxIdleExecBytes: number },
  ) {}

  get(id: string): ExecInstance | undefined {
    return this.#execs.get(id);
  }

  add(instance: ExecInstance): void {
    this.#execs.set(instance.id, instance);
    const idle = this.driver.read((view) =>
      [...this.#execs.values()].filter((e) => !e.started || exitCodeOf(view, e) !== null || gone(view, e)),
    );
    let bytes = idle.reduce((sum, e) => sum + e.bytes, 0);
    let count = idle.length;
    for (const oldest of idle) {
      if (count <= this.limits.maxIdleExecs && bytes <= this.limits.maxIdleExecBytes) return;
      this.#execs.delete(oldest.id);
      count--;
      bytes -= oldest.bytes;
    }
  }
}

/** An exec's exit code, null until it has ended. */
function exitCodeOf(view: ClusterView, instance: ExecInstance): number | null {
  if (instance.failedToStart === true) return 126;
  if (!instance.started || instance.exitCode !== undefined) return instance.exitCode ?? null;
  const termination = view.nestedContainer(instance.container.agentId, instance.id)?.termination;
  if (termination === undefined) return null;
  const signal = termination.exitStatus & 0x7f;
  instance.exitCode = signal === 0 ? termination.exitStatus >> 8 : 128 + signal;
  return instance.exitCode;
}

/**
 * A name as a one-line message shows it: as it is, or quoted with its
 * escapes when it holds a control character (`%0a` decodes to a line break;
 * no container is named so).
 */
const shownName = (name: string): string => (/[\u0000-\u001f\u007f]/.test(name) ? JSON.stringify(name) : name);

/** A started exec whose nested container its agent no longer knows (the agent's state lost): it runs no more. */
function gone(view: ClusterView, instance: ExecInstance): boolean {
  return instance.started && view.nestedContainer(instance.container.agentId, instance.id) === undefined;
}

function route(options: EngineOptions, execs: ExecStore, request: EngineRequest, socket: net.Socket): 'keep' | 'taken' {
  const { driver } = options;
  const { method, path, body } = request;
  const res = new Reply(socket, method === 'HEAD');
  if (method === 'GET' && path === '/_ping') return text(res, 200, 'OK');
  if (method === 'GET' && path === '/version') return json(res, 200, ENGINE_VERSION);
  const container = /^\/containers\/([^/]+)\/(json|exec)$/.exec(path);
  if (container !== null) {
    const name = decodePathSegment(container[1]!)?.replace(/^\//, '');
    if (name === undefined) return json(res, 400, { message: `invalid URL escape in ${JSON.stringify(container[1])}` });
    const found = driver.read((view) =>
      view
        .engineContainers()
        .find((c) => c.name === name || c.engineId === name || (name.length >= 12 && c.engineId.startsWith(name))),
    );
    if (found === undefined) return json(res, 404, { message: `No such container: ${shownName(name)}` });
    if (container[2] === 'json' && method === 'GET') return json(res, 200, containerJson(found));
    if (container[2] === 'exec' && method === 'POST') return createExec(execs, found, body, res);
  }
  const exec = /^\/exec\/([^/]+)\/(start|json)$/.exec(path);
  if (exec !== null) {
    const instance = execs.get(exec[1]!);
    if (instance === undefined) return json(res, 404, { message: `No such exec instance: ${exec[1]}` });
    if (exec[2] === 'json' && method === 'GET') return json(res, 200, inspectExec(driver, instance));
    if (exec[2] === 'start' && method === 'POST') return startExec(options, instance, socket, res);
  }
  return json(res, 404, { message: 'page not found' });
}

/** A plain HTTP/1.1 answer on the connection, kept alive; a HEAD's has its head only, or the next answer would start inside its body. */
class Reply {
  constructor(
    private readonly socket: net.Socket,
    private readonly head = false,
  ) {}

  send(status: number, contentType: string, body: string, close = false): void {
    const reason = STATUS_TEXT[status] ?? '';
    const connection = close ? 'Connection: close\r\n' : '';
    this.socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nApi-Version: ${ENGINE_VERSION.ApiVersion}\r\n${connection}\r\n${this.head ? '' : body}`,
    );
  }
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  400: 'Bad Request',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** A path segment with its escapes decoded; undefined for an escape that is none (`%zz`, a lone `%`, bytes that are no UTF-8). */
function decodePathSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function containerJson(c: EngineContainerView): object {
  return {
    Id: c.engineId,
    Name: `/${c.name}`,
    State: { Status: 'running', Running: true, Paused: false, ExitCode: 0 },
    Config: { Image: c.image, Cmd: c.command === '' ? null : ['/bin/sh', '-c', c.command] },
    Image: c.image,
  };
}

function createExec(execs: ExecStore, container: EngineContainerView, body: string, res: Reply): 'keep' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body || '{}');
  } catch {
    return json(res, 400, { message: 'invalid JSON in the exec create body' });
  }
  // `null` is an empty body, as the engine's decoder takes it; another value than an object is refused.
  if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
    return json(res, 400, { message: 'the exec create body is no JSON object' });
  const request = (parsed ?? {}) as { Cmd?: unknown; Tty?: unknown; AttachStdin?: unknown };
  const cmd = request.Cmd;
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((w) => typeof w === 'string'))
    return json(res, 400, { message: 'No exec command specified' });
  const id = randomBytes(32).toString('hex');
  const bytes = cmd.reduce((sum: number, w: string) => sum + Buffer.byteLength(w), 0);
  execs.add({
    id,
    container,
    argv: cmd,
    bytes,
    tty: request.Tty === true,
    stdin: request.AttachStdin === true,
    started: false,
  });
  return json(res, 201, { Id: id });
}

function inspectExec(driver: ClusterDriver, instance: ExecInstance): object {
  const exitCode = driver.read((view) => exitCodeOf(view, instance));
  return {
    ID: instance.id,
    Running: instance.started && exitCode === null,
    ExitCode: instance.started ? exitCode : null,
    ContainerID: instance.container.containerId,
    ProcessConfig: { tty: instance.tty, entrypoint: instance.argv[0], arguments: instance.argv.slice(1) },
  };
}

/** Takes the connection over: the response head, then the exec's output; what the client writes is its input. */
function startExec(options: EngineOptions, instance: ExecInstance, socket: net.Socket, res: Reply): 'keep' | 'taken' {
  if (instance.started) return json(res, 409, { message: `Exec ${instance.id} has already been started` });
  instance.started = true;
  const { driver, connections } = options;
  const { agentId, containerId } = instance.container;
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.${instance.tty ? 'raw' : 'multiplexed'}-stream\r\nConnection: Upgrade\r\n\r\n`,
  );
  const stream = {
    send: (output: ProcessOutput) => socket.write(instance.tty ? output.data : frame(output)),
    close: () => socket.end(),
  };
  const connectionId = connections.open(stream);
  const launch = { containerId: instance.id, parentId: containerId, argv: instance.argv, tty: instance.tty };
  const outcome = driver.input((c) => c.launchNestedContainer(agentId, launch, connectionId));
  if (!outcome.ok) {
    connections.forget(connectionId);
    instance.failedToStart = true;
    socket.end(frame({ stream: 'STDERR', data: `${outcome.error.message}\n` }));
    return 'taken';
  }
  if (!instance.stdin) driver.input((c) => c.containerInput(agentId, instance.id, undefined));
  socket.setEncoding('utf8');
  socket.on(
    'data',
    (data: string) =>
      instance.stdin &&
      driver.failure === undefined &&
      driver.input((c) => c.containerInput(agentId, instance.id, data)),
  );
  socket.on(
    'end',
    () =>
      instance.stdin &&
      driver.failure === undefined &&
      driver.input((c) => c.containerInput(agentId, instance.id, undefined)),
  );
  socket.on('close', () => {
    connections.forget(connectionId);
    if (driver.failure === undefined) driver.input((c) => c.disconnect(connectionId));
  });
  return 'taken';
}

/** The engine's multiplexed stream: [stream, 0, 0, 0, size (big-endian 32)] then the payload. */
function frame(output: ProcessOutput): Buffer {
  const payload = Buffer.from(output.data);
  const head = Buffer.alloc(8);
  head[0] = output.stream === 'STDOUT' ? 1 : 2;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

function json(res: Reply, status: number, value: object): 'keep' {
  res.send(status, 'application/json', JSON.stringify(value));
  return 'keep';
}

function text(res: Reply, status: number, body: string): 'keep' {
  res.send(status, 'text/plain; charset=utf-8', body);
  return 'keep';
}
