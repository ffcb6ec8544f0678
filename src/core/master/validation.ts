/**
 * Semantic validation in the master (the wire layer has already checked
 * shapes and required fields). Every function returns the error message, or
 * undefined when the input is valid.
 */
import { regexError } from '../allocator/constraints.js';
import { contains, format, overlap, type Resources } from '../model/resources.js';
import type { FrameworkInfo, Subscription, TaskSpec } from '../model/types.js';

/** Upper bound of a duration in upstream (int64 nanoseconds), in seconds. */
const MAX_DURATION_MS = 9_223_372_036_854;

/**
 * Role names: not empty, not `.` or `..`, no leading `-`, no whitespace,
 * control characters or `/` at either end; each `/`-separated part follows
 * the same rules, and `*` only stands alone.
 */
export function roleError(role: string): string | undefined {
  if (role === '*') return undefined;
  if (role === '') return 'Empty role name is invalid';
  if (role.startsWith('/') || role.endsWith('/')) return `Role '${role}' cannot start or end with a slash`;
  for (const part of role.split('/')) {
    if (part === '') return `Role '${role}' cannot contain an empty path segment`;
    if (part === '.' || part === '..') return `Role '${role}' cannot contain '.' or '..' as a path segment`;
    if (part.startsWith('-')) return `Role '${role}' cannot contain a path segment starting with '-'`;
    if (part === '*') return `Role '${role}' cannot contain '*' as a path segment`;
    if (/[\s\u0000-\u001f\u007f\\]/u.test(part))
      return `Role '${role}' cannot contain whitespace, control characters or backslashes`;
  }
  return undefined;
}

/** Longest id upstream accepts: ids name directories, and a file name has at most 255 bytes. */
export const MAX_ID_LENGTH = 255;

/**
 * Ids of frameworks, tasks and executors (upstream's `validateID`): not
 * empty, not `.` or `..`, at most 255 characters, and no control
 * characters or path separators, since ids become directory names.
 */
export function idError(id: string): string | undefined {
  if (id === '') return 'ID must be non-empty';
  if (id === '.' || id === '..') return `'${id}' is disallowed`;
  if (id.length > MAX_ID_LENGTH) return `ID must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`;
  if (/[\u0000-\u001f\u007f/\\]/u.test(id)) return `'${printable(id)}' contains invalid characters`;
  return undefined;
}

/** An id with its control characters escaped, so an error stays on one line. */
function printable(id: string): string {
  return id.replace(/[\u0000-\u001f\u007f]/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function frameworkInfoError(info: FrameworkInfo): string | undefined {
  if (info.invalid !== undefined) return info.invalid;
  if (info.id !== undefined) {
    const error = idError(info.id);
    if (error !== undefined) return `Invalid 'FrameworkInfo.id': ${error}`;
  }
  const multiRole = info.capabilities.includes('MULTI_ROLE');
  if (multiRole && info.role !== undefined) {
    return "'FrameworkInfo.role' must not be set when the framework is MULTI_ROLE capable";
  }
  if (!multiRole && info.roles.length > 0) {
    return "'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable";
  }
  const roles = multiRole ? info.roles : [info.role ?? '*'];
  if (new Set(roles).size !== roles.length) return "'FrameworkInfo.roles' contains duplicate roles";
  for (const role of roles) {
    const error = roleError(role);
    if (error !== undefined) return error;
  }
  const ms = info.failoverTimeoutMs;
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_DURATION_MS) {
    return `Invalid 'FrameworkInfo.failover_timeout': ${ms / 1000}`;
  }
  return undefined;
}

export function subscriptionError(sub: Subscription): string | undefined {
  const infoError = frameworkInfoError(sub.info);
  if (infoError !== undefined) return infoError;
  const roles = sub.info.capabilities.includes('MULTI_ROLE') ? sub.info.roles : [sub.info.role ?? '*'];
  for (const role of sub.suppressedRoles) {
    if (!roles.includes(role)) return `Suppressed role '${role}' is not contained in the list of roles`;
  }
  // Constraints for roles outside the framework's roles are ignored, as in release 1.11.
  for (const [role, groups] of Object.entries(sub.offerConstraints ?? {})) {
    if (!roles.includes(role)) continue;
    for (const group of groups) {
      for (const c of group) {
        if ('attributeName' in c.selector && c.selector.attributeName === '') {
          return `Offer constraint for role '${role}' has an empty attribute name`;
        }
        if ('pseudo' in c.selector && c.selector.pseudo === 'UNKNOWN') {
          return `Offer constraint for role '${role}' has an unknown pseudoattribute type`;
        }
        if (c.predicate.kind === 'text_matches' || c.predicate.kind === 'text_not_matches') {
          const error = regexError(c.predicate.regex);
          if (error !== null)
            return `Offer constraint for role '${role}' has an invalid regex '${c.predicate.regex}': ${error}`;
        }
      }
    }
  }
  return undefined;
}

/** Fields that UPDATE_FRAMEWORK may not change. */
export function immutableFieldError(old: FrameworkInfo, next: FrameworkInfo): string | undefined {
  if (old.principal !== next.principal) return "Updating 'FrameworkInfo.principal' is unsupported";
  if (old.user !== next.user) return "Updating 'FrameworkInfo.user' is unsupported";
  if (old.checkpoint !== next.checkpoint) return "Updating 'FrameworkInfo.checkpoint' is unsupported";
  return undefined;
}

export interface TaskContext {
  readonly agentId: string;
  /** What is left of the offers for this task, tagged with the role. */
  readonly available: Resources;
  readonly isDuplicate: (taskId: string) => boolean;
}

export function taskError(task: TaskSpec, ctx: TaskContext, needed: Resources): string | undefined {
  if (task.invalid !== undefined) return task.invalid;
  if (task.executor?.invalid !== undefined) return task.executor.invalid;
  const badId = idError(task.taskId);
  if (badId !== undefined) return badId;
  if (ctx.isDuplicate(task.taskId)) return `Task has duplicate ID: ${task.taskId}`;
  if (task.agentId !== ctx.agentId) {
    return `Task uses agent ${task.agentId} but the offers are for agent ${ctx.agentId}`;
  }
  if ((task.command === undefined) === (task.executor === undefined)) {
    return 'Task should have at least one (but not both) of CommandInfo or ExecutorInfo present';
  }
  const badExecutorId = task.executor === undefined ? undefined : idError(task.executor.executorId);
  if (badExecutorId !== undefined) return badExecutorId;
  if (task.resources.length === 0) return 'Task uses no resources';
  if (task.executor !== undefined && overlap(task.resources, task.executor.resources) !== undefined) {
    return `Task and its executor use invalid resources: ${overlap(task.resources, task.executor.resources)}`;
  }
  if (!contains(ctx.available, needed)) {
    return `Task uses more resources ${format(needed)} than available ${format(ctx.available)}`;
  }
  return undefined;
}
