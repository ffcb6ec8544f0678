/**
 * The protocol-misuse report on the control API (its JSON is
 * wire/sim/misuse.ts's):
 *
 *   GET /sim/v1/misuse   {"time_ms", "frameworks": [{"framework_id", "name", "misuses": [
 *                          {"kind", "count", "first_time_ms", "last_time_ms", "explanation",
 *                           "examples": [{"time_ms", "ids": {"task_id", "agent_id", "offer_id",
 *                           "uuid", "stream_id"}, "detail"}]}]}]}
 */
import type { FastifyInstance } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import { serveMethods } from '../methods.js';
import { principalOf } from '../auth.js';
import { misuseToJson } from '../../wire/sim/misuse.js';
import { simReaderOf } from '../../wire/sim/view.js';

export function registerMisuseRoute(app: FastifyInstance, driver: ClusterDriver): void {
  serveMethods(app, '/sim/v1/misuse', ['GET'], (req, reply) => {
    const report = driver.read((view) => {
      const reader = simReaderOf(view, principalOf(req));
      return reader === undefined ? view.misuse() : reader.misuse(view.misuse());
    });
    return reply
      .code(200)
      .header('content-type', 'application/json')
      .send(JSON.stringify(misuseToJson(report)));
  });
}
