/**
 * ATTACH_CONTAINER_OUTPUT on an agent's `/api/v1`: a running container's
 * standard output and error as a stream of ProcessIO records, from the
 * moment of the attach until the container ends, as upstream's agent
 * relays its I/O switchboard. The answer's types are upstream's agent
 * negotiation (`negotiateAgentAnswer`): what `task attach` of upstream's
 * CLI sends, `Accept: application/recordio` with `Message-Accept:
 * application/json`, is RecordIO of JSON records (`Content-Type:
 * application/recordio`, `Message-Content-Type: application/json`); an
 * `Accept` allowing JSON gets the same records under `Content-Type:
 * application/json`, as upstream's does.
 *
 * In the order upstream's agent checks: the negotiation (406); a container
 * whose root is no live executor's container of this agent (404
 * `Container <id> cannot be found`); the ACLs' attach_containers_output
 * (403); then what its containerizer fails with (500, the failure as the
 * body): a container not running (`Unknown container <id>`), one without a
 * TTY that is no session (`I/O switchboard server was disabled for this
 * container`), an executor's container whose command task was not launched
 * with a TTY (the same). A command task launched with `container.tty_info`
 * runs its command in the small shell, so `task attach` reaches it through
 * its executor's ContainerID. While the stream is quiet it writes a CONTROL HEARTBEAT
 * record every `ATTACH_HEARTBEAT_INTERVAL_MS` (upstream's
 * `--http_heartbeat_interval`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ATTACH_HEARTBEAT_INTERVAL_MS,
  processIoToJson,
  processIoToProto,
  type ContainerRequest,
  type ProcessRecord,
} from '../../wire/agent-containers.js';
import { agentRefusal, httpError, send, sendError } from '../errors.js';
import { HttpEventStream } from '../event-stream.js';
import { JSON_TYPE, negotiateAgentAnswer } from '../negotiate.js';
import type { AgentBinding } from './binding.js';

type AttachRequest = Extract<ContainerRequest, { kind: 'attach-output' }>;

/** Upstream's failure for a container without an I/O switchboard, which its CLI reads as a task launched without a TTY. */
const NO_SWITCHBOARD = 'I/O switchboard server was disabled for this container';

/** A ContainerID as upstream prints it: its parent's, a dot, its own. */
export function shownContainerId(containerId: string, parentId: string | undefined): string {
  return parentId === undefined ? containerId : `${parentId}.${containerId}`;
}

/** Serves ATTACH_CONTAINER_OUTPUT; undefined once the stream has taken the reply over. */
export function attachOutput(
  req: FastifyRequest,
  reply: FastifyReply,
  binding: AgentBinding,
  agentId: string,
  request: AttachRequest,
): FastifyReply | undefined {
  const types = negotiateAgentAnswer(req.headers.accept, req.headers['message-accept']);
  if (typeof types === 'string') return sendError(reply, 'STREAMING_NOT_ACCEPTABLE', types);
  const { driver, executors } = binding;
  const shown = shownContainerId(request.containerId, request.parentId);
  const root = request.parentId ?? request.containerId;
  const underExecutor = driver.read(
    (view) =>
      view
        .agentNode(agentId)
        ?.executors()
        .some((e) => e.alive && e.containerId === root) === true,
  );
  if (!underExecutor) return sendError(reply, 'TARGET_NOT_FOUND', `Container ${shown} cannot be found`);
  const encode = (types.records ?? types.accept) === JSON_TYPE ? processIoToJson : processIoToProto;
  const stream = new HttpEventStream<ProcessRecord>(reply.raw, encode, {
    budget: executors!.budget,
    keepaliveMs: ATTACH_HEARTBEAT_INTERVAL_MS,
  });
  const connectionId = executors!.connections.open(stream);
  const outcome = driver.input((c) => c.attachContainerOutput(agentId, request.containerId, connectionId));
  if (!outcome.ok) {
    executors!.connections.forget(connectionId);
    const { code, message } = outcome.error;
    // An executor's own container runs on; without a task launched with a TTY, it has no switchboard.
    if (code === 'NOT_FOUND' && request.parentId === undefined)
      return sendError(reply, 'CONTAINER_ATTACH_FAILED', NO_SWITCHBOARD);
    if (code === 'NOT_FOUND') return sendError(reply, 'CONTAINER_ATTACH_FAILED', `Unknown container ${shown}`);
    return send(reply, code === 'FAILED' ? httpError('CONTAINER_ATTACH_FAILED', message) : agentRefusal(outcome.error));
  }
  reply.hijack();
  reply.raw.on('close', () => {
    executors!.connections.forget(connectionId);
    if (driver.failure === undefined) driver.input((c) => c.disconnect(connectionId));
  });
  const headers: Record<string, string> = { 'content-type': types.accept };
  if (types.records !== undefined) headers['message-content-type'] = types.records;
  stream.start(headers);
  return undefined;
}
