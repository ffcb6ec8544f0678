/**
 * What the agent operator API asks the ACLs, as upstream's agent asks its
 * authorizer, with the objects it names:
 *
 *   LAUNCH_NESTED_CONTAINER(_SESSION)   launch_nested_container(_session)s_under_parent_with_user:
 *                                       the parent's user; and ..._as_user: the command's user
 *   WAIT, KILL, REMOVE (nested)         wait_/kill_/remove_nested_containers: the user of the
 *                                       container's executor (its ContainerID when none is found)
 *   WAIT, KILL, REMOVE (no parent)      wait_/kill_/remove_standalone_containers (implicit)
 *   ATTACH_CONTAINER_INPUT              attach_containers_input: the executor's user (none: 404 first)
 *   ATTACH_CONTAINER_OUTPUT             attach_containers_output: the executor's user (none: 404 first)
 *   LAUNCH_CONTAINER (nested)           as LAUNCH_NESTED_CONTAINER
 *   LAUNCH_CONTAINER (standalone)       launch_standalone_containers, before the launch is refused
 *   GET_FLAGS, /flags                   view_flags
 *   GET_CONTAINERS                      view_containers: each container, by its executor's user
 *   /containers                         get_endpoints `/containers`, then view_containers
 *   calls this agent lacks (501)        their action first: set_log_level, prune_images,
 *                                       modify_resource_provider_configs, mark_resource_providers_gone
 *
 * An executor's user is its command's (a command executor's is its task's
 * command user, as upstream's agent builds that executor), else its
 * framework's; a container no executor holds has none, which asks ANY.
 */
import type { AclAction } from '../core/model/acl-actions.js';
import type { AgentNodeView, ClusterView } from '../core/view.js';
import type { ContainerRequest } from './agent-containers.js';
import type { mesos } from './generated/types.js';
import type { AclQuestion } from './operator-in.js';

/** The user of the executor whose container is `rootId`, or undefined when no live executor of the agent has it. */
export function executorUserOf(node: AgentNodeView, rootId: string): string | undefined {
  const executor = node.executors().find((e) => e.containerId === rootId);
  if (executor === undefined) return undefined;
  const task = executor.tasks.values().next().value;
  const own =
    executor.kind === 'command'
      ? task?.spec.command?.user
      : executor.kind === 'custom'
        ? task?.spec.executor?.command?.user
        : undefined;
  return own ?? node.frameworks().find((f) => f.id === executor.frameworkId)?.user;
}

/** The top-level container a container runs under: a nested one's parent, else itself. */
export function rootOf(view: ClusterView, agentId: string, containerId: string): string {
  return view.nestedContainer(agentId, containerId)?.parentId ?? containerId;
}

/** The reason a container call is refused to `principal`, or undefined when the ACLs allow it. */
export function containerRefusal(
  view: ClusterView,
  agentId: string,
  request: ContainerRequest,
  principal: string | undefined,
): string | undefined {
  const { authorizer } = view;
  if (!authorizer.enabled) return undefined;
  const node = view.agentNode(agentId);
  if (node === undefined) return undefined;
  if (request.kind === 'refused')
    return request.standalone === undefined
      ? undefined
      : authorizer.refusal('launch_standalone_containers', principal, request.standalone);
  if (request.kind === 'attach-output') {
    const user = executorUserOf(node, request.parentId ?? request.containerId);
    return user === undefined ? undefined : authorizer.refusal('attach_containers_output', principal, user);
  }
  if (request.kind === 'launch') {
    const parentUser = executorUserOf(node, request.launch.parentId);
    // Under no executor, upstream asks about the parent only, as ANY.
    const command =
      parentUser === undefined ? undefined : { ...(request.user === undefined ? {} : { user: request.user }) };
    return authorizer.nestedLaunchRefusal(principal, request.session, parentUser, command);
  }
  const user = executorUserOf(node, rootOf(view, agentId, request.containerId));
  return authorizer.refusal(request.action, principal, user ?? request.containerId);
}

/**
 * ATTACH_CONTAINER_INPUT, once its first record names the container. A
 * container no executor holds is not asked about: it is not found (404),
 * as upstream's agent answers first.
 */
export function attachInputRefusal(
  view: ClusterView,
  agentId: string,
  containerId: string,
  principal: string | undefined,
): string | undefined {
  const node = view.agentNode(agentId);
  if (!view.authorizer.enabled || node === undefined) return undefined;
  const user = executorUserOf(node, rootOf(view, agentId, containerId));
  return user === undefined ? undefined : view.authorizer.refusal('attach_containers_input', principal, user);
}

/** Which of the agent's containers a reader may see (view_containers, by the executor's user): for GET_CONTAINERS and /containers. */
export function containerViewer(
  view: ClusterView,
  node: AgentNodeView,
  principal: string | undefined,
): (containerId: string) => boolean {
  if (!view.authorizer.enabled) return () => true;
  return (containerId) => view.authorizer.may('view_containers', principal, executorUserOf(node, containerId));
}

const UNSUPPORTED: Partial<Record<mesos.v1.agent.Call.Type, AclAction>> = {
  SET_LOGGING_LEVEL: 'set_log_level',
  PRUNE_IMAGES: 'prune_images',
  ADD_RESOURCE_PROVIDER_CONFIG: 'modify_resource_provider_configs',
  UPDATE_RESOURCE_PROVIDER_CONFIG: 'modify_resource_provider_configs',
  REMOVE_RESOURCE_PROVIDER_CONFIG: 'modify_resource_provider_configs',
  MARK_RESOURCE_PROVIDER_GONE: 'mark_resource_providers_gone',
};

/** What an agent call asks before it is answered from state or refused as a missing feature. */
export function agentCallQuestions(call: mesos.v1.agent.Call): AclQuestion[] {
  if (call.type === 'GET_FLAGS') return [{ action: 'view_flags' }];
  const action = call.type === undefined ? undefined : UNSUPPORTED[call.type];
  return action === undefined ? [] : [{ action }];
}
