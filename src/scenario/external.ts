/**
 * An external framework of a scenario: the user's own, in a process of its
 * own (started here from `command`, in a process group of its own) or
 * started by the user (`attach`). The runner gives it the leading master's
 * address in its environment and in `${MASTER}`/`${MASTER_URL}`, knows its
 * subscription by FrameworkInfo.name, and at the end stops the whole group
 * (SIGTERM, a grace period, SIGKILL), keeping its exit and the tail of its
 * output for the report.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { formatSpan } from './duration.js';
import type { ProcessState } from './expect.js';
import type { ExternalSpec } from './scenario.js';
import type { ClusterView, FrameworkView } from '../core/view.js';

/** What is kept of each of its output streams: the last bytes. */
export const OUTPUT_TAIL_BYTES = 64 * 1024;

/** How long it has to end after SIGTERM before its group is killed. */
export const STOP_GRACE_MS = 3_000;

/** How long the runner waits for the rest of a process's output once it exited. */
const OUTPUT_WAIT_MS = 1_000;

/** How often (wall clock) the runner looks for its subscription. */
const SUBSCRIBE_POLL_MS = 25;

/** The last bytes of a stream. */
class Tail {
  #chunks: Buffer[] = [];
  #bytes = 0;

  add(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes - this.#chunks[0]!.length >= OUTPUT_TAIL_BYTES) this.#bytes -= this.#chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.#chunks);
    return all.subarray(Math.max(0, all.length - OUTPUT_TAIL_BYTES)).toString('utf8');
  }
}

/** How a process ended, with its output's tail: for the run's result. */
export interface ProcessOutcome {
  readonly framework: string;
  readonly exitCode: number | null | undefined;
  readonly signal: string | null | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

export class ExternalFramework {
  #child: ChildProcess | undefined;
  #exit: { code: number | null; signal: string | null; atMs: number } | undefined;
  #failed: string | undefined;
  #stoppedByRun = false;
  #exited: Promise<void> = Promise.resolve();
  /** Its output streams ended too (after its exit, unless a child of its group holds them). */
  #closed: Promise<void> = Promise.resolve();
  /** Cluster times it lost its subscription, and had one again, as the runner saw the master's books change. */
  readonly lostAt: number[] = [];
  readonly subscribedAt: number[] = [];
  #subscribed = false;
  readonly #stdout = new Tail();
  readonly #stderr = new Tail();

  constructor(
    readonly spec: ExternalSpec,
    /** Where the entry is in the file, for errors: `frameworks[2] 'mine' (line 14)`. */
    readonly where: string,
    private readonly clock: () => number,
  ) {}

  /** Starts its command (nothing for an attached one), with the leading master at `master` (`host:port`). */
  start(master: string): void {
    const { command } = this.spec;
    if (command === undefined) return;
    const url = `http://${master}`;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's placeholders, substituted here
    const fill = (text: string): string => text.replaceAll('${MASTER_URL}', url).replaceAll('${MASTER}', master);
    const env = {
      ...process.env,
      MESOS_MASTER: master,
      CLUSTERSIM_MASTER: master,
      CLUSTERSIM_MASTER_URL: url,
      ...Object.fromEntries(Object.entries(this.spec.env).map(([k, v]) => [k, fill(v)])),
    };
    const [file, args] =
      typeof command === 'string' ? ['sh', ['-c', fill(command)]] : [fill(command[0]!), command.slice(1).map(fill)];
    const child = spawn(file, args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
      ...(this.spec.cwd === undefined ? {} : { cwd: this.spec.cwd }),
    });
    this.#child = child;
    child.stdout!.on('data', (chunk: Buffer) => this.#stdout.add(chunk));
    child.stderr!.on('data', (chunk: Buffer) => this.#stderr.add(chunk));
    this.#closed = new Promise((resolve) => child.on('close', () => resolve()));
    this.#exited = new Promise((resolve) => {
      child.on('error', (error) => {
        // A cwd that is not there fails as the command would: say which.
        const missing = this.spec.cwd !== undefined && !existsSync(this.spec.cwd);
        this.#failed = missing ? `its directory ${this.spec.cwd} does not exist` : error.message;
        this.#exit ??= { code: null, signal: null, atMs: this.clock() };
        resolve();
      });
      child.on('exit', (code, signal) => {
        this.#exit = { code, signal, atMs: this.clock() };
        resolve();
      });
    });
  }

  /** Waits (wall clock, bounded) until `idOf` finds its subscription; an error names the entry. */
  async awaitSubscription(idOf: () => string | undefined): Promise<void> {
    const deadline = performance.now() + this.spec.subscribeTimeoutMs;
    while (idOf() === undefined) {
      if (this.#exit !== undefined) {
        await this.#outputRead();
        throw new Error(`${this.where}: ${this.#endText()} before it subscribed${this.#stderrLine()}`);
      }
      if (performance.now() > deadline) {
        const how = this.spec.attach ? 'attached' : 'its process running';
        throw new Error(
          `${this.where}: no framework named '${this.spec.match}' subscribed within ${formatSpan(this.spec.subscribeTimeoutMs)} (${how})${this.#stderrLine()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_POLL_MS));
    }
  }

  /** The master's books at `nowMs`: whether it is subscribed there (the runner looks whenever the cluster changes). */
  observe(subscribed: boolean, nowMs: number): void {
    if (subscribed === this.#subscribed) return;
    this.#subscribed = subscribed;
    (subscribed ? this.subscribedAt : this.lostAt).push(nowMs);
  }

  /** Whether its process ended by itself during the run, and when: an event of the run. */
  get endedEarly(): string | undefined {
    if (this.#exit === undefined || this.#stoppedByRun) return undefined;
    return `${this.#endText()} at ${formatSpan(this.#exit.atMs)}${this.#stderrLine()}`;
  }

  get state(): ProcessState | undefined {
    if (this.#child === undefined && this.#failed === undefined) return undefined;
    return {
      running: this.#exit === undefined,
      exitCode: this.#exit?.code,
      signal: this.#exit?.signal,
      stoppedByRun: this.#stoppedByRun,
    };
  }

  get outcome(): ProcessOutcome | undefined {
    if (this.#child === undefined) return undefined;
    return {
      framework: this.spec.name,
      exitCode: this.#exit?.code,
      signal: this.#exit?.signal,
      stdout: this.#stdout.text(),
      stderr: this.#stderr.text(),
    };
  }

  /** Stops its process group: SIGTERM, `graceMs` to end, then SIGKILL to whatever of the group is left. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    if (this.#exit === undefined) {
      this.#stoppedByRun = true;
      signalGroup(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#exited, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    // Its children may outlive it: the group goes too.
    signalGroup(pid, 'SIGKILL');
    await this.#exited;
    await this.#outputRead();
  }

  /** Waits a little for the rest of its output after its exit: 'exit' may come before the last bytes. */
  async #outputRead(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#closed, new Promise((resolve) => (timer = setTimeout(resolve, OUTPUT_WAIT_MS)))]);
    clearTimeout(timer);
  }

  #endText(): string {
    if (this.#failed !== undefined) return `its command could not start (${this.#failed})`;
    const exit = this.#exit!;
    return exit.code === null ? `its process was ended by ${exit.signal}` : `its process exited with code ${exit.code}`;
  }

  #stderrLine(): string {
    const last = this.#stderr.text().trim().split('\n').slice(-3).join(' | ');
    return last === '' ? '' : `; stderr: ${last.slice(-300)}`;
  }
}

/**
 * Starts the external frameworks with the leading master's address (`url`),
 * tells where an attached one should subscribe, and waits for each to
 * subscribe (`subscribedId` finds it by its FrameworkInfo.name).
 */
export async function startExternals(
  externals: readonly ExternalFramework[],
  url: string,
  run: {
    subscribedId(match: string): string | undefined;
    onAttach?: (name: string, match: string, masterUrl: string) => void;
  },
): Promise<void> {
  const master = new URL(url).host;
  for (const fw of externals) {
    fw.start(master);
    if (fw.spec.attach) run.onAttach?.(fw.spec.name, fw.spec.match, `http://${master}`);
  }
  for (const fw of externals) await fw.awaitSubscription(() => run.subscribedId(fw.spec.match));
}

/** The framework an external entry matches by FrameworkInfo.name: the latest to register with it, a subscribed one first. */
export function externalIdOf(view: ClusterView, match: string): string | undefined {
  const named = [...view.frameworks()].filter((f) => f.info.name === match);
  const latest = (list: FrameworkView[]): FrameworkView | undefined =>
    list.reduce<FrameworkView | undefined>(
      (a, f) => (a === undefined || f.registeredTimeMs >= a.registeredTimeMs ? f : a),
      undefined,
    );
  return (latest(named.filter((f) => f.state === 'subscribed')) ?? latest(named))?.id;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}
