/**
 * The master's files API (`/files/browse`, `/files/read`, `/files/download`,
 * `/files/debug`). Upstream's master serves only the paths it attached
 * itself (its log, with `--log_dir`); here it also answers the agents'
 * virtual paths, `/frameworks/<f>/executors/<e>/runs/<container|latest>`,
 * by reading the sandbox on the agent that holds that executor, so that a
 * task's output reads through the master as through its agent. This is a
 * convenience of the simulator: upstream's clients read an agent's files
 * at the agent. An executor id a framework used on several agents names
 * the run on the agent listed last; the agents' own `/files` tell them
 * apart. Agents that are down are left out.
 */
import type { FastifyInstance } from 'fastify';
import type { ClusterView } from '../../core/view.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { attachedPaths, type AttachedSandbox } from '../../wire/files.js';
import { registerFilesRoutes, type FilesSource } from '../files.js';

function virtualPaths(view: ClusterView): Map<string, AttachedSandbox> {
  const out = new Map<string, AttachedSandbox>();
  for (const agentId of view.agentNodeIds()) {
    const node = view.agentNode(agentId);
    if (node === undefined || node.state === 'crashed') continue;
    for (const [name, attached] of attachedPaths(node, false)) out.set(name, attached);
  }
  return out;
}

/** The agents' sandboxes by their virtual paths, for the master's files API and its LIST_FILES and READ_FILE. */
export function masterFilesSource(driver: ClusterDriver): FilesSource {
  return {
    driver,
    unavailable: '',
    paths: (view) => virtualPaths(view),
    debug: (view) => Object.fromEntries([...virtualPaths(view)].map(([name, attached]) => [name, attached.root])),
  };
}

export function registerMasterFilesRoutes(app: FastifyInstance, driver: ClusterDriver): void {
  registerFilesRoutes(app, '', masterFilesSource(driver));
}
