/**
 * Authorization as upstream's local authorizer decides it, from ACLs given
 * as data (`--acls`). Pure: no I/O, no clock, the same answer for the same
 * question. Who asks is a principal (the one a request authenticated as, or
 * the one a FrameworkInfo declares), or nobody when authentication is off.
 *
 * A question is a subject and an object, each an entity:
 *   subject  SOME [principal], or ANY when there is no principal
 *   object   SOME [the role, user or framework principal asked about]
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
import type { Resource } from './resources.js';
import type { FrameworkInfo } from './types.js';

export type AclEntity =
  | { readonly type: 'SOME'; readonly values: readonly string[] }
  | { readonly type: 'ANY' }
  | { readonly type: 'NONE' };

export interface AclRule {
  /** Who may (or may not): principals. */
  readonly principals: AclEntity;
  /** On what: roles, users or framework principals, by the action. */
  readonly objects: AclEntity;
}

/** The ACLs clustersim enforces, each list in the order of the file. */
export interface Acls {
  readonly permissive: boolean;
  /** Objects: roles a framework may subscribe with (every role of a MULTI_ROLE framework). */
  readonly registerFrameworks: readonly AclRule[];
  /** Objects: the principals whose frameworks may be torn down. */
  readonly teardownFrameworks: readonly AclRule[];
  /** Objects: roles whose quota may be updated. */
  readonly updateQuotas: readonly AclRule[];
  /** Objects: roles whose quota may be seen. */
  readonly getQuotas: readonly AclRule[];
  /** Objects: users (FrameworkInfo.user) whose frameworks may be seen. */
  readonly viewFrameworks: readonly AclRule[];
  /** Objects: users whose tasks may be seen (the task's command user, else the framework's). */
  readonly viewTasks: readonly AclRule[];
  /** Objects: users whose executors may be seen (the executor's command user, else the framework's). */
  readonly viewExecutors: readonly AclRule[];
  /** Objects: roles that may be seen. */
  readonly viewRoles: readonly AclRule[];
  /** Objects: ANY or NONE only; whether the flags may be seen. */
  readonly viewFlags: readonly AclRule[];
  /** Objects: ANY or NONE only; whether the control API's changes (clock, faults, reset, rewinds) may be made. */
  readonly controlSimulation: readonly AclRule[];
}

export const NO_ACLS: Acls = {
  permissive: true,
  registerFrameworks: [],
  teardownFrameworks: [],
  updateQuotas: [],
  getQuotas: [],
  viewFrameworks: [],
  viewTasks: [],
  viewExecutors: [],
  viewRoles: [],
  viewFlags: [],
  controlSimulation: [],
};

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

function decideRole(rules: readonly RoleRule[], permissive: boolean, subject: AclEntity, role: string): boolean {
  const object = some(role);
  for (const rule of rules) {
    if (rule.below === undefined) {
      if (matches(subject, rule.principals) && matches(object, rule.objects)) {
        return allows(subject, rule.principals) && allows(object, rule.objects);
      }
    } else if (role.startsWith(rule.below) && matches(subject, rule.principals)) {
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
      if (value.endsWith('/%')) out.push({ principals: rule.principals, objects: some(value), below: value.slice(0, -1) });
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

/**
 * The decisions, one per question the cluster asks. Without ACLs every
 * answer is yes, as upstream without an authorizer.
 */
export class Authorizer {
  readonly enabled: boolean;
  readonly #acls: Acls;
  readonly #register: RoleRule[];
  readonly #updateQuota: RoleRule[];
  readonly #getQuota: RoleRule[];
  readonly #viewRole: RoleRule[];

  constructor(acls: Acls | undefined) {
    this.enabled = acls !== undefined;
    this.#acls = acls ?? NO_ACLS;
    this.#register = roleRules(this.#acls.registerFrameworks);
    this.#updateQuota = roleRules(this.#acls.updateQuotas);
    this.#getQuota = roleRules(this.#acls.getQuotas);
    this.#viewRole = roleRules(this.#acls.viewRoles);
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
    const subject = subjectOf(principal);
    return roles.every((role) => decideRole(this.#register, this.#acls.permissive, subject, role));
  }

  /** Tearing down a framework registered by `frameworkPrincipal` (none counts as the empty principal, as upstream). */
  mayTeardown(principal: string | undefined, frameworkPrincipal: string | undefined): boolean {
    return this.#decide(this.#acls.teardownFrameworks, principal, some(frameworkPrincipal ?? ''));
  }

  /** One entry of UPDATE_QUOTA; the caller refuses the whole request if any entry is refused. */
  mayUpdateQuota(principal: string | undefined, role: string): boolean {
    return !this.enabled || decideRole(this.#updateQuota, this.#acls.permissive, subjectOf(principal), role);
  }

  mayGetQuota(principal: string | undefined, role: string): boolean {
    return !this.enabled || decideRole(this.#getQuota, this.#acls.permissive, subjectOf(principal), role);
  }

  mayViewRole(principal: string | undefined, role: string): boolean {
    return !this.enabled || decideRole(this.#viewRole, this.#acls.permissive, subjectOf(principal), role);
  }

  /** A resource, by every role it names (`viewableResource`). */
  mayViewResource(principal: string | undefined, r: Resource): boolean {
    return !this.enabled || viewableResource(r, (role) => this.mayViewRole(principal, role));
  }

  /** A framework, by its FrameworkInfo.user. */
  mayViewFramework(principal: string | undefined, user: string): boolean {
    return this.#decide(this.#acls.viewFrameworks, principal, some(user));
  }

  /** A task, by its command's user, else its executor's, else its framework's. */
  mayViewTask(principal: string | undefined, user: string): boolean {
    return this.#decide(this.#acls.viewTasks, principal, some(user));
  }

  /** An executor, by its command's user, else its framework's. */
  mayViewExecutor(principal: string | undefined, user: string): boolean {
    return this.#decide(this.#acls.viewExecutors, principal, some(user));
  }

  mayViewFlags(principal: string | undefined): boolean {
    return this.#decide(this.#acls.viewFlags, principal, ANY);
  }

  /** The control API's changes: the clock, faults, runs, snapshot, restore and reset (`control_simulation`). */
  mayControlSimulation(principal: string | undefined): boolean {
    return this.#decide(this.#acls.controlSimulation, principal, ANY);
  }

  /**
   * Whether `view_frameworks`, `view_tasks` and `view_executors` let
   * `principal` see every user's, those no rule names included. Users a
   * rule names are asked one by one; all others get one answer, that of a
   * user no rule names.
   */
  mayViewEveryUser(principal: string | undefined): boolean {
    if (!this.enabled) return true;
    const subject = subjectOf(principal);
    return [this.#acls.viewFrameworks, this.#acls.viewTasks, this.#acls.viewExecutors].every((rules) => {
      const named = rules.flatMap((rule) => (rule.objects.type === 'SOME' ? rule.objects.values : []));
      const unnamed = '\u0000'.repeat(Math.max(0, ...named.map((user) => user.length)) + 1);
      return [...named, unnamed].every((user) => decide(rules, this.#acls.permissive, subject, some(user)));
    });
  }

  #decide(rules: readonly AclRule[], principal: string | undefined, object: AclEntity): boolean {
    return !this.enabled || decide(rules, this.#acls.permissive, subjectOf(principal), object);
  }
}
