/**
 * The tasks the agent operator API and the container engine fuzz aim at:
 * one framework that launches long command tasks, plain ones and DOCKER
 * ones (whose containers the engine knows as `cluster-<ContainerID>`), on
 * every agent, and launches more when the fuzz has killed them. Tokens in
 * generated calls resolve to what runs now, read from the cluster itself:
 *
 *   @@parent:i         the container of a running task on the agent the request goes to
 *   @@engine-parent:i  the container of a running DOCKER task there (any task's, without one)
 *   @@engine:i         the engine's name of a DOCKER task's container (`cluster-<id>`)
 *   @@engine-id:i      that container's engine id (64 hex digits)
 *   @@engine-short:i   its first 12 hex digits
 *   @@exec:i           an exec instance the engine created (the engine fuzz records them)
 *
 * An index is taken modulo what exists, so a generated value never goes stale.
 */
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import type { Json } from './mutate.js';
import type { TokenResolver } from './requests.js';
import { within } from './session.js';

/** The task containers of one agent, as the cluster holds them now. */
interface Containers {
  readonly all: string[];
  readonly engine: string[];
}

const TASK_RESOURCES = [
  { name: 'cpus', type: 'SCALAR', scalar: { value: 0.1 } },
  { name: 'mem', type: 'SCALAR', scalar: { value: 32 } },
];
const DOCKER = { type: 'DOCKER', docker: { image: 'alpine:3.19' } };

export class TaskHost {
  readonly client: SchedulerClient;
  #counter = 0;
  /** Exec instance ids the engine gave out. */
  readonly execs: string[] = [];

  constructor(
    readonly running: RunningCluster,
    private readonly timeoutMs: number,
  ) {
    this.client = new SchedulerClient(running.masterUrl, 'json');
  }

  /** Subscribes, then launches the first tasks, each within the time a request has; `where` names the run for a failure. */
  async begin(advance: (ms: number) => void, where: string): Promise<void> {
    await within(this.start(), this.timeoutMs, () => `${where}: the tasks' framework`);
    await within(this.launch(advance), this.timeoutMs, () => `${where}: the first tasks`);
  }

  async start(): Promise<void> {
    const res = await this.client.subscribe({
      user: 'fuzz',
      name: 'fuzz-tasks',
      checkpoint: true,
      failover_timeout: 3600,
    });
    if (res.status !== 200) throw new Error(`the tasks' framework was refused: ${res.status} ${res.body}`);
    await this.client.next('SUBSCRIBED', this.timeoutMs);
  }

  /**
   * Launches a plain and a DOCKER task on every offer that comes within a
   * few allocation intervals, then moves time on until they run. False
   * when no offer came (every agent down, say).
   */
  async launch(advance: (ms: number) => void): Promise<boolean> {
    let launched = false;
    for (let i = 0; i < 6 && !launched; i++) {
      for (const offer of this.#offers()) {
        const tasks = [false, true].map((docker) => this.#task(offer.agent_id.value, docker));
        const accept = {
          offer_ids: [offer.id],
          operations: [{ type: 'LAUNCH', launch: { task_infos: tasks } }],
          filters: { refuse_seconds: 0 },
        };
        const res = await this.client.call({ type: 'ACCEPT', accept });
        if (res.status !== 202) throw new Error(`the tasks' framework's ACCEPT got ${res.status} ${res.body}`);
        launched = true;
      }
      advance(1_000);
      await settleSoon();
    }
    // STAGING to RUNNING takes a moment of cluster time.
    for (let i = 0; i < 3; i++) {
      advance(1_000);
      await settleSoon();
    }
    return launched;
  }

  /** The offers that came since the last look; the other events are of no use here. */
  #offers(): { id: unknown; agent_id: { value: string } }[] {
    return this.client.pending.splice(0).flatMap((e) => (e.type === 'OFFERS' ? e.offers.offers : []));
  }

  #task(agentId: string, docker: boolean): Record<string, unknown> {
    const n = this.#counter++;
    return {
      name: docker ? 'engine-task' : 'task',
      task_id: { value: `fuzz-task-${n}` },
      agent_id: { value: agentId },
      resources: TASK_RESOURCES,
      command: { value: 'sleep 1000000' },
      ...(docker ? { container: DOCKER } : {}),
    };
  }

  /** Kills the `index`-th task that still runs (modulo), or every one, so that what runs in them ends too. */
  async kill(index?: number): Promise<void> {
    const all = this.running.driver.read((view) =>
      this.running.agents.flatMap((a) =>
        (view.agentNode(a.id)?.executors() ?? [])
          .filter((e) => e.alive)
          .flatMap((e) => [...e.tasks.keys()].map((task) => ({ task, agent: a.id }))),
      ),
    );
    const tasks = index === undefined || all.length === 0 ? all : [all[index % all.length]!];
    for (const { task, agent } of tasks) {
      const res = await this.client.call({
        type: 'KILL',
        kill: { task_id: { value: task }, agent_id: { value: agent } },
      });
      if (res.status !== 202) throw new Error(`the tasks' framework's KILL got ${res.status} ${res.body}`);
    }
  }

  /** The framework declines the offers it holds, so that a new framework gets them. */
  async declineAll(): Promise<void> {
    const offers = this.#offers().map((o) => o.id);
    if (offers.length === 0) return;
    const res = await this.client.call({
      type: 'DECLINE',
      decline: { offer_ids: offers, filters: { refuse_seconds: 3600 } },
    });
    if (res.status !== 202) throw new Error(`the tasks' framework's DECLINE got ${res.status} ${res.body}`);
  }

  /** The running task containers of the agent, from the cluster. */
  containers(agent: number): Containers {
    const id = this.running.agents[agent % this.running.agents.length]!.id;
    return this.running.driver.read((view) => {
      const engineIds = new Set(
        view
          .engineContainers()
          .filter((c) => c.agentId === id)
          .map((c) => c.containerId),
      );
      const all = (view.agentNode(id)?.executors() ?? [])
        .filter((e) => e.alive && [...e.tasks.values()].some((t) => t.state === 'TASK_RUNNING'))
        .map((e) => e.containerId);
      return { all, engine: all.filter((c) => engineIds.has(c)) };
    });
  }

  /** The tokens of a request to the agent `agent` (an index of `running.agents`), resolved. */
  resolver(agent: number): TokenResolver {
    const resolveText = (text: string): string =>
      text.includes('@@') ? text.replace(/@@[a-z-]+(?::\d+)?/g, (t) => this.#resolve(t, agent)) : text;
    const resolveJson = (value: Json): Json => {
      if (typeof value === 'string') return resolveText(value);
      if (Array.isArray(value)) return value.map(resolveJson);
      if (value !== null && typeof value === 'object')
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveJson(v)]));
      return value;
    };
    return { resolveText, resolveJson };
  }

  #resolve(tokenText: string, agent: number): string {
    const [name, n] = tokenText.slice(2).split(':');
    const i = Number(n ?? 0);
    const pick = (items: readonly string[], none: string) => (items.length === 0 ? none : items[i % items.length]!);
    switch (name) {
      case 'parent':
        return pick(this.containers(agent).all, 'no-running-task');
      case 'engine-parent': {
        const { engine, all } = this.containers(agent);
        return pick(engine.length > 0 ? engine : all, 'no-running-task');
      }
      case 'engine':
      case 'engine-id':
      case 'engine-short': {
        const engines = this.running.driver.read((view) => view.engineContainers());
        const c = engines.length === 0 ? undefined : engines[i % engines.length]!;
        if (c === undefined) return 'cluster-none';
        return name === 'engine' ? c.name : name === 'engine-id' ? c.engineId : c.engineId.slice(0, 12);
      }
      case 'exec':
        return pick(this.execs, '0'.repeat(64));
      default:
        return tokenText;
    }
  }

  close(): void {
    this.client.disconnect();
  }
}

async function settleSoon(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}
