/**
 * The control API of the simulation, on the master's port under
 * `/sim/v1/` (JSON): the clock and faults, so that a test or a script can
 * drive a cluster started with `clustersim up --time virtual` from outside.
 *
 *   GET  /sim/v1/clock     {"time_ms", "epoch_ms", "mode", "next_due_ms"}
 *   POST /sim/v1/advance   {"ms": N}: cluster time moves N ms on, running all that falls due
 *                          (virtual time only: 409 while the clock follows the wall clock)
 *   POST /sim/v1/faults    {"type": "crash_agent" | "restart_agent" | "partition" | "heal",
 *                           "agent_id", "recover": "reconnect" | "cleanup" (restart_agent)}
 *                          partition and heal cut and mend the agent's link to the master;
 *                          {"type": "network_rule", "action": "drop" | "delay" | "duplicate", "from", "to",
 *                           "messages": [TYPE...], "delay_ms", "jitter_ms", "probability"} -> {"rule_id"};
 *                          {"type": "remove_network_rule", "rule_id"}
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
import { sendError } from './errors.js';
import { serveMethods } from './methods.js';

/** The largest step one advance may take: a day of cluster time. */
export const MAX_ADVANCE_MS = 86_400_000;

const AGENT_FAULTS = ['crash_agent', 'restart_agent', 'partition', 'heal'] as const;
const FAULTS = [...AGENT_FAULTS, 'network_rule', 'remove_network_rule'] as const;
type FaultType = (typeof AGENT_FAULTS)[number];
const RULE_ACTIONS = ['drop', 'delay', 'duplicate'] as const;

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
  const type = body?.['type'];
  if (typeof type !== 'string' || !(FAULTS as readonly string[]).includes(type)) {
    return sendError(reply, 'SIM_REQUEST_INVALID', `Expecting 'type' to be one of ${FAULTS.join(', ')}`);
  }
  if (type === 'network_rule') return networkRule(reply, driver, body!);
  if (type === 'remove_network_rule') {
    const ruleId = body!['rule_id'];
    if (typeof ruleId !== 'number' || !Number.isInteger(ruleId)) return sendError(reply, 'SIM_REQUEST_INVALID', "Expecting 'rule_id' to be present");
    driver.input((c) => c.removeNetworkRule(ruleId));
    return json(reply, { rule_id: ruleId });
  }
  const agentId = body!['agent_id'];
  if (typeof agentId !== 'string') return sendError(reply, 'SIM_REQUEST_INVALID', "Expecting 'agent_id' to be present");
  const recover = body!['recover'] ?? 'reconnect';
  if (recover !== 'reconnect' && recover !== 'cleanup') return sendError(reply, 'SIM_REQUEST_INVALID', "Expecting 'recover' to be reconnect or cleanup");
  if (driver.read((view) => view.agentNode(agentId)) === undefined) return sendError(reply, 'TARGET_NOT_FOUND', `Agent '${agentId}' not found`);
  driver.input((c) => apply(c, type as FaultType, agentId, recover));
  return json(reply, { agent_id: agentId, state: driver.read((view) => view.agentProcessState(agentId)) });
}

/** A network rule: messages matching it (sender, receiver, types) are dropped, delayed or repeated, with a probability. */
function networkRule(reply: FastifyReply, driver: ClusterDriver, body: Record<string, unknown>): FastifyReply {
  const { action, from, to, messages, delay_ms: delayMs, jitter_ms: jitterMs, probability } = body;
  const millis = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_ADVANCE_MS);
  const checks: readonly (readonly [boolean, string])[] = [
    [typeof action === 'string' && (RULE_ACTIONS as readonly string[]).includes(action), `Expecting 'action' to be one of ${RULE_ACTIONS.join(', ')}`],
    [[from, to].every((v) => v === undefined || typeof v === 'string'), "Expecting 'from' and 'to' to be node ids ('master', or an agent id)"],
    [messages === undefined || (Array.isArray(messages) && messages.every((m) => typeof m === 'string' && /^[A-Z_]+$/.test(m))), "Expecting 'messages' to be message types (RUN_TASK, STATUS_UPDATE, ...)"],
    [millis(delayMs) && millis(jitterMs), `Expecting 'delay_ms' and 'jitter_ms' to be whole numbers of milliseconds from 0 to ${MAX_ADVANCE_MS}`],
    [probability === undefined || (typeof probability === 'number' && probability >= 0 && probability <= 1), "Expecting 'probability' to be a number from 0 to 1"],
  ];
  const invalid = checks.find(([valid]) => !valid)?.[1];
  if (invalid !== undefined) return sendError(reply, 'SIM_REQUEST_INVALID', invalid);
  const rule = {
    action: action as (typeof RULE_ACTIONS)[number],
    ...(from === undefined ? {} : { from: from as string }),
    ...(to === undefined ? {} : { to: to as string }),
    ...(messages === undefined ? {} : { types: messages as never[] }),
    ...(delayMs === undefined ? {} : { delayMs: delayMs as number }),
    ...(jitterMs === undefined ? {} : { jitterMs: jitterMs as number }),
    ...(probability === undefined ? {} : { probability: probability as number }),
  };
  return json(reply, { rule_id: driver.input((c) => c.addNetworkRule(rule)) });
}

function apply(cluster: ClusterDriver['cluster'], type: FaultType, agentId: string, recover: 'reconnect' | 'cleanup'): void {
  switch (type) {
    case 'crash_agent':
      return cluster.crashAgent(agentId);
    case 'restart_agent':
      return cluster.restartAgent(agentId, recover);
    case 'partition':
      return cluster.partition(agentId, 'master');
    case 'heal':
      return cluster.heal(agentId, 'master');
  }
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
