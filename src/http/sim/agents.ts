/**
 * The master's agents in every state on the control API (its JSON is
 * wire/sim/agents.ts's):
 *
 *   GET /sim/v1/agents   {"agents": [{"id", "hostname", "port", "state"}]}
 */
import type { FastifyInstance } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import { agentStatesToJson } from '../../wire/sim/agents.js';
import { serveMethods } from '../methods.js';

export function registerAgentsRoute(app: FastifyInstance, driver: ClusterDriver): void {
  serveMethods(app, '/sim/v1/agents', ['GET'], (_req, reply) => {
    const body = driver.read((view) => agentStatesToJson(view));
    return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(body));
  });
}
