/**
 * Nested containers of an agent: commands launched inside a running task's
 * container by the agent operator API (task exec sessions), run by the
 * small shell (`shell.ts`) in cluster time. A session's output goes to the
 * connection that launched it, as ProcessIO records through the outbox;
 * its input comes with `input`; its end is a wait(2) status, which
 * WAIT_CONTAINER reports. A session whose output connection breaks is
 * destroyed, as upstream's is.
 *
 * ATTACH_CONTAINER_OUTPUT adds readers of a running container's output:
 * those of a container launched with a TTY or as a session (upstream's
 * containers with an I/O switchboard); each hears what is written after it
 * attached, and its stream ends when the container does. Its going away
 * leaves the container running.
 *
 * Lifecycle:   running --its script ends, or KILL_CONTAINER, or its parent ends--> exited
 *              exited  --REMOVE_CONTAINER--> (forgotten)
 */
import type { SimContext } from '../network/context.js';
import { fail, ok, type Outcome } from '../model/errors.js';
import type { ContainerTermination } from '../model/executor-api.js';
import type { CommandSpec } from '../model/types.js';
import type { Outbox } from '../network/outbox.js';
import { argvRefusal, ShellProcess, type ShellWorld } from '../process/shell.js';
import type { Sandbox } from '../process/sandbox.js';
import { wallTimeMs } from '../network/context.js';

export interface NestedLaunch {
  readonly containerId: string;
  readonly parentId: string;
  readonly argv: readonly string[];
  /** Upstream's TTY: one merged output stream. */
  readonly tty: boolean;
  /** The user it runs as (`CommandInfo.user`); root when none is given. */
  readonly user?: string;
  /**
   * Run by a process outside the core (an engine exec, through the agent's
   * helper): no shell here; its output goes straight to the session's
   * stream, and its end comes with `externalExited`.
   */
  readonly external?: boolean;
}

/**
 * What a task's own process tells its executor (a command task launched
 * with a TTY runs here, attachable as upstream's I/O switchboard makes it):
 * it exited by itself with this code, or KILL_CONTAINER killed it.
 */
export interface TaskProcessHooks {
  exited(code: number): void;
  killed(signal: number): void;
}

/** A command as the argv its process runs: `sh -c` for a shell command, else its arguments (or its value). */
export function commandArgv(command: CommandSpec | undefined): string[] {
  if (command === undefined) return ['sh'];
  if (command.shell) return ['sh', '-c', command.value ?? ''];
  return command.arguments.length > 0 ? [...command.arguments] : [command.value ?? ''];
}

/** The container a nested one runs in: a live executor's, on this agent. */
export interface ParentContainer {
  readonly containerId: string;
  readonly hostname: string;
  /** Its sandbox, which its nested containers share: what one writes, the next reads. */
  readonly sandbox: Sandbox;
  readonly env: Readonly<Record<string, string>>;
}

interface Nested {
  readonly launch: NestedLaunch;
  /** Set once it is in the map, since it may write as it starts. */
  process: ShellProcess | undefined;
  /** The session's output stream, while it is open. */
  output: string | undefined;
  /** Whether ATTACH_CONTAINER_OUTPUT may read it: a session's, or one with a TTY (upstream's I/O switchboard). */
  readonly attachable: boolean;
  /** Readers attached by ATTACH_CONTAINER_OUTPUT, while their streams are open. */
  readonly attached: string[];
  termination: ContainerTermination | undefined;
  /** Connections waiting for its end (WAIT_CONTAINER). */
  readonly waiters: string[];
  /** A task's own process: its executor hears of its end. */
  readonly task: TaskProcessHooks | undefined;
}

/** How many ended containers an agent keeps for WAIT_CONTAINER until they are removed. */
const MAX_ENDED = 1_000;

/** The most characters of a command the trace shows: a script may be 128 KiB, and the trace keeps its tail in memory. */
const TRACED_COMMAND_CHARS = 256;

/** A command as the trace shows it: whole when short, else its start and its length. */
function traced(command: string): string {
  if (command.length <= TRACED_COMMAND_CHARS) return command;
  return `${command.slice(0, TRACED_COMMAND_CHARS)}… (${command.length} characters)`;
}

export class NestedContainers {
  readonly #containers = new Map<string, Nested>();
  /** Connections waiting for a running executor's container to end, by its container id. */
  readonly #topLevelWaiters = new Map<string, string[]>();

  constructor(
    private readonly ctx: SimContext,
    private readonly outbox: Outbox,
  ) {}

  has(containerId: string): boolean {
    return this.#containers.has(containerId);
  }

  /** A nested container as its readers see it: running, or ended with its termination. */
  status(containerId: string):
    | {
        readonly parentId: string;
        readonly argv: readonly string[];
        readonly tty: boolean;
        readonly termination: ContainerTermination | undefined;
      }
    | undefined {
    const entry = this.#containers.get(containerId);
    return entry === undefined
      ? undefined
      : {
          parentId: entry.launch.parentId,
          argv: entry.launch.argv,
          tty: entry.launch.tty,
          termination: entry.termination,
        };
  }

  /**
   * Launches a nested container; with `output`, its stdout and stderr go to
   * that connection. Arguments that execve(2) would refuse as too long are
   * refused here (`argvRefusal`), before anything starts.
   */
  launch(
    launch: NestedLaunch,
    parent: ParentContainer,
    output: string | undefined,
    task?: TaskProcessHooks,
  ): Outcome<undefined> {
    const refusal = argvRefusal(launch.argv);
    if (refusal !== undefined) return fail('INVALID', refusal);
    if (this.#containers.has(launch.containerId))
      return fail('CONFLICT', `Container ${launch.containerId} already exists`);
    const ctx = this.ctx;
    const world: ShellWorld = {
      loop: ctx.loop,
      hostname: parent.hostname,
      cwd: parent.sandbox.path,
      env: { ...parent.env, MESOS_SANDBOX: parent.sandbox.path, MESOS_CONTAINER_ID: launch.containerId },
      sandbox: parent.sandbox,
      wallTimeMs: () => wallTimeMs(ctx),
      ...(launch.user === undefined ? {} : { user: launch.user }),
    };
    const id = launch.containerId;
    // In the map before it starts: a command may write at once.
    const attachable = launch.tty || output !== undefined;
    const entry: Nested = {
      launch,
      output,
      attachable,
      attached: [],
      termination: undefined,
      waiters: [],
      process: undefined,
      task,
    };
    this.#containers.set(id, entry);
    const traceData = {
      containerId: id,
      parentId: launch.parentId,
      argv: traced(launch.argv.join(' ')),
      external: launch.external === true,
    };
    this.ctx.trace.append('container:launch-nested', traceData);
    if (launch.external === true) return ok(undefined);
    const shell = new ShellProcess(
      world,
      {
        stdout: (data) => this.#emit(id, 'STDOUT', data),
        stderr: (data) => this.#emit(id, launch.tty ? 'STDOUT' : 'STDERR', data),
        exit: (code) => {
          this.#end(id, { exitStatus: (code & 0xff) << 8 });
          task?.exited(code & 0xff);
        },
      },
      launch.argv,
    );
    // An empty script has ended already.
    if (entry.termination === undefined) entry.process = shell;
    return ok(undefined);
  }

  /** The process outside the core that runs an external container ended, with this wait status. */
  externalExited(containerId: string, exitStatus: number): Outcome<undefined> {
    const entry = this.#containers.get(containerId);
    if (entry?.launch.external !== true) return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    this.#end(containerId, { exitStatus });
    return ok(undefined);
  }

  /** Standard input for a running container; `undefined` is the end of it. */
  input(containerId: string, data: string | undefined): Outcome<undefined> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    if (data === undefined) entry.process?.close();
    else entry.process?.write(data);
    return ok(undefined);
  }

  /**
   * WAIT_CONTAINER: the termination of an ended container at once; for a
   * running one, undefined, and the answer goes to `connectionId` when it ends.
   */
  wait(connectionId: string, containerId: string): Outcome<ContainerTermination | undefined> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    if (entry.termination !== undefined) return ok(entry.termination);
    entry.waiters.push(connectionId);
    return ok(undefined);
  }

  /** KILL_CONTAINER: the signal ends it (its wait status is the signal's number). */
  kill(containerId: string, signal: number): Outcome<undefined> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    const running = entry.termination === undefined;
    this.#kill(containerId, signal);
    if (running) entry.task?.killed(signal);
    return ok(undefined);
  }

  /** The process dies of the signal; a task's executor is not told (its container ends with it, or the agent went away). */
  #kill(containerId: string, signal: number): void {
    const entry = this.#containers.get(containerId);
    if (entry === undefined || entry.termination !== undefined) return;
    entry.process?.kill();
    this.#end(containerId, { exitStatus: signal & 0x7f, message: `Killed by signal ${signal}` });
  }

  /** REMOVE_CONTAINER: forgets an ended container; a running one cannot be removed. */
  remove(containerId: string): Outcome<undefined> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined) return ok(undefined);
    if (entry.termination === undefined) return fail('CONFLICT', `Container ${containerId} is still running`);
    this.#containers.delete(containerId);
    return ok(undefined);
  }

  /**
   * ATTACH_CONTAINER_OUTPUT: `connectionId` hears the container's output
   * from now on, until it ends. Refused as upstream's containerizer fails
   * it: a container not running here (NOT_FOUND), one without a TTY that
   * is no session (FAILED).
   */
  attachOutput(containerId: string, connectionId: string): Outcome<undefined> {
    const entry = this.#containers.get(containerId);
    if (entry === undefined || entry.termination !== undefined)
      return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
    if (!entry.attachable) return fail('FAILED', 'I/O switchboard server was disabled for this container');
    entry.attached.push(connectionId);
    return ok(undefined);
  }

  /** The session's output connection broke: the container is destroyed; an attached reader's: it is forgotten. */
  outputClosed(connectionId: string): boolean {
    for (const [id, entry] of this.#containers) {
      const reader = entry.attached.indexOf(connectionId);
      if (reader >= 0) {
        entry.attached.splice(reader, 1);
        return true;
      }
      if (entry.output !== connectionId) continue;
      entry.output = undefined;
      if (entry.termination === undefined) this.#kill(id, 9);
      return true;
    }
    return false;
  }

  /** A waiter's connection went away. */
  waiterClosed(connectionId: string): void {
    for (const waiters of [
      ...[...this.#containers.values()].map((e) => e.waiters),
      ...this.#topLevelWaiters.values(),
    ]) {
      const i = waiters.indexOf(connectionId);
      if (i >= 0) waiters.splice(i, 1);
    }
  }

  /** The parent container ended: its nested containers end with it (SIGKILL), and who waited for it hears its status. */
  parentEnded(parentId: string, exitStatus: number): void {
    for (const [id, entry] of this.#containers)
      if (entry.launch.parentId === parentId && entry.termination === undefined) this.#kill(id, 9);
    for (const waiter of this.#topLevelWaiters.get(parentId) ?? []) this.outbox.containerWait(waiter, { exitStatus });
    this.#topLevelWaiters.delete(parentId);
  }

  /** WAIT_CONTAINER on a running executor's own container: the answer comes when it ends. */
  waitTopLevel(connectionId: string, containerId: string): void {
    const waiters = this.#topLevelWaiters.get(containerId) ?? [];
    waiters.push(connectionId);
    this.#topLevelWaiters.set(containerId, waiters);
  }

  /** Everything is gone (the agent process died). */
  clear(): void {
    for (const id of [...this.#containers.keys()]) this.#kill(id, 9);
    this.#containers.clear();
  }

  #emit(containerId: string, stream: 'STDOUT' | 'STDERR', data: string): void {
    const entry = this.#containers.get(containerId);
    // A record with no data would end the client's stream early.
    if (entry === undefined || data.length === 0) return;
    if (entry.output !== undefined) this.outbox.processIo(entry.output, { stream, data });
    for (const reader of entry.attached) this.outbox.processIo(reader, { stream, data });
  }

  #end(containerId: string, termination: ContainerTermination): void {
    const entry = this.#containers.get(containerId);
    if (entry === undefined || entry.termination !== undefined) return;
    entry.termination = termination;
    // What its script built (a pipeline of thousands of stages) goes with it; an ended one keeps only its status.
    entry.process = undefined;
    this.ctx.trace.append('container:nested-exit', { containerId, exitStatus: termination.exitStatus });
    if (entry.output !== undefined) this.outbox.close(entry.output, 'the container exited');
    entry.output = undefined;
    for (const reader of entry.attached.splice(0)) this.outbox.close(reader, 'the container exited');
    for (const waiter of entry.waiters.splice(0)) this.outbox.containerWait(waiter, termination);
    this.#forgetOldest();
  }

  #forgetOldest(): void {
    let ended = 0;
    for (const entry of this.#containers.values()) if (entry.termination !== undefined) ended++;
    for (const [id, entry] of this.#containers) {
      if (ended <= MAX_ENDED) return;
      if (entry.termination === undefined) continue;
      this.#containers.delete(id);
      ended--;
    }
  }
}

/** An executor as nested containers see it: the container they run in, or wait for. */
interface HostExecutor {
  readonly alive: boolean;
  readonly containerId: string;
  readonly frameworkId: string;
  readonly executorId: string;
  readonly exitStatus: number | undefined;
  /** Its container's sandbox, which its nested containers share. */
  readonly sandbox: Sandbox;
}

/** What of an agent its nested containers need. */
export interface ContainerHost {
  readonly config: { readonly id: string; readonly hostname: string };
  executors(): readonly HostExecutor[];
  completedExecutors(): readonly HostExecutor[];
}

/** The live executor container a nested launch names as its parent, with its sandbox and environment. */
export function parentContainer(agent: ContainerHost, parentId: string): Outcome<ParentContainer> {
  const parent = agent.executors().find((e) => e.alive && e.containerId === parentId);
  if (parent === undefined) return fail('NOT_FOUND', `Container ${parentId} cannot be found`);
  const sandbox = parent.sandbox;
  const env = { HOSTNAME: agent.config.hostname, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
  return ok({ containerId: parent.containerId, hostname: agent.config.hostname, sandbox, env });
}

/** WAIT_CONTAINER on an executor's own container: its status once it has exited, or a wait while it runs. */
export function waitExecutorContainer(
  agent: ContainerHost,
  nested: NestedContainers,
  connectionId: string,
  containerId: string,
): Outcome<ContainerTermination | undefined> {
  if (agent.executors().some((e) => e.alive && e.containerId === containerId)) {
    nested.waitTopLevel(connectionId, containerId);
    return ok(undefined);
  }
  const ended = [...agent.executors(), ...agent.completedExecutors()].find(
    (e) => e.containerId === containerId && e.exitStatus !== undefined,
  );
  if (ended === undefined) return fail('NOT_FOUND', `Container ${containerId} cannot be found`);
  return ok({ exitStatus: ended.exitStatus! });
}
