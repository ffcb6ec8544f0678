/**
 * Limits of one listener, the master's or an agent's, so that no client can
 * hold the process' file descriptors or memory for ever:
 *
 *   idle timeout      a connection silent in both directions (between
 *                     keep-alive requests, or a response nobody reads) is
 *                     closed; fastify's `connectionTimeout` (the socket's
 *                     inactivity timer) and `keepAliveTimeout`, to which
 *                     node adds a 1 s grace. Event streams are exempt
 *                     (event-stream.ts): they are silent between heartbeats
 *                     by design and carry their own keepalive
 *   headers timeout   from a connection's first byte (or its opening, if it
 *                     sends none) to the end of the request's headers;
 *                     node's `headersTimeout`, answered 408 and closed
 *   request timeout   the same up to the end of the body. Node stops the
 *                     clock once a request is read, so a response that lasts
 *                     (an event stream) is never cut by it
 *   max connections   node's `server.maxConnections`: past it, a new
 *                     connection is closed as soon as it is accepted, before
 *                     a byte is read, so the ones already open (and /health
 *                     on them) keep working
 *
 * Node checks the header and request clocks on a timer (every 30 s by
 * default, longer than the timeouts themselves); it runs here at a quarter
 * of the shorter timeout, between 10 ms and 1 s.
 */
import type { ServerOptions } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export interface ListenerLimits {
  readonly idleTimeoutSeconds: number;
  readonly headersTimeoutSeconds: number;
  readonly requestTimeoutSeconds: number;
  readonly maxConnections: number;
}

/**
 * Sized for a laptop whose process may open 1,024 files (a common soft
 * limit): the master's 512 connections and 64 for each of three agents
 * leave room for everything else. The idle timeout outlasts the idle
 * pools of common clients (undici 4 s, node's agent 5 s, Go's default
 * transport 90 s, which mesos-go schedulers use), so a client does not
 * reuse a connection the server is closing: a POST on such a connection
 * fails, and is not retried.
 */
export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  idleTimeoutSeconds: 120,
  headersTimeoutSeconds: 10,
  requestTimeoutSeconds: 60,
  maxConnections: 512,
};

export const DEFAULT_AGENT_MAX_CONNECTIONS = 64;

/** How often a refused connection may be logged: a flood must not flood the log. */
const DROP_LOG_INTERVAL_MS = 10_000;

const millis = (seconds: number): number => Math.max(1, Math.round(seconds * 1000));

/**
 * The fastify options that carry the timeouts of `limits`. `streamingBodies`:
 * the listener takes request bodies that last as long as a session (an
 * agent's ATTACH_CONTAINER_INPUT), so no request timeout applies; the
 * headers timeout and the idle timeout still do (a live input stream sends
 * a heartbeat every 30 s).
 */
export function listenerServerOptions(
  limits: ListenerLimits,
  streamingBodies = false,
): {
  connectionTimeout: number;
  keepAliveTimeout: number;
  requestTimeout: number;
  http: ServerOptions;
} {
  const idleMs = millis(limits.idleTimeoutSeconds);
  const requestMs = streamingBodies ? 0 : millis(limits.requestTimeoutSeconds);
  // Node refuses a headers timeout longer than the request timeout (0 is none).
  const headersMs =
    requestMs === 0 ? millis(limits.headersTimeoutSeconds) : Math.min(millis(limits.headersTimeoutSeconds), requestMs);
  const checkMs = Math.min(
    1000,
    Math.max(10, Math.floor((requestMs === 0 ? headersMs : Math.min(headersMs, requestMs)) / 4)),
  );
  return {
    connectionTimeout: idleMs,
    keepAliveTimeout: idleMs,
    requestTimeout: requestMs,
    http: { headersTimeout: headersMs, requestTimeout: requestMs, connectionsCheckingInterval: checkMs },
  };
}

/**
 * Caps the listener's concurrent connections. Node closes a connection over
 * the cap without a word; the log says so, at most once per interval with
 * the number refused meanwhile.
 */
export function capConnections(
  app: FastifyInstance,
  listener: string,
  maxConnections: number,
  log: FastifyBaseLogger,
): void {
  app.server.maxConnections = maxConnections;
  let refused = 0;
  let lastLogMs = -Infinity;
  app.server.on('drop', () => {
    refused++;
    const now = performance.now();
    if (now - lastLogMs < DROP_LOG_INTERVAL_MS) return;
    lastLogMs = now;
    log.warn({ listener, maxConnections, refused }, 'connection refused: connection limit reached');
    refused = 0;
  });
}
