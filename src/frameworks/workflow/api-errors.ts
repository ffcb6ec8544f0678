/**
 * Every error the workflow service's local API answers: status and a
 * one-line plain-text reason. Its own catalogue, apart from the cluster's
 * (`src/http/errors.ts`): this is a framework's API, not the cluster's,
 * and its texts are the workflow integration's where it has them.
 */
import type { FastifyReply } from 'fastify';

export const WORKFLOW_ERRORS = {
  /** A body that is not JSON, or a request that does not read (the integration's text when the command is missing). */
  MALFORMED: { status: 400, text: (reason: string) => reason },
  /** A protected path (`/v0/dags`) without the configured HTTP Basic credentials. */
  UNAUTHORIZED: { status: 401, text: () => 'Unauthorized Access' },
  /** A task id, agent id or path the service does not know. */
  TASK_UNKNOWN: { status: 404, text: (id: string) => `Task '${id}' is not known` },
  AGENT_UNKNOWN: { status: 404, text: (id: string) => `Agent '${id}' is not known to the master` },
  NOT_FOUND: { status: 404, text: () => 'Not Found' },
  /** A request whose id names a task still queued or running (one that ended may be queued again). */
  DUPLICATE: { status: 409, text: (id: string, where: string) => `Task '${id}' is already ${where}` },
  /** The master could not be asked (the agent lookup). */
  MASTER_UNREACHABLE: { status: 502, text: (reason: string) => `The master could not be asked: ${reason}` },
} as const;

export type WorkflowErrorCode = keyof typeof WORKFLOW_ERRORS;

export function sendWorkflowError<C extends WorkflowErrorCode>(
  reply: FastifyReply,
  code: C,
  ...args: Parameters<(typeof WORKFLOW_ERRORS)[C]['text']>
): FastifyReply {
  const entry = WORKFLOW_ERRORS[code];
  const text = (entry.text as (...a: unknown[]) => string)(...args).replace(/\s*\n\s*/g, ' ');
  return reply.code(entry.status).type('text/plain; charset=utf-8').send(text);
}
