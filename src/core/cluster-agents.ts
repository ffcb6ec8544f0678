/**
 * The agents behind the `Cluster` port (cluster.ts) and the connections
 * that reach them: executor streams and container sessions' outputs and
 * waiters, each by connection with its agent. Here are the bodies of the
 * port's agent, executor and container inputs; the port records them.
 */
import { Agent } from './agent/agent.js';
import { AGENT_NOT_RECOVERED } from './agent/executor-calls.js';
import { DEFAULT_AGENT_FLAGS, type AgentFlags } from './agent/flags.js';
import {
  NestedContainers,
  parentContainer,
  waitExecutorContainer,
  type NestedLaunch,
} from './agent/nested-containers.js';
import type { AddedAgent, AgentSpec } from './cluster-options.js';
import type { SandboxSettings } from './agent/sandboxes.js';
import { fail, type Outcome } from './model/errors.js';
import type {
  ContainerTermination,
  ExecutorAuthorizer,
  ExecutorCallEnvelope,
  RecoverMode,
} from './model/executor-api.js';
import { MASTER_NODE } from './model/messages.js';
import type { SimContext } from './network/context.js';
import type { Outbox } from './network/outbox.js';

export class ClusterAgents {
  /** Every agent ever added, a crashed one too. */
  readonly all = new Map<string, Agent>();
  readonly #flags = new WeakMap<Partial<AgentFlags>, AgentFlags>();
  /** Container sessions' output streams and WAIT_CONTAINER waiters, by connection, and their agent. */
  readonly #containerConnections = new Map<string, string>();
  /** Open executor streams, by connection, and the agent each is on. */
  readonly #executorConnections = new Map<string, string>();

  constructor(
    private readonly ctx: SimContext,
    private readonly outbox: Outbox,
    /** One budget for every agent's sandboxes. */
    readonly sandboxes: SandboxSettings,
  ) {}

  get(agentId: string): Agent {
    const agent = this.all.get(agentId);
    if (agent === undefined) throw new Error(`cluster: no agent '${agentId}'`);
    return agent;
  }

  /** Boots an agent of the id given. */
  add(spec: AgentSpec, id: string): AddedAgent {
    const { flags, ...machine } = spec;
    const agent = new Agent(this.ctx, { ...machine, id, flags: this.#fullFlags(flags) }, this.outbox, this.sandboxes);
    this.all.set(agent.id, agent);
    this.ctx.network.attach(agent);
    agent.start();
    return { id: agent.id, pid: agent.pid };
  }

  /** The agent process dies; its connection to the master breaks. An agent not running is left as it is. */
  crash(agentId: string): void {
    const agent = this.get(agentId);
    if (agent.state === 'crashed') return;
    agent.crash();
    this.ctx.network.setUp(agentId, false);
    if (!this.ctx.network.isCut(agentId, MASTER_NODE)) {
      this.ctx.network.send(agentId, MASTER_NODE, { type: 'EXITED', node: agentId });
    }
  }

  /** The agent process starts again from its checkpoint; a running one is left as it is. */
  restart(agentId: string, recover: RecoverMode): void {
    const agent = this.get(agentId);
    if (agent.state !== 'crashed') return;
    this.ctx.network.setUp(agentId, true);
    agent.restart(recover);
  }

  executorSubscribe(
    connectionId: string,
    agentId: string,
    envelope: ExecutorCallEnvelope,
    authorize?: ExecutorAuthorizer,
  ): Outcome {
    const outcome = this.get(agentId).executorSubscribe(connectionId, envelope, authorize);
    if (outcome.ok) this.#executorConnections.set(connectionId, agentId);
    return outcome;
  }

  launchNested(agentId: string, launch: NestedLaunch, output?: string): Outcome {
    const agent = this.get(agentId);
    if (agent.state === 'crashed') return fail('UNAVAILABLE', AGENT_NOT_RECOVERED);
    const parent = parentContainer(agent, launch.parentId);
    if (!parent.ok) return parent;
    const nested = (agent.nested ??= new NestedContainers(this.ctx, this.outbox));
    const outcome = nested.launch(launch, parent.value, output);
    if (outcome.ok && output !== undefined) this.#containerConnections.set(output, agentId);
    return outcome;
  }

  attachOutput(agentId: string, containerId: string, connectionId: string): Outcome {
    const outcome = this.nested(agentId, (n) => n.attachOutput(containerId, connectionId));
    if (outcome.ok) this.#containerConnections.set(connectionId, agentId);
    return outcome;
  }

  /** A call on an agent's nested containers; an agent down answers as upstream's recovering one. */
  nested<T>(agentId: string, call: (nested: NestedContainers) => Outcome<T>): Outcome<T> {
    const agent = this.get(agentId);
    if (agent.state === 'crashed') return fail('UNAVAILABLE', AGENT_NOT_RECOVERED);
    return call((agent.nested ??= new NestedContainers(this.ctx, this.outbox)));
  }

  wait(connectionId: string, agentId: string, containerId: string): Outcome<ContainerTermination | undefined> {
    const outcome = this.nested(agentId, (n) =>
      n.has(containerId)
        ? n.wait(connectionId, containerId)
        : waitExecutorContainer(this.get(agentId), n, connectionId, containerId),
    );
    if (outcome.ok && outcome.value === undefined) this.#containerConnections.set(connectionId, agentId);
    return outcome;
  }

  updateMemoryLimit(agentId: string, containerId: string, mib: number): Outcome {
    const agent = this.get(agentId);
    if (agent.state === 'crashed') return fail('UNAVAILABLE', 'Agent has not finished recovery');
    return agent.cgroups.updateMemoryLimit(containerId, mib);
  }

  /** A connection closed: true when it reached an agent (a container session's, an executor's), which is told. */
  disconnected(connectionId: string): boolean {
    const containerAgent = this.#containerConnections.get(connectionId);
    if (containerAgent !== undefined) {
      this.#containerConnections.delete(connectionId);
      const nested = this.all.get(containerAgent)?.nested;
      if (nested?.outputClosed(connectionId) !== true) nested?.waiterClosed(connectionId);
      return true;
    }
    const agentId = this.#executorConnections.get(connectionId);
    if (agentId === undefined) return false;
    this.#executorConnections.delete(connectionId);
    this.all.get(agentId)?.executorDisconnected(connectionId);
    return true;
  }

  /** One flags object for all the agents given the same flags: a large cluster has many agents. */
  #fullFlags(flags: Partial<AgentFlags> | undefined): AgentFlags {
    if (flags === undefined) return DEFAULT_AGENT_FLAGS;
    let full = this.#flags.get(flags);
    if (full === undefined) this.#flags.set(flags, (full = { ...DEFAULT_AGENT_FLAGS, ...flags }));
    return full;
  }
}
