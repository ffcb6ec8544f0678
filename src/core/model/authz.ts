/**
 * Authorization as upstream's local authorizer decides it, from ACLs given
 * as data (`--acls`). Pure: no I/O, no clock, the same answer for the same
 * question. Who asks is a principal (the one a request authenticated as, or
 * the one a FrameworkInfo declares), or nobody when authentication is off.
 *
 * A question is a subject and an object, each an entity:
 *   subject  SOME [principal], or ANY when there is no principal
 *   object   SOME [the role, user, principal or path asked about], or ANY
 *            when nothing in particular is (always, for an action whose
 *            objects are implicit: acl-actions.ts)
 * The rules of an action are tried in order; the first whose subjects and
 * objects both *match* the question decides, and it says yes only if both
 * also *allow* it. When no rule matches, `permissive` decides (default true).
 *
 *   matches: question \ rule    SOME            NONE   ANY
 *            SOME               values subset   yes    yes
 *            NONE               no              yes    no
 *            ANY                no              yes    yes
 *
 *   allows:  question \ rule    SOME            NONE   ANY
 *            SOME               values subset   no     yes
 *            NONE               no              yes    no
 *            ANY                no              no     yes
 *
 * So a rule naming a principal with roles NONE matches every role that
 * principal asks for and refuses them all, and a question with no principal
 * (ANY) is decided only by rules whose principals are ANY or NONE.
 *
 * Rules on roles are hierarchical: a role value ending in `/%` (`eng/%`)
 * stands for every role strictly below it (`eng/a`, `eng/a/b`, not `eng`),
 * and becomes a rule of its own whose objects count as ANY for those roles.
 */
import { ACL_ACTIONS, ACTION_NAMES, fieldOf, type AclAction, type AclField } from './acl-actions.js';
import type { Resource, Resources } from './resources.js';
import type { FrameworkInfo } from './types.js';

export { ACL_ACTIONS, type AclAction } from './acl-actions.js';

export type AclEntity =
  | { readonly type: 'SOME'; readonly values: readonly string[] }
  | { readonly type: 'ANY' }
  | { readonly type: 'NONE' };

export interface AclRule {
  /** Who may (or may not): principals. */
  readonly principals: AclEntity;
  /** On what: roles, users, principals or paths, by the action (acl-actions.ts). */
  readonly objects: AclEntity;
}

/**
 * The ACLs, one list of rules per upstream action, each in the order of
 * the file, under the action's camelCase name (`registerFrameworks`).
 */
export type Acls = { readonly permissive: boolean } & { readonly [F in AclField]: readonly AclRule[] };

export const NO_ACLS: Acls = Object.freeze({
  permissive: true,
  ...Object.fromEntries(ACTION_NAMES.map((action) => [fieldOf(action), []])),
}) as Acls;

const ANY: AclEntity = { type: 'ANY' };
const some = (value: string): AclEntity => ({ type: 'SOME', values: [value] });
const subjectOf = (principal: string | undefined): AclEntity => (principal === undefined ? ANY : some(principal));

function subset(question: AclEntity, rule: AclEntity): boolean {
  if (question.type !== 'SOME' || rule.type !== 'SOME') return false;
  return question.values.every((v) => rule.values.includes(v));
}

function matches(question: AclEntity, rule: AclEntity): boolean {
  if (rule.type === 'NONE') return true;
  if (question.type === 'NONE') return false;
  if (rule.type === 'ANY') return true;
  return subset(question, rule);
}

function allows(question: AclEntity, rule: AclEntity): boolean {
  if (question.type === 'NONE') return rule.type === 'NONE';
  if (rule.type === 'ANY') return true;
  return rule.type === 'SOME' && subset(question, rule);
}

/** A rule on roles, after `eng/%` values were split out into rules of their own. */
interface RoleRule extends AclRule {
  /** `eng/` for a rule made of the value `eng/%`: it covers the roles that start with it. */
  readonly below?: string;
}

function decide(rules: readonly AclRule[], permissive: boolean, subject: AclEntity, object: AclEntity): boolean {
  for (const rule of rules) {
    if (matches(subject, rule.principals) && matches(object, rule.objects)) {
      return allows(subject, rule.principals) && allows(object, rule.objects);
    }
  }
  return permissive;
}

function decideRole(rules: readonly RoleRule[], permissive: boolean, subject: AclEntity, object: AclEntity): boolean {
  for (const rule of rules) {
    if (rule.below === undefined) {
      if (matches(subject, rule.principals) && matches(object, rule.objects)) {
        return allows(subject, rule.principals) && allows(object, rule.objects);
      }
    } else if (
      object.type === 'SOME' &&
      object.values[0]!.startsWith(rule.below) &&
      matches(subject, rule.principals)
    ) {
      return allows(subject, rule.principals);
    }
  }
  return permissive;
}

/** Splits every `x/%` value of a rule into a rule of its own, the other values staying together after them. */
function roleRules(rules: readonly AclRule[]): RoleRule[] {
  const out: RoleRule[] = [];
  for (const rule of rules) {
    if (rule.objects.type !== 'SOME') {
      out.push(rule);
      continue;
    }
    const plain: string[] = [];
    for (const value of rule.objects.values) {
      if (value.endsWith('/%'))
        out.push({ principals: rule.principals, objects: some(value), below: value.slice(0, -1) });
      else plain.push(value);
    }
    if (plain.length > 0) out.push({ principals: rule.principals, objects: { type: 'SOME', values: plain } });
  }
  return out;
}

/** The roles a FrameworkInfo asks for: `roles` with MULTI_ROLE, else the single `role` (default `*`). */
export function rolesOf(info: Pick<FrameworkInfo, 'capabilities' | 'roles' | 'role'>): string[] {
  return info.capabilities.includes('MULTI_ROLE') ? [...info.roles] : [info.role ?? '*'];
}

/** Upstream's refusal of a subscription: the roles as a sorted set, `{ a, b }`. */
export function notAuthorizedForRoles(roles: readonly string[]): string {
  const set = [...new Set(roles)].sort();
  return `Not authorized to use roles '{ ${set.join(', ')} }'`;
}

/** A request authenticated as one principal on behalf of a framework that declares another. */
export function principalMismatch(authenticated: string, declared: string): string {
  return `Authenticated principal '${authenticated}' does not match principal '${declared}' set in \`FrameworkInfo\``;
}

/**
 * Whether a resource may be seen, given who may see which role: its
 * reservation role, each role of its reservation stack and the role it is
 * allocated to must all be (upstream's VIEW_ROLE on a Resource).
 */
export function viewableResource(r: Resource, mayViewRole: (role: string) => boolean): boolean {
  if (r.role !== '*' && !mayViewRole(r.role)) return false;
  for (const reservation of r.reservations ?? []) if (!mayViewRole(reservation.role)) return false;
  return r.allocationRole === undefined || mayViewRole(r.allocationRole);
}

/** Who a refusal names. */
function who(principal: string | undefined): string {
  return principal === undefined ? 'A request without a principal' : `Principal '${principal}'`;
}

/**
 * The decisions, one per question the cluster asks. Without ACLs every
 * answer is yes, as upstream without an authorizer. `object` is the role,
 * user, principal or path asked about; none (and any object of an action
 * whose objects are implicit) is ANY.
 */
export class Authorizer {
  readonly enabled: boolean;
  readonly #acls: Acls;
  readonly #rules = new Map<AclAction, readonly RoleRule[]>();

  constructor(acls: Acls | undefined) {
    this.enabled = acls !== undefined;
    this.#acls = acls ?? NO_ACLS;
    for (const [action, spec] of Object.entries(ACL_ACTIONS) as [AclAction, (typeof ACL_ACTIONS)[AclAction]][]) {
      const rules = this.#acls[fieldOf(action)] ?? [];
      this.#rules.set(action, spec.kind === 'role' ? roleRules(rules) : rules);
    }
  }

  /** Whether `principal` may do `action` on `object`. */
  may(action: AclAction, principal: string | undefined, object?: string): boolean {
    if (!this.enabled) return true;
    const question = object === undefined || ACL_ACTIONS[action].kind === 'implicit' ? ANY : some(object);
    const rules = this.#rules.get(action)!;
    if (ACL_ACTIONS[action].kind === 'role')
      return decideRole(rules, this.#acls.permissive, subjectOf(principal), question);
    return decide(rules, this.#acls.permissive, subjectOf(principal), question);
  }

  /** The one-line reason `action` on `object` is refused to `principal`, or undefined when it is allowed. */
  refusal(action: AclAction, principal: string | undefined, object?: string): string | undefined {
    if (this.may(action, principal, object)) return undefined;
    const { verb, kind } = ACL_ACTIONS[action];
    if (kind === 'implicit') return `${who(principal)} is not authorized to ${verb}`;
    // Without an object the question was about any: `... for any role`.
    const what = object === undefined ? verb.replace(/(\S+)$/, 'any $1') : `${verb} '${object}'`;
    return `${who(principal)} is not authorized to ${what}`;
  }

  /** The first refusal among several objects of one action (each asked once). */
  refusalOfAll(
    action: AclAction,
    principal: string | undefined,
    objects: Iterable<string | undefined>,
  ): string | undefined {
    if (!this.enabled) return undefined;
    for (const object of new Set(objects)) {
      const refused = this.refusal(action, principal, object);
      if (refused !== undefined) return refused;
    }
    return undefined;
  }

  /**
   * SUBSCRIBE and UPDATE_FRAMEWORK: the framework's principal (its
   * FrameworkInfo's, which the master sets to the authenticated one) must be
   * allowed every role it asks for; a framework asking for none is decided
   * by `permissive`.
   */
  mayRegister(principal: string | undefined, roles: readonly string[]): boolean {
    if (!this.enabled) return true;
    if (roles.length === 0) return this.#acls.permissive;
    return roles.every((role) => this.may('register_frameworks', principal, role));
  }

  /** Tearing down a framework registered by `frameworkPrincipal` (none counts as the empty principal, as upstream). */
  mayTeardown(principal: string | undefined, frameworkPrincipal: string | undefined): boolean {
    return this.may('teardown_frameworks', principal, frameworkPrincipal ?? '');
  }

  /** One entry of UPDATE_QUOTA; the caller refuses the whole request if any entry is refused. */
  mayUpdateQuota(principal: string | undefined, role: string): boolean {
    return this.may('update_quotas', principal, role);
  }

  mayGetQuota(principal: string | undefined, role: string): boolean {
    return this.may('get_quotas', principal, role);
  }

  mayViewRole(principal: string | undefined, role: string): boolean {
    return this.may('view_roles', principal, role);
  }

  /** A resource, by every role it names (`viewableResource`). */
  mayViewResource(principal: string | undefined, r: Resource): boolean {
    return !this.enabled || viewableResource(r, (role) => this.mayViewRole(principal, role));
  }

  /** A framework, by its FrameworkInfo.user. */
  mayViewFramework(principal: string | undefined, user: string): boolean {
    return this.may('view_frameworks', principal, user);
  }

  /** A task, by its command's user, else its executor's, else its framework's. */
  mayViewTask(principal: string | undefined, user: string): boolean {
    return this.may('view_tasks', principal, user);
  }

  /** An executor, by its command's user, else its framework's. */
  mayViewExecutor(principal: string | undefined, user: string): boolean {
    return this.may('view_executors', principal, user);
  }

  mayViewFlags(principal: string | undefined): boolean {
    return this.may('view_flags', principal);
  }

  /** The control API's changes: the clock, faults, runs, snapshot, restore and reset (`control_simulation`). */
  mayControlSimulation(principal: string | undefined): boolean {
    return this.may('control_simulation', principal);
  }

  /**
   * Whether `view_frameworks`, `view_tasks` and `view_executors` let
   * `principal` see every user's, those no rule names included. Users a
   * rule names are asked one by one; all others get one answer, that of a
   * user no rule names.
   */
  mayViewEveryUser(principal: string | undefined): boolean {
    if (!this.enabled) return true;
    return (['view_frameworks', 'view_tasks', 'view_executors'] as const).every((action) => {
      const named = this.#acls[fieldOf(action)].flatMap((rule) =>
        rule.objects.type === 'SOME' ? rule.objects.values : [],
      );
      const unnamed = '\u0000'.repeat(Math.max(0, ...named.map((user) => user.length)) + 1);
      return [...named, unnamed].every((user) => this.may(action, principal, user));
    });
  }

  /**
   * A RESERVE, UNRESERVE, CREATE or DESTROY, by a framework or an operator,
   * as upstream asks it (`operationObjects`); the reason it is refused, if
   * it is.
   */
  operationRefusal(
    principal: string | undefined,
    type: 'RESERVE' | 'UNRESERVE' | 'CREATE' | 'DESTROY',
    resources: Resources,
  ): string | undefined {
    if (!this.enabled) return undefined;
    const { action, objects } = operationObjects(type, resources);
    return this.refusalOfAll(action, principal, objects);
  }

  /**
   * LAUNCH_NESTED_CONTAINER(_SESSION): the principal must be allowed to
   * launch under a container of the parent's user and, when there is a
   * command to run (under an executor), as the command's user (ANY when it
   * names none); without one, upstream asks about the parent alone.
   */
  nestedLaunchRefusal(
    principal: string | undefined,
    session: boolean,
    parentUser: string | undefined,
    command?: { readonly user?: string },
  ): string | undefined {
    const [parent, child] = session
      ? ([
          'launch_nested_container_sessions_under_parent_with_user',
          'launch_nested_container_sessions_as_user',
        ] as const)
      : (['launch_nested_containers_under_parent_with_user', 'launch_nested_containers_as_user'] as const);
    return (
      this.refusal(parent, principal, parentUser) ??
      (command === undefined ? undefined : this.refusal(child, principal, command.user))
    );
  }
}

/**
 * Upstream's objects of an offer operation: RESERVE and CREATE each
 * distinct role reserved to (the last reservation's); UNRESERVE the
 * principal of each resource's last reservation (ANY once for those
 * without one); DESTROY each volume's creator principal (empty when it
 * names none; ANY when no volume is given).
 */
export function operationObjects(
  type: 'RESERVE' | 'UNRESERVE' | 'CREATE' | 'DESTROY',
  resources: Resources,
): { action: AclAction; objects: (string | undefined)[] } {
  switch (type) {
    case 'RESERVE':
      return { action: 'reserve_resources', objects: resources.map((r) => r.role) };
    case 'CREATE':
      return { action: 'create_volumes', objects: resources.length === 0 ? [undefined] : resources.map((r) => r.role) };
    case 'UNRESERVE':
      return { action: 'unreserve_resources', objects: resources.map((r) => r.reservations?.at(-1)?.principal) };
    case 'DESTROY': {
      const volumes = resources.filter((r) => r.disk?.persistence !== undefined);
      return {
        action: 'destroy_volumes',
        objects: volumes.length === 0 ? [undefined] : volumes.map((r) => r.disk!.persistence!.principal ?? ''),
      };
    }
  }
}
