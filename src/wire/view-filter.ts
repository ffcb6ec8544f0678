/**
 * What one reader may see of the master's state, as upstream's object
 * approvers decide it for a request: the core's ACL decisions (`Authorizer`,
 * src/core/authz.ts) asked with the reader's principal (none when the
 * endpoint is not authenticated, which the ACLs see as ANY), about the
 * objects as upstream names them:
 *
 *   framework  view_frameworks   FrameworkInfo.user
 *   task       view_tasks        the task's command user, else its executor's, else the framework's
 *   executor   view_executors    the executor's command user, else the framework's
 *   role       view_roles        the role
 *   resource   view_roles        every role it names (reservations, allocation)
 *   flags      view_flags        -
 *
 * Without ACLs the reader sees everything and `all` says so, so renderers
 * skip every question: the common case costs nothing. With ACLs, each
 * answer is kept for the reader's request, so a thousand tasks of one user
 * ask once.
 */
import { viewableResource, type Authorizer } from '../core/model/authz.js';
import type { Resource, Resources } from '../core/model/resources.js';
import type { ExecutorSpec, TaskSpec } from '../core/model/types.js';
import type { mesos } from './generated/types.js';

export interface Viewer {
  /** True without ACLs: everything may be seen, and nobody needs to ask. */
  readonly all: boolean;
  /** A framework, by its FrameworkInfo.user. */
  framework(user: string): boolean;
  task(spec: TaskSpec, frameworkUser: string): boolean;
  executor(spec: ExecutorSpec, frameworkUser: string): boolean;
  /** An executor by the user it runs as (a command executor's is its task's command user, else the framework's). */
  executorUser(user: string): boolean;
  role(role: string): boolean;
  resource(r: Resource): boolean;
  flags(): boolean;
  /** The maintenance schedule or status, all or nothing. */
  maintenance(action: 'get_maintenance_schedules' | 'get_maintenance_statuses'): boolean;
}

const yes = (): boolean => true;

export const SHOW_ALL: Viewer = {
  all: true,
  framework: yes,
  task: yes,
  executor: yes,
  executorUser: yes,
  role: yes,
  resource: yes,
  flags: yes,
  maintenance: yes,
};

/** The reader with this principal (undefined: an unauthenticated request). */
export function viewerOf(authorizer: Authorizer, principal: string | undefined): Viewer {
  if (!authorizer.enabled) return SHOW_ALL;
  const frameworks = remembered((user) => authorizer.mayViewFramework(principal, user));
  const tasks = remembered((user) => authorizer.mayViewTask(principal, user));
  const executors = remembered((user) => authorizer.mayViewExecutor(principal, user));
  const roles = remembered((role) => authorizer.mayViewRole(principal, role));
  const flags = authorizer.mayViewFlags(principal);
  return {
    all: false,
    framework: frameworks,
    task: (spec, frameworkUser) => tasks(taskUser(spec, frameworkUser)),
    executor: (spec, frameworkUser) => executors(executorUser(spec, frameworkUser)),
    executorUser: executors,
    role: roles,
    resource: (r) => viewableResource(r, roles),
    flags: () => flags,
    maintenance: (action) => authorizer.may(action, principal),
  };
}

/** The resources of a bag the reader may see; the bag itself without ACLs. */
export function visibleResources(bag: Resources, viewer: Viewer): Resources {
  return viewer.all ? bag : bag.filter((r) => viewer.resource(r));
}

/** Upstream's user of a task: its command's, else its executor's command's, else the framework's. */
export function taskUser(spec: TaskSpec, frameworkUser: string): string {
  const raw = spec.raw as mesos.v1.TaskInfo | undefined;
  return raw?.command?.user ?? raw?.executor?.command?.user ?? frameworkUser;
}

/** Upstream's user of an executor: its command's, else the framework's. */
export function executorUser(spec: ExecutorSpec, frameworkUser: string): string {
  return (spec.raw as mesos.v1.ExecutorInfo | undefined)?.command?.user ?? frameworkUser;
}

function remembered(ask: (key: string) => boolean): (key: string) => boolean {
  const answers = new Map<string, boolean>();
  return (key) => {
    let answer = answers.get(key);
    if (answer === undefined) {
      answer = ask(key);
      answers.set(key, answer);
    }
    return answer;
  };
}
