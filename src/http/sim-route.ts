/**
 * The control API of the simulation, on the master's port under
 * `/sim/v1/` (JSON): the clock and faults, so that a test or a script can
 * drive a cluster started with `clustersim up --time virtual` from outside.
 *
 *   GET  /sim/v1/clock     {"time_ms", "epoch_ms", "mode", "next_due_ms"}
 *   POST /sim/v1/advance   {"ms": N}: cluster time moves N ms on, running all that falls due
 *                          (virtual time only: 409 while the clock follows the wall clock)
 *   POST /sim/v1/faults    a fault as fault-body.ts reads it -> {"type", ...}: "rule_id" for a rule,
 *                          "agent_id" and the agent's process "state" for a crash or restart,
 *                          "master" and the "leader" (an index, null during an election) for a master fault
 *   GET  /sim/v1/trace     the trace as JSON lines ({"seq", "time_ms", "kind", "line"}):
 *                          the entries kept (all when recording, else the recent ones), then the
 *                          new ones as they come, until the client goes; a reader that falls
 *                          more than 16 MiB behind is cut
 *
 * A body that is not such JSON is 400 with the reason; an unknown agent 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TraceEntry } from '../core/trace.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { Fault, FaultResult } from '../core/faults.js';
import { sendError } from './errors.js';
import { MAX_SPAN_MS, parseFault } from './fault-body.js';
import { serveMethods } from './methods.js';

/** The largest step one advance may take: a day of cluster time. */
export const MAX_ADVANCE_MS = MAX_SPAN_MS;


export function registerSimRoutes(app: FastifyInstance, driver: ClusterDriver): void {
  serveMethods(app, '/sim/v1/clock', ['GET'], (_req, reply) => json(reply, clock(driver)));
  serveMethods(app, '/sim/v1/advance', ['POST'], (req, reply) => advance(req, reply, driver));
  serveMethods(app, '/sim/v1/faults', ['POST'], (req, reply) => fault(req, reply, driver));
  serveMethods(app, '/sim/v1/trace', ['GET'], (_req, reply) => streamTrace(reply, driver));
}

/** How far a trace reader may fall behind before its stream is cut. */
const MAX_TRACE_BACKLOG_BYTES = 16 * 1024 * 1024;

function streamTrace(reply: FastifyReply, driver: ClusterDriver): undefined {
  const trace = driver.cluster.trace;
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' });
  res.socket?.setTimeout(0);
  const write = (entry: TraceEntry): void => {
    if (res.writableLength > MAX_TRACE_BACKLOG_BYTES) return void res.destroy(new Error('trace reader too far behind'));
    res.write(`${JSON.stringify({ seq: entry.seq, time_ms: entry.timeMs, kind: entry.kind, line: entry.line })}\n`);
  };
  for (const entry of trace.entries()) write(entry);
  const listener = (entry: TraceEntry): void => write(entry);
  trace.onEntry(listener);
  res.once('close', () => trace.offEntry(listener));
  return undefined;
}

function clock(driver: ClusterDriver): object {
  return driver.read(() => {
    const { cluster } = driver;
    return { time_ms: cluster.now(), epoch_ms: cluster.epochMs, mode: driver.mode, next_due_ms: cluster.nextDueMs() ?? null };
  });
}

function advance(req: FastifyRequest, reply: FastifyReply, driver: ClusterDriver): FastifyReply {
  const body = bodyOf(req);
  const ms = body?.['ms'];
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
    return sendError(reply, 'SIM_REQUEST_INVALID', `Expecting 'ms' to be a whole number of milliseconds from 0 to ${MAX_ADVANCE_MS}`);
  }
  if (driver.mode !== 'virtual') return sendError(reply, 'CONFLICT', 'The clock follows the wall clock: advance needs a cluster in virtual time (--time virtual)');
  driver.advance(ms);
  return json(reply, clock(driver));
}

function fault(req: FastifyRequest, reply: FastifyReply, driver: ClusterDriver): FastifyReply {
  const body = bodyOf(req);
  const parsed = body === undefined ? 'Expecting a JSON object' : parseFault(body);
  if (typeof parsed === 'string') return sendError(reply, 'SIM_REQUEST_INVALID', parsed);
  const outcome = driver.input((c) => c.inject(parsed));
  if (!outcome.ok) return outcome.error.code === 'UNAVAILABLE' ? sendError(reply, 'NO_LEADER') : sendError(reply, 'TARGET_NOT_FOUND', outcome.error.message);
  return json(reply, { type: parsed.type, ...answerOf(parsed, outcome.value, driver) });
}

/** What the answer to a fault says beyond its type: the rule added, the agent's process state. */
function answerOf(fault: Fault, result: FaultResult, driver: ClusterDriver): object {
  if (result.ruleId !== undefined) return { rule_id: result.ruleId };
  if (fault.type === 'remove_network_rule') return { rule_id: fault.ruleId };
  if (result.master !== undefined) return { master: result.master, leader: driver.read((view) => view.leaderIndex() ?? null) };
  if (fault.type === 'crash_agent' || fault.type === 'restart_agent') {
    return { agent_id: fault.agentId, state: driver.read((view) => view.agentProcessState(fault.agentId)) };
  }
  return {};
}

/** The body as a JSON object, or undefined. */
function bodyOf(req: FastifyRequest): Record<string, unknown> | undefined {
  const raw = req.body instanceof Buffer ? req.body.toString('utf8') : '';
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function json(reply: FastifyReply, value: object): FastifyReply {
  return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(value));
}
