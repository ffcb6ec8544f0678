/** What an agent's routes are bound to: the cluster, and how a request finds its agent. */
import type { FastifyRequest } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { EngineHelpers } from './engine-helper.js';
import type { ExecutorRouteOptions } from './executor-route.js';

/**
 * The agent a request is for; undefined until the agent exists. An app of
 * its own per agent knows it; one app shared by agents on their own
 * loopback addresses finds it by the address the connection arrived on.
 */
export interface AgentBinding {
  readonly driver: ClusterDriver;
  readonly agentId: (req: FastifyRequest) => string | undefined;
  /** Where executor streams go; without, the executor API is not served. */
  readonly executors?: Pick<ExecutorRouteOptions, 'connections' | 'budget' | 'tokens'> & {
    /** The exec helper of engine tasks, when the container engine runs. */
    readonly engine?: EngineHelpers;
  };
}

/** Upstream's answer while its agent cannot serve its state. */
export const NOT_RECOVERED = 'Agent has not finished recovery';
