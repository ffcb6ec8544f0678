/**
 * The master's maintenance endpoints, under `/` and `/master/`, as
 * upstream serves them (in its read-write realm: authenticated when HTTP
 * authentication is on):
 *
 *   /maintenance/schedule  GET  200 the schedule as JSON (`{}` when empty)
 *                          POST 200; 400 a body that is no Schedule or a schedule upstream refuses
 *   /maintenance/status    GET  200 DRAINING machines with the frameworks' answers, DOWN machines
 *   /machine/down          POST 200; 400 (a JSON array of MachineIDs, DRAINING machines only)
 *   /machine/up            POST 200; 400 (DOWN machines only)
 *
 * Other methods are 405. A refusal of the ACLs is 403 with its reason; the
 * reads leave out what the reader may not see. The changes go to the core
 * as the operator calls UPDATE_MAINTENANCE_SCHEDULE, START_MAINTENANCE and
 * STOP_MAINTENANCE.
 */
import type { FastifyReply, FastifyRequest, FastifyInstance } from 'fastify';
import type { OperatorCall } from '../../core/model/operator-types.js';
import type { ClusterView } from '../../core/view.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { clusterStatusToWire, machineIdsFromJson, scheduleFromJson, scheduleToWire } from '../../wire/maintenance.js';
import { jsonpQuery } from '../../wire/v0/index.js';
import { viewerOf, type Viewer } from '../../wire/view-filter.js';
import { principalOf, READWRITE_REALM } from '../auth.js';
import { sendCallError, sendError } from '../errors.js';
import { serveMethods } from '../methods.js';
import { sendEmpty } from '../replies.js';
import { queryOf, sendJson } from '../v0-replies.js';

const PATHS = ['/maintenance/schedule', '/maintenance/status', '/machine/down', '/machine/up'];

/** The endpoints' URLs with their realm, for `requireAuthentication`. */
export function maintenanceRoutes(): Map<string, string> {
  return new Map(['', '/master'].flatMap((prefix) => PATHS.map((path) => [`${prefix}${path}`, READWRITE_REALM])));
}

export function registerMaintenanceRoutes(app: FastifyInstance, prefix: string, driver: ClusterDriver): void {
  const read =
    (render: (view: ClusterView, viewer: Viewer) => unknown) => (req: FastifyRequest, reply: FastifyReply) => {
      const query = queryOf(req, jsonpQuery);
      if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
      const principal = principalOf(req);
      const body = driver.read((view) => render(view, viewerOf(view.authorizer, principal)));
      return sendJson(req, reply, body, query.value.jsonp);
    };
  const change =
    <T>(parse: (text: string) => T | string, call: (value: T) => OperatorCall) =>
    (req: FastifyRequest, reply: FastifyReply) => {
      const text = req.body instanceof Buffer ? req.body.toString('utf8') : '';
      const value = parse(text);
      if (typeof value === 'string') return sendError(reply, 'CALL_REFUSED', value);
      const principal = principalOf(req);
      const outcome = driver.input((cluster) => cluster.operator(call(value), principal));
      if (!outcome.ok) return sendCallError(reply, outcome.error, { frameworkId: '', streamId: undefined });
      return sendEmpty(reply, 200);
    };
  const readSchedule = read(scheduleToWire);
  const updateSchedule = change(scheduleFromJson, (schedule) => ({ type: 'UPDATE_MAINTENANCE_SCHEDULE', schedule }));
  serveMethods(app, `${prefix}/maintenance/schedule`, ['GET', 'POST'], (req, reply) =>
    req.method === 'GET' ? readSchedule(req, reply) : updateSchedule(req, reply),
  );
  serveMethods(app, `${prefix}/maintenance/status`, ['GET'], read(clusterStatusToWire));
  serveMethods(
    app,
    `${prefix}/machine/down`,
    ['POST'],
    change(machineIdsFromJson, (machines) => ({ type: 'START_MAINTENANCE', machines })),
  );
  serveMethods(
    app,
    `${prefix}/machine/up`,
    ['POST'],
    change(machineIdsFromJson, (machines) => ({ type: 'STOP_MAINTENANCE', machines })),
  );
}
