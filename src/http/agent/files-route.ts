/**
 * An agent's files API at its process root (`/files/browse`, `/files/read`,
 * `/files/download`, `/files/debug`), as upstream's agent serves it: its
 * executors' sandboxes under their real paths and the virtual paths
 * `/frameworks/<f>/executors/<e>/runs/<container|latest>` (../files.ts).
 * While the agent is crashed it answers 503, as a recovering agent does.
 */
import type { FastifyInstance } from 'fastify';
import type { ClusterView } from '../../core/view.js';
import { attachedPaths } from '../../wire/files.js';
import { registerFilesRoutes, type FilesSource } from '../files.js';
import { NOT_RECOVERED, type AgentBinding } from './binding.js';

/** An agent's sandboxes, for its files API and its LIST_FILES and READ_FILE. */
export function agentFilesSource(binding: AgentBinding): FilesSource {
  const nodeOf = (view: ClusterView, agentId: string | undefined) => {
    const node = agentId === undefined ? undefined : view.agentNode(agentId);
    return node === undefined || node.state === 'crashed' ? undefined : node;
  };
  return {
    driver: binding.driver,
    unavailable: NOT_RECOVERED,
    paths: (view, req) => {
      const node = nodeOf(view, binding.agentId(req));
      return node === undefined ? undefined : attachedPaths(node);
    },
    debug: (view, req) => {
      const node = nodeOf(view, binding.agentId(req));
      if (node === undefined) return undefined;
      return Object.fromEntries([...attachedPaths(node)].map(([name, attached]) => [name, attached.root]));
    },
  };
}

export function registerAgentFilesRoutes(app: FastifyInstance, binding: AgentBinding): void {
  registerFilesRoutes(app, '', agentFilesSource(binding));
}
