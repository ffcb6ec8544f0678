/**
 * `--http-executor-domain-sockets`: each agent serves its executor API on
 * a Unix domain socket too, as upstream's agent does, at
 * `<work-dir>/agents/<agent>/agent.sock`; executors find it in
 * `DOMAIN_SOCKET`. Usage is identical to TCP. The socket's server hands
 * its requests to the agent's own app; a connection carries the agent it
 * arrived for, since a socket file, unlike an address, names no agent.
 */
import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The longest path a Unix socket address holds (Linux's `sun_path`, less its terminating NUL). */
export const MAX_SOCKET_PATH = 107;

const AGENT_OF_CONNECTION = Symbol('agent of a domain socket connection');

type TaggedSocket = net.Socket & { [AGENT_OF_CONNECTION]?: string };

export function domainSocketPath(workDir: string, agentId: string): string {
  return path.join(workDir, 'agents', agentId, 'agent.sock');
}

/** The agent a request came for over its domain socket; undefined for a TCP request. */
export function agentOfDomainSocket(req: FastifyRequest): string | undefined {
  return (req.socket as TaggedSocket)[AGENT_OF_CONNECTION];
}

/** Listens on the agent's socket path; requests go to `app`, tagged with the agent. */
export async function listenDomainSocket(
  app: FastifyInstance,
  socketPath: string,
  agentId: string,
): Promise<http.Server> {
  mkdirSync(path.dirname(socketPath), { recursive: true });
  rmSync(socketPath, { force: true });
  await app.ready();
  const server = http.createServer((req, res) => app.routing(req, res));
  server.on('connection', (socket: TaggedSocket) => {
    socket[AGENT_OF_CONNECTION] = agentId;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => (server.off('error', reject), resolve()));
  });
  return server;
}

/** Closes a socket's server, its streams with it, and removes the socket file. */
export async function closeDomainSocket(server: http.Server, socketPath: string): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(socketPath, { force: true });
}
