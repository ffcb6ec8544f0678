/**
 * Secured runs: a fifth of the runs start their cluster with credentials
 * (HTTP Basic on the scheduler and operator APIs) and ACLs, so that the
 * fuzzer reaches authentication (401) and authorization (403) too. The
 * live framework authenticates as `fuzz`; requests name a principal by
 * the token `@@auth:<n>`, resolved to an `Authorization` value:
 *
 *   0 fuzz     the live framework's principal
 *   1 ops      an operator the ACLs let do everything
 *   2 viewer   refused whatever it asks to change, and most of what it reads
 *   3          `ops` with a wrong secret
 *
 * Unsecured runs ignore the header.
 */
export const PRINCIPALS = ['fuzz', 'ops', 'viewer'] as const;
const SECRET = 'secret';

export const CREDENTIALS = { credentials: PRINCIPALS.map((principal) => ({ principal, secret: SECRET })) };

const viewer = { values: ['viewer'] };
const NONE = { type: 'NONE' };
export const ACLS = {
  permissive: true,
  register_frameworks: [{ principals: viewer, roles: NONE }],
  teardown_frameworks: [{ principals: viewer, framework_principals: NONE }],
  update_quotas: [{ principals: viewer, roles: NONE }],
  get_quotas: [{ principals: viewer, roles: { values: ['r1'] } }],
  view_frameworks: [{ principals: viewer, users: NONE }],
  view_tasks: [{ principals: viewer, users: NONE }],
  view_roles: [{ principals: viewer, roles: { values: ['r2'] } }],
  view_flags: [{ principals: viewer, flags: NONE }],
};

const basic = (principal: string, secret: string) =>
  `Basic ${Buffer.from(`${principal}:${secret}`).toString('base64')}`;

/** The `Authorization` value of `@@auth:<index>`. */
export function authorization(index: number): string {
  const principal = PRINCIPALS[index % (PRINCIPALS.length + 1)];
  return principal === undefined ? basic('ops', 'not the secret') : basic(principal, SECRET);
}
