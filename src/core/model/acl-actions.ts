/**
 * Every ACL action of upstream's local authorizer (`ACLs` in acls.proto),
 * by its key in the `--acls` file, with the field that holds its objects,
 * what the objects are, and how a refusal words it:
 *
 *   role      roles, hierarchical: `eng/%` stands for every role below `eng`
 *   value     users, principals or paths, compared as they are
 *   implicit  nothing to name: only ANY or NONE mean anything, and the
 *             file may not give values (upstream refuses SOME)
 *
 * clustersim asks every action for which it has a call (docs/auth.md,
 * "ACLs: which call asks which action"); the others (agent registration, resource providers, disks,
 * images, standalone containers, sandboxes and logs) are checked in the
 * file and kept, with nothing to apply them to.
 */

export type AclObjectKind = 'role' | 'value' | 'implicit';

interface ActionSpec {
  /** The field of a rule that holds its objects. */
  readonly objects: string;
  readonly kind: AclObjectKind;
  /** What a refusal says the principal may not do, an object's value following when there is one. */
  readonly verb: string;
}

const role = (verb: string): ActionSpec => ({ objects: 'roles', kind: 'role', verb });
const users = (verb: string): ActionSpec => ({ objects: 'users', kind: 'value', verb });
const implicit = (objects: string, verb: string): ActionSpec => ({ objects, kind: 'implicit', verb });

export const ACL_ACTIONS = {
  register_frameworks: role('register frameworks with role'),
  run_tasks: users('run tasks as user'),
  teardown_frameworks: { objects: 'framework_principals', kind: 'value', verb: 'tear down frameworks of principal' },
  reserve_resources: role('reserve resources for role'),
  unreserve_resources: {
    objects: 'reserver_principals',
    kind: 'value',
    verb: 'unreserve resources reserved by principal',
  },
  create_volumes: role('create volumes for role'),
  destroy_volumes: { objects: 'creator_principals', kind: 'value', verb: 'destroy volumes created by principal' },
  update_weights: role('update the weight of role'),
  get_endpoints: { objects: 'paths', kind: 'value', verb: 'GET the endpoint' },
  get_quotas: role('get the quota of role'),
  update_quotas: role('update the quota of role'),
  view_frameworks: users('view frameworks of user'),
  view_tasks: users('view tasks of user'),
  view_executors: users('view executors of user'),
  access_sandboxes: users('access sandboxes of user'),
  access_mesos_logs: implicit('logs', 'access the logs'),
  view_roles: role('view role'),
  view_flags: implicit('flags', 'view the flags'),
  launch_nested_containers_as_user: users('launch nested containers as user'),
  launch_nested_containers_under_parent_with_user: users('launch nested containers under a container of user'),
  kill_nested_containers: users('kill nested containers under a container of user'),
  wait_nested_containers: users('wait on nested containers under a container of user'),
  launch_nested_container_sessions_as_user: users('launch nested container sessions as user'),
  launch_nested_container_sessions_under_parent_with_user: users(
    'launch nested container sessions under a container of user',
  ),
  attach_containers_input: users('attach to the input of containers of user'),
  attach_containers_output: users('attach to the output of containers of user'),
  view_containers: users('view containers of user'),
  set_log_level: implicit('level', 'set the log level'),
  remove_nested_containers: users('remove nested containers under a container of user'),
  register_agents: implicit('agents', 'register agents'),
  update_maintenance_schedules: implicit('machines', 'update the maintenance schedule'),
  get_maintenance_schedules: implicit('machines', 'get the maintenance schedule'),
  start_maintenances: implicit('machines', 'start maintenance'),
  stop_maintenances: implicit('machines', 'stop maintenance'),
  get_maintenance_statuses: implicit('machines', 'get the maintenance status'),
  drain_agents: implicit('agents', 'drain agents'),
  deactivate_agents: implicit('agents', 'deactivate agents'),
  reactivate_agents: implicit('agents', 'reactivate agents'),
  mark_agents_gone: implicit('agents', 'mark agents gone'),
  launch_standalone_containers: implicit('users', 'launch standalone containers'),
  kill_standalone_containers: implicit('users', 'kill standalone containers'),
  wait_standalone_containers: implicit('users', 'wait on standalone containers'),
  remove_standalone_containers: implicit('users', 'remove standalone containers'),
  view_standalone_containers: implicit('users', 'view standalone containers'),
  modify_resource_provider_configs: implicit('resource_providers', 'modify resource provider configs'),
  mark_resource_providers_gone: implicit('resource_providers', 'mark resource providers gone'),
  view_resource_providers: implicit('resource_providers', 'view resource providers'),
  prune_images: implicit('images', 'prune images'),
  resize_volumes: role('resize volumes of role'),
  create_block_disks: role('create block disks for role'),
  destroy_block_disks: role('destroy block disks of role'),
  create_mount_disks: role('create mount disks for role'),
  destroy_mount_disks: role('destroy mount disks of role'),
  destroy_raw_disks: role('destroy raw disks of role'),
  // clustersim's own: the control API's changes (`/sim/v1/`: the clock, faults, runs, snapshot, restore, reset).
  control_simulation: implicit('objects', 'control the simulation'),
} as const satisfies Record<string, ActionSpec>;

export type AclAction = keyof typeof ACL_ACTIONS;

/** The camelCase field of an action in `Acls`: `register_frameworks` is `registerFrameworks`. */
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
export type AclField = Camel<AclAction>;

export function fieldOf<A extends AclAction>(action: A): Camel<A> {
  return action.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()) as Camel<A>;
}

export const ACTION_NAMES = Object.keys(ACL_ACTIONS) as AclAction[];

/**
 * Upstream's endpoints whose GET `get_endpoints` governs; a rule naming
 * another path is refused in the file.
 */
export const AUTHORIZABLE_ENDPOINTS: readonly string[] = [
  '/containers',
  '/containerizer/debug',
  '/files/debug',
  '/logging/toggle',
  '/metrics/snapshot',
  '/monitor/statistics',
];
