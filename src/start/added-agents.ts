/**
 * Agents that join after the start (an `add_agent` fault) get an endpoint
 * as those the cluster started with: a socket of their own feeding the
 * agents' app (agents.ts), at the address the core gave them
 * (core/faults/agents.ts: the first agent's host and the next port), so
 * that the master's `pid` and `hostname:port` of one lead to its agent
 * API, and executors (`--custom-executors spawn` or `await`) reach it at
 * its `AGENT_ENDPOINT`; with advertised ports, an ephemeral port, as the
 * others have. With `--http-executor-domain-sockets` it has its socket too.
 * When it is gone (`remove_agent`, MARK_AGENT_GONE) its endpoint closes.
 *
 * The library's `addAgent` and `removeAgent` (`RunningCluster`) are these
 * faults, awaited until the endpoint follows. Where the agents took
 * ephemeral ports (port addressing, `agentPort` 0, no advertised ports),
 * `addAgent` first listens on an ephemeral port and gives the core that
 * port in its fault, so the new agent never meets a port another process
 * holds; the trace has the port, so a replay places the agent alike.
 *
 * The core chooses where an added agent is, so the trace is the same with
 * listeners or without: the endpoints follow the core, after the input
 * that changed its agents, never inside it. A reset or a restore brings
 * them in line with the new cluster's agents. Part of the composition
 * root, with cluster.ts.
 */
import type { Logger } from 'pino';
import type { Cluster } from '../core/cluster.js';
import type { Resources } from '../core/model/resources.js';
import type { Attribute } from '../core/model/types.js';
import type { Outcome } from '../core/model/errors.js';
import type { Fault, FaultResult } from '../core/faults/vocabulary.js';
import { parseAttributes } from '../wire/convert-common.js';
import { agentResourcesOf } from './resources.js';
import { listenAgentSocket, type AgentSocket } from '../http/agent/listener.js';
import { closeDomainSocket } from '../http/domain-sockets.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { serveDomainSocket, type AgentEndpoint, type AgentServer, type AgentsSpec } from './agents.js';

/** An added agent as the core placed it. */
interface Placed {
  readonly id: string;
  readonly pid: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
}

type AddAgentFault = Extract<Fault, { type: 'add_agent' }>;

/** What an added agent is served by. */
interface Served {
  readonly socket: AgentSocket;
  readonly endpoint: AgentEndpoint;
}

/** An agent the library adds: what `RunningCluster.addAgent` takes, parsed. */
export interface NewAgent {
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
  readonly hostname?: string;
}

/** What `RunningCluster.addAgent` takes: upstream's agent flag forms; the cluster's own agents' resources by default. */
export interface AddAgentOptions {
  /** `--resources` form, e.g. `cpus:4;mem:8192`. */
  readonly resources?: string;
  /** `--attributes` form, e.g. `rack:r1;zone:a`. */
  readonly attributes?: string;
  /** Its host name; the first agent's by default. */
  readonly hostname?: string;
}

/** The agent `options` describe, or a TypeError saying what is wrong with them. */
export function newAgentOf(options: AddAgentOptions, machine: { readonly resources: Resources }): NewAgent {
  const resources = options.resources === undefined ? machine.resources : agentResourcesOf(options.resources);
  if (typeof resources === 'string') throw new TypeError(`addAgent: resources: ${resources}`);
  const attributes = parseAttributes(options.attributes ?? '');
  if (typeof attributes === 'string') throw new TypeError(`addAgent: attributes: ${attributes}`);
  if (options.hostname === '') throw new TypeError('addAgent: hostname: expecting a non-empty host name');
  return { resources, attributes, ...(options.hostname === undefined ? {} : { hostname: options.hostname }) };
}

export class AddedAgents {
  readonly #initial: ReadonlySet<string>;
  /** Added agents with an endpoint (undefined: one that could not listen, logged). */
  readonly #served = new Map<string, Served | undefined>();
  #queued = false;
  #work: Promise<void> = Promise.resolve();
  #closed = false;
  /** Sockets listening for agents about to be added, by their port. */
  readonly #reserved = new Map<number, AgentSocket>();

  constructor(
    private readonly driver: ClusterDriver,
    private readonly server: AgentServer,
    private readonly spec: AgentsSpec,
    /** The cluster's agents' endpoints: those it started with, then those added, as they join and go. */
    private readonly endpoints: AgentEndpoint[],
    private readonly logger: Logger,
  ) {
    this.#initial = new Set(endpoints.map((e) => e.id));
    this.#watch(driver.cluster);
    driver.onReplace((cluster) => {
      this.#watch(cluster);
      this.#queue();
    });
  }

  /** Closes every added agent's socket (the cluster closes, its domain sockets with the others). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#work;
    const sockets = [...[...this.#served.values()].map((served) => served?.socket), ...this.#reserved.values()];
    await Promise.all(sockets.map((socket) => socket?.close()));
  }

  /**
   * Adds an agent (an `add_agent` fault) and resolves to its endpoint once
   * it is served; rejects if the fault is refused or its socket cannot
   * listen.
   */
  async add(agent: NewAgent): Promise<AgentEndpoint> {
    const hostname = agent.hostname === undefined ? {} : { hostname: agent.hostname };
    const outcome = await this.inject({
      type: 'add_agent',
      resources: agent.resources,
      attributes: agent.attributes,
      ...hostname,
    });
    if (!outcome.ok) throw new Error(outcome.error.message);
    const id = outcome.value.agentId!;
    await this.#followed();
    const served = this.#served.get(id);
    if (served === undefined) throw new Error(`agent ${id}: its endpoint could not listen (the log says why)`);
    return served.endpoint;
  }

  /**
   * An `add_agent` fault (the control API's, the library's): where the
   * agents took ephemeral ports, at a port listening already for it.
   */
  async inject(fault: AddAgentFault): Promise<Outcome<FaultResult>> {
    const socket = this.#ephemeral() && fault.port === undefined ? await this.#reserve() : undefined;
    const port = socket === undefined ? {} : { port: socket.port };
    const outcome = this.driver.input((c) => c.inject({ ...fault, ...port }));
    if (!outcome.ok && socket !== undefined) {
      this.#reserved.delete(socket.port);
      await socket.close();
    }
    return outcome;
  }

  /** Removes an agent for good (a `remove_agent` fault) and resolves once its endpoint has closed. */
  async remove(agentId: string): Promise<void> {
    const outcome = this.driver.input((c) => c.inject({ type: 'remove_agent', agentId }));
    if (!outcome.ok) throw new Error(outcome.error.message);
    await this.#followed();
  }

  /** Whether the agents took ephemeral ports of their own: an added one can take one too. */
  #ephemeral(): boolean {
    return this.spec.firstPort === 0 && this.spec.advertiseFirstPort === undefined;
  }

  /** An ephemeral port where the core will place the agent: the agents' host, or the first agent's address (loopback addressing). */
  async #reserve(): Promise<AgentSocket> {
    const firstIp = this.driver.read((view) => {
      const [first] = view.agentNodeIds();
      return first === undefined ? undefined : view.agentNode(first)?.config.ip;
    });
    const host = this.server.directory.by === 'address' ? (firstIp ?? '127.0.0.1') : this.server.host;
    const socket = await listenAgentSocket(await this.server.app(), host, 0, this.spec.listener.maxConnections);
    this.#reserved.set(socket.port, socket);
    return socket;
  }

  /** Once the endpoints have followed the input just made (its follow was queued as a microtask within it). */
  async #followed(): Promise<void> {
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    await this.#work;
  }

  #watch(cluster: Cluster): void {
    const changed = (): void => this.#queue();
    cluster.trace.onKind('fault:add_agent', changed);
    cluster.trace.onKind('agent:gone', changed);
  }

  /** Once the input that changed the agents is over, in turn with the changes before. */
  #queue(): void {
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => {
      this.#queued = false;
      // What cannot be served is logged: the cluster runs on without that endpoint.
      this.#work = this.#work
        .then(() => this.#follow())
        .catch((error: unknown) => this.logger.warn({ err: error }, 'agents added: an endpoint could not follow'));
    });
  }

  /** Serves the added agents the core has and the master has not marked gone; closes the others'. */
  async #follow(): Promise<void> {
    if (this.#closed || this.driver.failure !== undefined) return;
    const wanted = this.driver.read((view) =>
      view.agentNodeIds().flatMap((id): Placed[] => {
        const node = view.agentNode(id)!;
        if (this.#initial.has(id) || view.agent(id)?.state === 'gone') return [];
        return [{ id, pid: node.pid, hostname: node.config.hostname, ip: node.config.ip, port: node.config.port }];
      }),
    );
    const ids = new Set(wanted.map((a) => a.id));
    for (const id of [...this.#served.keys()]) if (!ids.has(id)) await this.#unserve(id);
    for (const agent of wanted) if (!this.#served.has(agent.id)) await this.#serve(agent);
  }

  /**
   * Its socket: at its own address and port where agents share a port
   * (loopback addressing), at its port where each has one; an ephemeral
   * port where the cluster advertises ports of its choosing.
   */
  async #serve(agent: Placed): Promise<void> {
    const { directory } = this.server;
    const own = directory.by === 'address';
    const host = own ? agent.ip : this.server.host;
    const port = this.spec.advertiseFirstPort === undefined ? agent.port : 0;
    let socket: AgentSocket;
    const reserved = this.#reserved.get(agent.port);
    this.#reserved.delete(agent.port);
    try {
      socket =
        reserved ?? (await listenAgentSocket(await this.server.app(), host, port, this.spec.listener.maxConnections));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      this.logger.warn(
        { agentId: agent.id, host, port },
        `agent ${agent.id}: cannot listen on ${host}:${port} (${code}): its endpoint is not served`,
      );
      this.#served.set(agent.id, undefined);
      return;
    }
    if (own) directory.addEndpoint(host, socket.port, agent.id);
    else directory.add(socket.port, agent.id);
    const url = `http://${host}:${socket.port}`;
    const listening = { id: agent.id, url, pid: agent.pid, hostname: agent.hostname, port: socket.port };
    // Kept before its domain socket listens, so that the socket closes even if that fails.
    this.#served.set(agent.id, { socket, endpoint: listening });
    const endpoint: AgentEndpoint = {
      ...listening,
      ...(await serveDomainSocket(await this.server.app(), agent.id, this.spec)),
    };
    this.#served.set(agent.id, { socket, endpoint });
    this.endpoints.push(endpoint);
  }

  async #unserve(agentId: string): Promise<void> {
    const served = this.#served.get(agentId);
    this.#served.delete(agentId);
    if (served === undefined) return;
    this.server.directory.remove(agentId);
    const listed = this.endpoints.indexOf(served.endpoint);
    if (listed >= 0) this.endpoints.splice(listed, 1);
    await served.socket.close();
    const domainSockets = this.spec.domainSockets?.servers ?? [];
    const i = domainSockets.findIndex((d) => d.path === served.endpoint.domainSocket);
    if (i < 0) return;
    const [domain] = domainSockets.splice(i, 1);
    await closeDomainSocket(domain!.server, domain!.path);
  }
}
