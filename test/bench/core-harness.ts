/**
 * Driving the core directly, as the HTTP layer does but without sockets:
 * every input is followed by draining the outbox, and the records go to a
 * consumer of the bench's choosing. The drain belongs to the input's cost:
 * the HTTP layer's driver does the same after every call.
 */
import { Cluster } from '../../src/core/cluster.js';
import type { Outcome } from '../../src/core/model/errors.js';
import type { OutboxRecord } from '../../src/core/network/outbox.js';
import { parseResources, type Resources } from '../../src/core/model/resources.js';
import type { FrameworkInfo, SchedulerCall, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';

export const AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';
export const MASTER = { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0' } as const;
export const FRAMEWORK_INFO: FrameworkInfo = {
  user: 'bench',
  name: 'bench',
  failoverTimeoutMs: 0,
  checkpoint: false,
  roles: [],
  capabilities: [],
  labels: [],
};

export function parsed(text: string): Resources {
  const r = parseResources(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

/** Agents with room for many long tasks, and the tasks: the benches of scale (reads, failover, the agent's side). */
export const ROOMY_AGENT_RESOURCES = 'cpus:64;mem:262144;disk:262144';
export const TINY_TASK_RESOURCES = parsed('cpus:0.01;mem:1');
/** A task that runs until killed. */
export const LONG_COMMAND = {
  shell: true,
  value: 'sleep 1000000',
  arguments: [],
} as const satisfies TaskSpec['command'];

/** Receives the events addressed to one connection; must not re-enter the core. */
export type EventConsumer = (event: SchedulerEvent) => void;

export interface BenchClusterOptions {
  readonly agents: number;
  readonly agentResources?: string;
  readonly checkInvariants?: boolean;
  readonly seed?: number;
}

/**
 * A core cluster with one subscriber at a time: `input` applies anything,
 * `call` a scheduler call of the subscribed framework, and both hand the
 * outbox to the consumer before returning.
 */
export class CoreBench {
  readonly cluster: Cluster;
  readonly agentIds: string[] = [];
  frameworkId = '';
  streamId = '';
  #consumer: EventConsumer = () => {};
  #connection = 0;

  constructor(options: BenchClusterOptions) {
    this.cluster = new Cluster({
      seed: options.seed ?? 1,
      checkInvariants: options.checkInvariants ?? true,
      master: MASTER,
    });
    const resources = parsed(options.agentResources ?? AGENT_RESOURCES);
    for (let i = 0; i < options.agents; i++) {
      const agent = this.input((c) =>
        c.addAgent({ hostname: `agent${i + 1}`, ip: '127.0.0.1', port: 5051 + i, resources, attributes: [] }),
      );
      this.agentIds.push(agent.id);
    }
  }

  /** Subscribes a framework on a fresh connection whose events go to `consumer`. */
  subscribe(consumer: EventConsumer, info: FrameworkInfo = FRAMEWORK_INFO): void {
    this.#consumer = consumer;
    const { frameworkId, streamId } = this.input((c) =>
      c.subscribe(`bench-${++this.#connection}`, { info, suppressedRoles: [] }),
    );
    if (frameworkId === '') throw new Error('SUBSCRIBE refused');
    this.frameworkId = frameworkId;
    this.streamId = streamId;
  }

  input<T>(apply: (cluster: Cluster) => T): T {
    try {
      return apply(this.cluster);
    } finally {
      this.#deliver(this.cluster.drainOutbox());
    }
  }

  /** A scheduler call that must succeed. */
  call(call: SchedulerCall): Outcome {
    const outcome = this.input((c) => c.call(this.frameworkId, this.streamId, call));
    if (!outcome.ok) throw new Error(`${call.type} failed: ${outcome.error.message}`);
    return outcome;
  }

  /** Runs timers up to the next one due; false when none is pending. */
  step(): boolean {
    const due = this.cluster.nextDueMs();
    if (due === undefined) return false;
    this.input((c) => c.advanceTo(due));
    return true;
  }

  #deliver(records: readonly OutboxRecord[]): void {
    for (const record of records) {
      if (record.kind === 'event') this.#consumer(record.event);
    }
  }
}
