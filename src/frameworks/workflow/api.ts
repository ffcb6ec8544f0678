/**
 * The workflow service's local HTTP API (spec 002, "Executor API"):
 *
 *   POST /v0/queue_command    a queue request; 200 `Ok` means queued, not run
 *   GET  /v0/task/<task_id>   the task's latest status update, `{"status":{…}}`;
 *                             `null` while it waits for an offer; 404 unknown
 *   GET  /v0/dags             the queue (HTTP Basic, `api_username`/`api_password`)
 *   GET  /v0/agent/<agent_id> `{hostname, port}` of an agent, from the master
 *
 * Bodies are read whatever their Content-Type, as the integration reads
 * them. Built by a factory and tested with a real listener.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { WorkflowConfig } from './config.js';
import { sendWorkflowError } from './api-errors.js';
import { parseQueueRequest, type QueueRequest } from './request.js';
import type { WorkflowScheduler } from './scheduler.js';

/** The integration's realm-less Basic challenge. */
const CHALLENGE = 'Basic realm="Authentication Required"';

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether the request carries the configured credentials as HTTP Basic. */
export function authorized(header: string | undefined, config: WorkflowConfig): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (m === null) return false;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // Both compared, whatever the first gives, so that the time taken tells nothing.
  const user = sameText(decoded.slice(0, colon), config.apiUsername);
  const password = sameText(decoded.slice(colon + 1), config.apiPassword);
  return user && password;
}

/** A queued request as `/v0/dags` lists it: the request's own field names. */
function listed(r: QueueRequest): Record<string, unknown> {
  return {
    workflow_task_id: r.taskId,
    container_type: r.containerType,
    command: r.command,
    image: r.image,
    cpus: r.cpus,
    mem_limit: r.memMib,
    disk: r.diskMib,
    attributes: r.attributes,
  };
}

export function buildWorkflowApp(scheduler: WorkflowScheduler, config: WorkflowConfig): FastifyInstance {
  // An id in a path is as long as node lets a request's head be: an id too long is unknown (404), not the router's 414.
  const app = Fastify({ logger: false, routerOptions: { maxParamLength: http.maxHeaderSize } });
  let counter = 0;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.setNotFoundHandler((_req, reply) => sendWorkflowError(reply, 'NOT_FOUND'));

  app.post('/v0/queue_command', async (req: FastifyRequest, reply: FastifyReply) => {
    let body: unknown;
    try {
      body = JSON.parse(typeof req.body === 'string' ? req.body : '');
    } catch (e) {
      return sendWorkflowError(reply, 'MALFORMED', `The body is not JSON: ${(e as Error).message}`);
    }
    const parsed = parseQueueRequest(body, config, () => `workflow.${++counter}`);
    if (!parsed.ok) return sendWorkflowError(reply, 'MALFORMED', parsed.error);
    const queued = scheduler.enqueue(parsed.request);
    if (!queued.ok)
      return sendWorkflowError(
        reply,
        'DUPLICATE',
        parsed.request.taskId,
        queued.phase === 'queued' ? 'queued' : 'running',
      );
    return reply
      .code(200)
      .type('text/html; charset=utf-8')
      .header('location', `/v0/task/${encodeURIComponent(parsed.request.taskId)}`)
      .send('Ok');
  });

  app.get('/v0/task/:taskId', async (req: FastifyRequest<{ Params: { taskId: string } }>, reply: FastifyReply) => {
    const record = scheduler.task(req.params.taskId);
    if (record === undefined) return sendWorkflowError(reply, 'TASK_UNKNOWN', req.params.taskId);
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify(record.update ?? null));
  });

  app.get('/v0/dags', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!authorized(req.headers.authorization, config))
      return sendWorkflowError(reply.header('www-authenticate', CHALLENGE), 'UNAUTHORIZED');
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify(scheduler.queued().map(listed)));
  });

  app.get('/v0/agent/:agentId', async (req: FastifyRequest<{ Params: { agentId: string } }>, reply: FastifyReply) => {
    let address: { hostname: string; port: string } | undefined;
    try {
      address = await scheduler.agentAddress(req.params.agentId);
    } catch (e) {
      return sendWorkflowError(reply, 'MASTER_UNREACHABLE', (e as Error).message);
    }
    if (address === undefined) return sendWorkflowError(reply, 'AGENT_UNKNOWN', req.params.agentId);
    return reply.code(200).type('application/json').send(JSON.stringify(address));
  });
  return app;
}
