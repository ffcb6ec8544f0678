/**
 * An agent's own HTTP server. Each agent is reachable at its own address
 * (shown as `slave(1)@host:port`); the executor and operator endpoints are
 * served here as they are built.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { acceptRawBodies, installErrorReplies } from './master-app.js';
import { VERSION } from '../wire/version.js';

export interface AgentAppOptions {
  readonly logger?: FastifyBaseLogger;
}

export function buildAgentApp(options: AgentAppOptions = {}): FastifyInstance {
  const app = Fastify({
    ...(options.logger === undefined ? {} : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    // Event streams never end by themselves; closing the server must not wait for them.
    forceCloseConnections: true,
  }) as unknown as FastifyInstance;
  acceptRawBodies(app);
  for (const prefix of ['', '/slave(1)']) {
    app.all(`${prefix}/health`, (_req, reply) => reply.code(200).header('content-length', '0').send());
    app.all(`${prefix}/version`, (_req, reply) =>
      reply.header('content-type', 'application/json').send(JSON.stringify({ version: VERSION, build_date: '', build_time: 0.0, build_user: '' })),
    );
  }
  installErrorReplies(app);
  return app;
}
