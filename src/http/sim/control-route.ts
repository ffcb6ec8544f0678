/**
 * The control API's runs and rewinds (`/sim/v1/`, JSON), decoded here and
 * done by the runtime's `SimControl`:
 *
 *   POST /sim/v1/run_until_idle  {"max_ms"?}              -> {"idle", "time_ms"}
 *   POST /sim/v1/run_until       {"condition", "max_ms"}   -> {"held", "time_ms"}
 *   POST /sim/v1/reset           {"seed"?}                 -> {"seed", "time_ms"}   (a seed of at most 256 characters)
 *   POST /sim/v1/snapshot        (no body, or {})          -> {"snapshot_id", "time_ms"}
 *   POST /sim/v1/restore         {"snapshot_id"}           -> {"snapshot_id", "time_ms"}
 *
 * Conditions are read by wire/sim/conditions.ts (its table has the
 * vocabulary, the scenario files' own): `{"tasks": {"state":
 * "TASK_RUNNING", "min": 2}}`. A body that is not such JSON is 400; running in real time, or a rewind
 * of a cluster that does not record its inputs, 409; an unknown snapshot 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type SimControl, SimControlError } from '../../runtime/sim-control.js';
import { sendError } from '../errors.js';
import { parseCondition } from '../../wire/sim/conditions.js';
import { MAX_SPAN_MS } from '../../wire/sim/faults.js';
import { serveMethods } from '../methods.js';

type Body = Readonly<Record<string, unknown>>;

/**
 * The longest seed a reset takes: every random stream of the cluster is
 * seeded from a hash of the seed text, and the seed comes back in the
 * answer and the trace, so a seed of megabytes would hold the cluster up.
 */
export const MAX_SEED_LENGTH = 256;

export function registerSimControlRoutes(app: FastifyInstance, control: SimControl): void {
  const post = (path: string, handle: (body: Body) => object): void =>
    serveMethods(app, `/sim/v1/${path}`, ['POST'], (req, reply) => answer(req, reply, handle));
  post('run_until_idle', (body) => {
    const result = control.runUntilIdle(span(body['max_ms'], MAX_SPAN_MS));
    return { idle: result.idle, time_ms: result.timeMs };
  });
  post('run_until', (body) => {
    const condition = parseCondition(body['condition']);
    if (typeof condition === 'string') throw new SimControlError('invalid', condition);
    if (body['max_ms'] === undefined)
      throw new SimControlError(
        'invalid',
        `Expecting 'max_ms' to be a whole number of milliseconds from 0 to ${MAX_SPAN_MS}`,
      );
    const result = control.runUntil(condition, span(body['max_ms'], MAX_SPAN_MS));
    return { held: result.held, time_ms: result.timeMs };
  });
  post('reset', (body) => {
    const seed = body['seed'];
    const text = typeof seed === 'string' && seed !== '' && seed.length <= MAX_SEED_LENGTH;
    if (seed !== undefined && !(text || (typeof seed === 'number' && Number.isSafeInteger(seed)))) {
      throw new SimControlError(
        'invalid',
        `Expecting 'seed' to be a whole number or a non-empty string of at most ${MAX_SEED_LENGTH} characters`,
      );
    }
    const result = control.reset(seed);
    return { seed: result.seed, time_ms: result.timeMs };
  });
  post('snapshot', () => {
    const result = control.snapshot();
    return { snapshot_id: result.snapshotId, time_ms: result.timeMs };
  });
  post('restore', (body) => {
    const id = body['snapshot_id'];
    if (typeof id !== 'string' || id === '')
      throw new SimControlError('invalid', "Expecting 'snapshot_id' to be present");
    const result = control.restore(id);
    return { snapshot_id: result.snapshotId, time_ms: result.timeMs };
  });
}

/** A duration in the body, or its default when absent. */
function span(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_SPAN_MS) {
    throw new SimControlError(
      'invalid',
      `Expecting 'max_ms' to be a whole number of milliseconds from 0 to ${MAX_SPAN_MS}`,
    );
  }
  return value;
}

function answer(req: FastifyRequest, reply: FastifyReply, handle: (body: Body) => object): FastifyReply {
  const body = bodyOf(req);
  if (body === undefined) return sendError(reply, 'SIM_REQUEST_INVALID', 'Expecting a JSON object');
  let value: object;
  try {
    value = handle(body);
  } catch (error) {
    if (!(error instanceof SimControlError)) throw error;
    if (error.reason === 'invalid') return sendError(reply, 'SIM_REQUEST_INVALID', error.message);
    if (error.reason === 'not-found') return sendError(reply, 'TARGET_NOT_FOUND', error.message);
    return sendError(reply, 'CONFLICT', error.message);
  }
  return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(value));
}

/** The body as a JSON object (an empty body is `{}`), or undefined. */
function bodyOf(req: FastifyRequest): Body | undefined {
  const raw = req.body instanceof Buffer ? req.body.toString('utf8') : '';
  if (raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : undefined;
  } catch {
    return undefined;
  }
}
