/**
 * The control API of the simulation, on the master's port under
 * `/sim/v1/` (JSON): the clock and faults, so that a test or a script can
 * drive a cluster started with `clustersim up --time virtual` from outside.
 *
 *   GET  /sim/v1/clock     {"time_ms", "epoch_ms", "mode", "next_due_ms"}
 *   POST /sim/v1/advance   {"ms": N}: cluster time moves N ms on, running all that falls due
 *                          (virtual time only: 409 while the clock follows the wall clock)
 *   POST /sim/v1/faults    a fault as wire/sim/faults.ts reads it -> {"type", ...}: "rule_id" for a rule,
 *                          "agent_id" and the agent's process "state" for a crash or restart,
 *                          "agent_id" of the agent added or removed,
 *                          "framework_id" for a fault of a framework's stream, "wall_time_ms" after
 *                          a clock jump
 *                          "master" and the "leader" (an index, null during an election) for a master fault
 *   GET  /sim/v1/trace     the trace as JSON lines ({"seq", "time_ms", "kind", "line"}):
 *                          the entries kept (all when recording, else the recent ones), then the
 *                          new ones as they come, until the client goes; a reader that falls
 *                          more than 16 MiB behind is cut
 *   GET  /sim/v1/misuse    the protocol-misuse report (sim/misuse.ts)
 *   GET  /sim/v1/agents    the master's agents in every state (sim/agents.ts)
 *
 * and, in sim/control-route.ts, run_until_idle, run_until, reset, snapshot and restore.
 *
 * Who may call them, with authentication on, is sim/auth.ts's; what the
 * trace shows each reader, wire/sim/view.ts's.
 *
 * A body that is not such JSON is 400 with the reason (so is an ambiguous id);
 * an unknown agent, framework, executor, task or container 404; a fault its
 * target's state rules out now (a framework with no stream open, a task not
 * running, an agent down, memory limits not enforced) 409.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { traceJsonLine, type TraceEntry } from '../../core/kernel/trace.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { CallError } from '../../core/model/errors.js';
import { NO_LEADER } from '../../core/faults/master.js';
import type { Fault, FaultResult } from '../../core/faults/vocabulary.js';
import type { Outcome } from '../../core/model/errors.js';
import { sendError } from '../errors.js';
import { MAX_SPAN_MS, parseFault } from '../../wire/sim/faults.js';
import { serveMethods } from '../methods.js';
import { registerMisuseRoute } from './misuse.js';
import { registerAgentsRoute } from './agents.js';
import { registerSimControlRoutes } from './control-route.js';
import { SimControl } from '../../runtime/sim-control.js';
import { principalOf } from '../auth.js';
import { simReaderOf, type SimReader } from '../../wire/sim/view.js';
import type { ServerResponse } from 'node:http';

/** How an `add_agent` fault goes in when the composition root places the agent (http/sim/part.ts). */
export type AddAgentHook = (fault: Extract<Fault, { type: 'add_agent' }>) => Promise<Outcome<FaultResult>>;

/** The largest step one advance may take: a day of cluster time. */
export const MAX_ADVANCE_MS = MAX_SPAN_MS;

export function registerSimRoutes(
  app: FastifyInstance,
  driver: ClusterDriver,
  control: SimControl = new SimControl(driver),
  addAgent?: AddAgentHook,
): void {
  serveMethods(app, '/sim/v1/clock', ['GET'], (_req, reply) => json(reply, clock(driver)));
  serveMethods(app, '/sim/v1/advance', ['POST'], (req, reply) => advance(req, reply, driver));
  serveMethods(app, '/sim/v1/faults', ['POST'], (req, reply) => fault(req, reply, driver, addAgent));
  const traceReaders = new Set<ServerResponse>();
  // A trace reader reads one cluster's trace: when a reset or a restore swaps it, the stream ends.
  driver.onReplace(() =>
    [...traceReaders].forEach((res) => {
      res.end();
    }),
  );
  serveMethods(app, '/sim/v1/trace', ['GET'], (req, reply) =>
    streamTrace(reply, driver, traceReaders, simReaderOf(driver.cluster.view, principalOf(req))),
  );
  registerSimControlRoutes(app, control);
  registerMisuseRoute(app, driver);
  registerAgentsRoute(app, driver);
}

/** How far a trace reader may fall behind before its stream is cut. */
const MAX_TRACE_BACKLOG_BYTES = 16 * 1024 * 1024;

/** The trace as JSON lines, the entries `reader` may not see left out (wire/sim/view.ts). */
function streamTrace(
  reply: FastifyReply,
  driver: ClusterDriver,
  readers: Set<ServerResponse>,
  reader: SimReader | undefined,
): undefined {
  const trace = driver.cluster.trace;
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' });
  res.socket?.setTimeout(0);
  const write = (entry: TraceEntry): void => {
    if (res.writableLength > MAX_TRACE_BACKLOG_BYTES) return void res.destroy(new Error('trace reader too far behind'));
    if (reader === undefined || reader.entry(entry)) res.write(`${traceJsonLine(entry)}\n`);
  };
  for (const entry of trace.entries()) write(entry);
  const listener = (entry: TraceEntry): void => write(entry);
  trace.onEntry(listener);
  readers.add(res);
  res.once('close', () => {
    readers.delete(res);
    trace.offEntry(listener);
  });
  return undefined;
}

function clock(driver: ClusterDriver): object {
  return driver.read(() => {
    const { cluster } = driver;
    return {
      time_ms: cluster.now(),
      epoch_ms: cluster.epochMs,
      mode: driver.mode,
      next_due_ms: cluster.nextDueMs() ?? null,
    };
  });
}

function advance(req: FastifyRequest, reply: FastifyReply, driver: ClusterDriver): FastifyReply {
  const body = bodyOf(req);
  const ms = body?.['ms'];
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
    return sendError(
      reply,
      'SIM_REQUEST_INVALID',
      `Expecting 'ms' to be a whole number of milliseconds from 0 to ${MAX_ADVANCE_MS}`,
    );
  }
  if (driver.mode !== 'virtual')
    return sendError(
      reply,
      'CONFLICT',
      'The clock follows the wall clock: advance needs a cluster in virtual time (--time virtual)',
    );
  driver.advance(ms);
  return json(reply, clock(driver));
}

async function fault(
  req: FastifyRequest,
  reply: FastifyReply,
  driver: ClusterDriver,
  addAgent: AddAgentHook | undefined,
): Promise<FastifyReply> {
  const body = bodyOf(req);
  const parsed = body === undefined ? 'Expecting a JSON object' : parseFault(body);
  if (typeof parsed === 'string') return sendError(reply, 'SIM_REQUEST_INVALID', parsed);
  const outcome =
    parsed.type === 'add_agent' && addAgent !== undefined
      ? await addAgent(parsed)
      : driver.input((c) => c.inject(parsed));
  if (!outcome.ok) return sendError(reply, faultRefusal(outcome.error), outcome.error.message);
  return json(reply, { type: parsed.type, ...answerOf(parsed, outcome.value, driver) });
}

/** The answer to a fault the core refused: unknown ids 404, an ambiguous one 400, the rest the target's state forbids (409). */
function faultRefusal({
  code,
  message,
}: CallError): 'TARGET_NOT_FOUND' | 'SIM_REQUEST_INVALID' | 'CONFLICT' | 'NO_LEADER' {
  if (code === 'NOT_FOUND') return 'TARGET_NOT_FOUND';
  if (code === 'UNAVAILABLE' && message === NO_LEADER) return 'NO_LEADER';
  return code === 'INVALID' ? 'SIM_REQUEST_INVALID' : 'CONFLICT';
}

/** What the answer to a fault says beyond its type: the rule added, the agent's process state, the framework, the wall clock. */
function answerOf(fault: Fault, result: FaultResult, driver: ClusterDriver): object {
  if (result.ruleId !== undefined) return { rule_id: result.ruleId };
  if (
    fault.type === 'drop_framework_connection' ||
    fault.type === 'stall_heartbeats' ||
    fault.type === 'resume_heartbeats'
  ) {
    return { framework_id: fault.frameworkId };
  }
  if (fault.type === 'clock_jump') return { wall_time_ms: driver.read((view) => view.wallTimeMs()) };
  if (fault.type === 'remove_network_rule') return { rule_id: fault.ruleId };
  if (result.agentId !== undefined) return { agent_id: result.agentId };
  if (result.master !== undefined)
    return { master: result.master, leader: driver.read((view) => view.leaderIndex() ?? null) };
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
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function json(reply: FastifyReply, value: object): FastifyReply {
  return reply.code(200).header('content-type', 'application/json').send(JSON.stringify(value));
}
