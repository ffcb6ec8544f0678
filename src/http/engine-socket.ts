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
import type { EngineContainerView } from '../core/view.js';
import type { ProcessOutput } from '../core/executor-api.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { Connections } from './connections.js';

export const ENGINE_VERSION = { Version: '24.0.0-clustersim', ApiVersion: '1.43', MinAPIVersion: '1.12', Os: 'linux', Arch: 'amd64' };

interface ExecInstance {
  readonly id: string;
  readonly container: EngineContainerView;
  readonly argv: readonly string[];
  readonly tty: boolean;
  readonly stdin: boolean;
  started: boolean;
  /** Its command could not start (its arguments too long, its container gone): 126, as the engine reports such an exec. */
  failedToStart?: boolean;
}

export interface EngineOptions {
  readonly driver: ClusterDriver;
  readonly connections: Connections;
}

/**
 * The engine's server; listen on a socket path with `listen(path)`. HTTP/1.1
 * is read by hand, not by node's server: `/exec/{id}/start` turns its
 * connection into a raw two-way stream without an upgrade request, which
 * node's parser would not give up.
 */
export function createEngineServer(options: EngineOptions): net.Server {
  const execs = new Map<string, ExecInstance>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    readRequests(socket, (request) => route(options, execs, request, socket));
  });
  const close = server.close.bind(server);
  // Closing ends the open exec streams too; they would hold the close forever.
  server.close = (callback?: (error?: Error) => void) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return server;
}

interface EngineRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/** The most a request's head and body may hold: past them the engine answers 431 or 413 and closes, as an HTTP server does. */
const MAX_HEAD_BYTES = 64 * 1024;
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Requests one after the other on a connection (keep-alive), until one takes the connection over. */
function readRequests(socket: net.Socket, handle: (request: EngineRequest) => 'keep' | 'taken'): void {
  let buffered = Buffer.alloc(0);
  const refuse = (status: number, message: string): void => {
    socket.off('data', onData);
    new Reply(socket).send(status, 'application/json', JSON.stringify({ message }), true);
    socket.end();
  };
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return buffered.length > MAX_HEAD_BYTES ? refuse(431, 'request header fields too large') : undefined;
      if (end > MAX_HEAD_BYTES) return refuse(431, 'request header fields too large');
      const head = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const [method = 'GET', target = '/'] = head[0]!.split(' ');
      const fields = head.slice(1).join('\n');
      const framed = /^transfer-encoding:\s*chunked\s*$/im.test(fields)
        ? chunkedBody(buffered.subarray(end + 4))
        : lengthBody(buffered.subarray(end + 4), Number(/^content-length:\s*(\d+)$/im.exec(fields)?.[1] ?? 0));
      if (framed === 'incomplete') return;
      if (typeof framed === 'string') return refuse(framed === BODY_TOO_LARGE ? 413 : 400, framed);
      const body = framed.body.toString('utf8');
      buffered = buffered.subarray(end + 4 + framed.used);
      const path = target.replace(/^\/v\d+\.\d+(?=\/)/, '').split('?')[0]!;
      if (handle({ method, path, body }) === 'taken') {
        socket.off('data', onData);
        // Bytes after the start request are already the exec's input.
        if (buffered.length > 0) socket.unshift(buffered);
        return;
      }
    }
  };
  socket.on('data', onData);
  socket.on('error', () => socket.destroy());
}

const BODY_TOO_LARGE = 'request body too large';

type Framed = { readonly body: Buffer; readonly used: number } | 'incomplete' | string;

/** A body of `length` bytes at the start of `bytes`. */
function lengthBody(bytes: Buffer, length: number): Framed {
  if (length > MAX_BODY_BYTES) return BODY_TOO_LARGE;
  return bytes.length < length ? 'incomplete' : { body: bytes.subarray(0, length), used: length };
}

/** A chunked body at the start of `bytes` (`<hex size>[;ext]\r\n<data>\r\n`... `0\r\n\r\n`), or why it is none. */
function chunkedBody(bytes: Buffer): Framed {
  const parts: Buffer[] = [];
  let at = 0;
  let size = 0;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    if (eol < 0) return bytes.length - at > 64 ? 'malformed chunked encoding' : 'incomplete';
    const line = bytes.subarray(at, eol).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,8}$/.test(line)) return 'malformed chunked encoding';
    const chunk = Number.parseInt(line, 16);
    size += chunk;
    if (size > MAX_BODY_BYTES) return BODY_TOO_LARGE;
    if (chunk === 0) {
      // No trailers: the body ends with an empty line.
      if (bytes.length < eol + 4) return 'incomplete';
      return bytes.subarray(eol + 2, eol + 4).toString('latin1') === '\r\n' ? { body: Buffer.concat(parts), used: eol + 4 } : 'malformed chunked encoding';
    }
    if (bytes.length < eol + 2 + chunk + 2) return 'incomplete';
    if (bytes.subarray(eol + 2 + chunk, eol + 4 + chunk).toString('latin1') !== '\r\n') return 'malformed chunked encoding';
    parts.push(bytes.subarray(eol + 2, eol + 2 + chunk));
    at = eol + 4 + chunk;
  }
}

function route(options: EngineOptions, execs: Map<string, ExecInstance>, request: EngineRequest, socket: net.Socket): 'keep' | 'taken' {
  const { driver } = options;
  const { method, path, body } = request;
  const res = new Reply(socket, method === 'HEAD');
  if (method === 'GET' && path === '/_ping') return text(res, 200, 'OK');
  if (method === 'GET' && path === '/version') return json(res, 200, ENGINE_VERSION);
  const container = /^\/containers\/([^/]+)\/(json|exec)$/.exec(path);
  if (container !== null) {
    const name = decodePathSegment(container[1]!)?.replace(/^\//, '');
    if (name === undefined) return json(res, 400, { message: `invalid URL escape in ${JSON.stringify(container[1])}` });
    const found = driver.read((view) => view.engineContainers().find((c) => c.name === name || c.engineId === name || (name.length >= 12 && c.engineId.startsWith(name))));
    if (found === undefined) return json(res, 404, { message: `No such container: ${name}` });
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
    this.socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nApi-Version: ${ENGINE_VERSION.ApiVersion}\r\n${connection}\r\n${this.head ? '' : body}`);
  }
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK', 201: 'Created', 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large',
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

function createExec(execs: Map<string, ExecInstance>, container: EngineContainerView, body: string, res: Reply): 'keep' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body || '{}');
  } catch {
    return json(res, 400, { message: 'invalid JSON in the exec create body' });
  }
  // `null` is an empty body, as the engine's decoder takes it; another value than an object is refused.
  if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) return json(res, 400, { message: 'the exec create body is no JSON object' });
  const request = (parsed ?? {}) as { Cmd?: unknown; Tty?: unknown; AttachStdin?: unknown };
  const cmd = request.Cmd;
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((w) => typeof w === 'string')) return json(res, 400, { message: 'No exec command specified' });
  const id = randomBytes(32).toString('hex');
  execs.set(id, { id, container, argv: cmd, tty: request.Tty === true, stdin: request.AttachStdin === true, started: false });
  return json(res, 201, { Id: id });
}

function inspectExec(driver: ClusterDriver, instance: ExecInstance): object {
  const status = driver.read((view) => view.nestedContainer(instance.container.agentId, instance.id));
  const termination = status?.termination;
  const signal = termination === undefined ? 0 : termination.exitStatus & 0x7f;
  const ended = termination === undefined ? null : signal === 0 ? termination.exitStatus >> 8 : 128 + signal;
  const exitCode = instance.failedToStart === true ? 126 : ended;
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
  socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.${instance.tty ? 'raw' : 'multiplexed'}-stream\r\nConnection: Upgrade\r\n\r\n`);
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
  socket.on('data', (data: string) => instance.stdin && driver.failure === undefined && driver.input((c) => c.containerInput(agentId, instance.id, data)));
  socket.on('end', () => instance.stdin && driver.failure === undefined && driver.input((c) => c.containerInput(agentId, instance.id, undefined)));
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
