/**
 * The agent's exec helper for engine tasks, as the spec describes it: a
 * task exec session into a DOCKER task's container goes through the
 * container engine's socket. It creates an exec (`POST
 * /containers/cluster-<ContainerID>/exec`, 2xx with `Id` required), starts
 * it (`POST /exec/{id}/start`, `Detach` false, 200 or 101 taken; the
 * connection becomes the exec's stream), relays the output to the session
 * as ProcessIO records and the session's input to the exec, and when the
 * stream closes inspects the exec (`GET /exec/{id}/json`, at most 500
 * times, 10 ms apart) until `ExitCode` is a number: the session
 * container's end.
 */
import net from 'node:net';
import type { ProcessOutput } from '../../core/model/executor-api.js';
import type { ClusterDriver } from '../../runtime/driver.js';

const INSPECT_ATTEMPTS = 500;
const INSPECT_INTERVAL_MS = 10;
/** The wait status when the exec's end cannot be learnt: exit code 1. */
const UNKNOWN_EXIT_STATUS = 1 << 8;

export interface EngineSession {
  readonly agentId: string;
  /** The session's nested container id (external in the core). */
  readonly containerId: string;
  /** The engine container the task runs in. */
  readonly engineContainer: string;
  readonly argv: readonly string[];
  readonly tty: boolean;
  readonly user?: string;
}

/** The sessions being relayed, by nested container id: where their input goes. */
interface Relay {
  socket: net.Socket | undefined;
  /** Input that came before the exec started; undefined is its end. */
  readonly pending: (string | undefined)[];
}

export class EngineHelpers {
  readonly #relays = new Map<string, Relay>();

  constructor(
    private readonly socketPath: string,
    private readonly driver: ClusterDriver,
  ) {}

  /** Whether `containerId` is a session relayed through the engine (its input goes there). */
  has(containerId: string): boolean {
    return this.#relays.has(containerId);
  }

  /** Standard input for a relayed session: kept until the exec has started, then written to it. */
  input(containerId: string, data: string | undefined): void {
    const relay = this.#relays.get(containerId);
    if (relay === undefined) return;
    if (relay.socket === undefined) relay.pending.push(data);
    else if (data === undefined) relay.socket.end();
    else relay.socket.write(data);
  }

  /** Runs the session through the engine; `output` takes its records, `closed` says the session's stream is gone. */
  async run(session: EngineSession, output: (piece: ProcessOutput) => void): Promise<void> {
    const { agentId, containerId } = session;
    let status = UNKNOWN_EXIT_STATUS;
    this.#relays.set(containerId, { socket: undefined, pending: [] });
    try {
      const execId = await this.#create(session);
      await this.#start(execId, session, output);
      status = await this.#exitStatus(execId);
    } catch (error) {
      output({ stream: 'STDERR', data: `${(error as Error).message}\n` });
    } finally {
      this.#relays.delete(containerId);
      if (this.driver.failure === undefined)
        this.driver.input((c) => c.nestedContainerExited(agentId, containerId, status));
    }
  }

  /** The session's stream went away: the exec's connection goes too. */
  abandon(containerId: string): void {
    this.#relays.get(containerId)?.socket?.destroy();
  }

  async #create(session: EngineSession): Promise<string> {
    const body = {
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: session.tty,
      Cmd: session.argv,
      Env: [],
      ...(session.user === undefined ? {} : { User: session.user }),
    };
    const res = await this.#request('POST', `/containers/${encodeURIComponent(session.engineContainer)}/exec`, body);
    if (res.status < 200 || res.status > 299) throw new Error(`The engine refused the exec: ${res.status} ${res.body}`);
    return (JSON.parse(res.body) as { Id: string }).Id;
  }

  /** Starts the exec and relays its stream until it closes. */
  #start(execId: string, session: EngineSession, output: (piece: ProcessOutput) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.socketPath);
      const body = JSON.stringify({ Detach: false, Tty: session.tty });
      let head: Buffer | undefined = Buffer.alloc(0);
      let frames = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        if (head !== undefined) {
          head = Buffer.concat([head, chunk]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) return;
          const status = Number(head.subarray(9, 12).toString());
          if (status !== 200 && status !== 101)
            return reject(new Error(`The engine refused to start the exec: ${status}`));
          chunk = head.subarray(end + 4);
          head = undefined;
          this.#started(session.containerId, socket);
        }
        if (session.tty) return chunk.length > 0 ? output({ stream: 'STDOUT', data: chunk.toString() }) : undefined;
        frames = Buffer.concat([frames, chunk]);
        while (frames.length >= 8 && frames.length >= 8 + frames.readUInt32BE(4)) {
          const size = frames.readUInt32BE(4);
          const data = frames.subarray(8, 8 + size).toString();
          if (data.length > 0) output({ stream: frames[0] === 2 ? 'STDERR' : 'STDOUT', data });
          frames = frames.subarray(8 + size);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.write(
        `POST /exec/${execId}/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  }

  /** The exec's stream is open: the input kept so far goes to it. */
  #started(containerId: string, socket: net.Socket): void {
    const relay = this.#relays.get(containerId);
    if (relay === undefined) return;
    relay.socket = socket;
    for (const data of relay.pending.splice(0)) {
      if (data === undefined) socket.end();
      else socket.write(data);
    }
  }

  /** Inspects the exec until its exit code is known (at most 500 times, 10 ms apart), as a wait status. */
  async #exitStatus(execId: string): Promise<number> {
    for (let attempt = 0; attempt < INSPECT_ATTEMPTS; attempt++) {
      const res = await this.#request('GET', `/exec/${execId}/json`);
      if (res.status !== 200) throw new Error(`The engine could not inspect the exec: ${res.status}`);
      const code = (JSON.parse(res.body) as { ExitCode?: number | null }).ExitCode;
      if (typeof code === 'number') return code > 128 && code < 160 ? code - 128 : (code & 0xff) << 8;
      await new Promise((resolve) => setTimeout(resolve, INSPECT_INTERVAL_MS));
    }
    return UNKNOWN_EXIT_STATUS;
  }

  /** One plain request on a connection of its own. */
  #request(method: string, path: string, body?: object): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? '' : JSON.stringify(body);
      const socket = net.connect(this.socketPath);
      let raw = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        raw += c;
        const end = raw.indexOf('\r\n\r\n');
        const length = Number(/content-length:\s*(\d+)/i.exec(raw.slice(0, end))?.[1] ?? 0);
        if (end >= 0 && Buffer.byteLength(raw.slice(end + 4)) >= length) {
          socket.end();
          resolve({ status: Number(raw.slice(9, 12)), body: raw.slice(end + 4) });
        }
      });
      socket.on('error', reject);
      const type = body === undefined ? '' : 'Content-Type: application/json\r\n';
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${type}Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      );
    });
  }
}
