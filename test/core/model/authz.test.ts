/**
 * ACL evaluation (src/core/authz.ts) against upstream's local authorizer:
 * the match and allow tables, the first matching rule deciding, `permissive`
 * when none matches, hierarchical roles, every role of a MULTI_ROLE
 * framework; then the master using it for SUBSCRIBE, UPDATE_FRAMEWORK and
 * the principal of calls. fast-check prints its seed on failure; pass it
 * back to `fc.assert` to replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Authorizer,
  NO_ACLS,
  notAuthorizedForRoles,
  rolesOf,
  type AclEntity,
  type AclRule,
  type Acls,
} from '../../../src/core/model/authz.js';
import { scalar, type Resource } from '../../../src/core/model/resources.js';
import { frameworkInfo, RecordingSink, TestCluster } from '../helpers.js';

const ANY: AclEntity = { type: 'ANY' };
const NONE: AclEntity = { type: 'NONE' };
const some = (...values: string[]): AclEntity => ({ type: 'SOME', values });
const rule = (principals: AclEntity, objects: AclEntity): AclRule => ({ principals, objects });
const acls = (extra: Partial<Acls>): Acls => ({ ...NO_ACLS, ...extra });

describe('Authorizer: the rules of upstream', () => {
  it('says yes to everything without ACLs, whatever is asked', () => {
    const open = new Authorizer(undefined);
    expect(open.enabled).toBe(false);
    expect(open.mayRegister('anyone', ['prod'])).toBe(true);
    expect(open.mayRegister(undefined, [])).toBe(true);
    expect(open.mayTeardown(undefined, 'x')).toBe(true);
    expect(open.mayUpdateQuota('x', 'r')).toBe(true);
    expect(open.mayViewFlags(undefined)).toBe(true);
  });

  it('lets the first rule whose principals and objects both match decide, else `permissive`', () => {
    const a = new Authorizer(
      acls({
        permissive: false,
        registerFrameworks: [rule(some('alice'), some('dev')), rule(some('alice'), NONE), rule(ANY, some('public'))],
      }),
    );
    expect(a.mayRegister('alice', ['dev'])).toBe(true);
    // The second rule matches any role of alice's (NONE matches) and allows none.
    expect(a.mayRegister('alice', ['public'])).toBe(false);
    // bob: no rule names him; the third matches any principal, and allows `public`.
    expect(a.mayRegister('bob', ['public'])).toBe(true);
    expect(a.mayRegister('bob', ['dev'])).toBe(false);
    // No principal (authentication off, none declared) is ANY: only ANY or NONE rules match it.
    expect(a.mayRegister(undefined, ['public'])).toBe(true);
    expect(a.mayRegister(undefined, ['dev'])).toBe(false);
    expect(
      new Authorizer(acls({ registerFrameworks: [rule(some('alice'), some('dev'))] })).mayRegister('bob', ['x']),
    ).toBe(true);
  });

  it('implements the match and allow tables: principals ANY allow any principal, NONE none, SOME the named ones', () => {
    const only = (principals: AclEntity) =>
      new Authorizer(acls({ permissive: true, teardownFrameworks: [rule(principals, ANY)] }));
    expect([only(ANY).mayTeardown('p', 'f'), only(ANY).mayTeardown(undefined, 'f')]).toEqual([true, true]);
    expect([only(NONE).mayTeardown('p', 'f'), only(NONE).mayTeardown(undefined, 'f')]).toEqual([false, false]);
    expect([only(some('p')).mayTeardown('p', 'f'), only(some('p')).mayTeardown('q', 'f')]).toEqual([true, true]);
    expect(only(some('p')).mayTeardown(undefined, 'f')).toBe(true); // SOME does not match ANY: permissive decides
    const strict = new Authorizer(acls({ permissive: false, teardownFrameworks: [rule(some('p'), ANY)] }));
    expect([strict.mayTeardown('p', 'f'), strict.mayTeardown('q', 'f'), strict.mayTeardown(undefined, 'f')]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('asks teardown_frameworks about the framework principal, none counting as the empty one', () => {
    const a = new Authorizer(acls({ permissive: false, teardownFrameworks: [rule(some('ops'), some('alice', ''))] }));
    expect(a.mayTeardown('ops', 'alice')).toBe(true);
    expect(a.mayTeardown('ops', undefined)).toBe(true);
    expect(a.mayTeardown('ops', 'bob')).toBe(false);
    expect(a.mayTeardown('alice', 'alice')).toBe(false);
  });

  it('needs every role of a MULTI_ROLE framework allowed; no roles at all is `permissive`', () => {
    const a = new Authorizer(acls({ permissive: false, registerFrameworks: [rule(some('p'), some('a', 'b'))] }));
    expect(a.mayRegister('p', ['a', 'b'])).toBe(true);
    expect(a.mayRegister('p', ['a', 'c'])).toBe(false);
    expect(a.mayRegister('p', [])).toBe(false);
    expect(new Authorizer(acls({ permissive: true })).mayRegister('p', [])).toBe(true);
    expect(rolesOf(frameworkInfo({ capabilities: ['MULTI_ROLE'], roles: ['x', 'y'] }))).toEqual(['x', 'y']);
    expect(rolesOf(frameworkInfo({ role: 'r' }))).toEqual(['r']);
    expect(rolesOf(frameworkInfo())).toEqual(['*']);
    expect(notAuthorizedForRoles(['b', 'a', 'b'])).toBe("Not authorized to use roles '{ a, b }'");
  });

  it('takes `x/%` for every role strictly below x, beside plain values of the same rule', () => {
    const a = new Authorizer(acls({ permissive: false, registerFrameworks: [rule(some('p'), some('eng/%', 'ops'))] }));
    expect(a.mayRegister('p', ['eng/web', 'eng/web/api', 'ops'])).toBe(true);
    expect(a.mayRegister('p', ['eng'])).toBe(false);
    expect(a.mayRegister('p', ['engineering/x'])).toBe(false);
    expect(a.mayRegister('q', ['eng/web'])).toBe(false);
    const quota = new Authorizer(acls({ permissive: false, updateQuotas: [rule(some('admin'), some('team/%'))] }));
    expect([
      quota.mayUpdateQuota('admin', 'team/a'),
      quota.mayUpdateQuota('admin', 'team'),
      quota.mayUpdateQuota('x', 'team/a'),
    ]).toEqual([true, false, false]);
  });

  it('asks the view rules about users, roles and flags', () => {
    const a = new Authorizer(
      acls({
        permissive: false,
        viewFrameworks: [rule(some('ops'), ANY), rule(some('dev'), some('dev'))],
        viewTasks: [rule(ANY, some('root'))],
        viewExecutors: [rule(some('ops'), NONE)],
        viewRoles: [rule(some('dev'), some('dev/%'))],
        viewFlags: [rule(some('ops'), ANY)],
        getQuotas: [rule(ANY, ANY)],
      }),
    );
    expect([
      a.mayViewFramework('ops', 'root'),
      a.mayViewFramework('dev', 'dev'),
      a.mayViewFramework('dev', 'root'),
    ]).toEqual([true, true, false]);
    expect([a.mayViewTask(undefined, 'root'), a.mayViewTask('x', 'other')]).toEqual([true, false]);
    expect(a.mayViewExecutor('ops', 'root')).toBe(false);
    expect([a.mayViewRole('dev', 'dev/a'), a.mayViewRole('dev', 'prod')]).toEqual([true, false]);
    expect([a.mayViewFlags('ops'), a.mayViewFlags('dev'), a.mayViewFlags(undefined)]).toEqual([true, false, false]);
    expect(a.mayGetQuota(undefined, 'anything')).toBe(true);
  });

  it('asks about offer operations as upstream: roles reserved to, reserver and creator principals', () => {
    const a = new Authorizer(
      acls({
        permissive: false,
        reserveResources: [rule(some('ops'), some('eng/%'))],
        unreserveResources: [rule(some('ops'), some('ops')), rule(some('ops'), ANY)],
        createVolumes: [rule(some('ops'), some('dev'))],
        destroyVolumes: [rule(some('ops'), some(''))],
      }),
    );
    const reserved = (role: string, principal?: string): Resource => ({
      ...scalar('cpus', 1),
      role,
      reservations: [{ type: 'DYNAMIC', role, ...(principal === undefined ? {} : { principal }) }],
    });
    expect(a.operationRefusal('ops', 'RESERVE', [reserved('eng/a'), reserved('eng/b/c')])).toBeUndefined();
    expect(a.operationRefusal('ops', 'RESERVE', [reserved('eng/a'), reserved('eng')])).toBe(
      "Principal 'ops' is not authorized to reserve resources for role 'eng'",
    );
    // Without a reserver principal the object is ANY, which only an ANY rule matches.
    expect(a.operationRefusal('ops', 'UNRESERVE', [reserved('x', 'ops'), reserved('x')])).toBeUndefined();
    expect(a.operationRefusal('dev', 'UNRESERVE', [reserved('x')])).toBe(
      "Principal 'dev' is not authorized to unreserve resources reserved by any principal",
    );
    const volume = (principal?: string) => ({
      ...reserved('dev'),
      disk: { persistence: { id: 'v', ...(principal === undefined ? {} : { principal }) } },
    });
    expect(a.operationRefusal('ops', 'CREATE', [volume('ops')])).toBeUndefined();
    expect(a.operationRefusal('ops', 'DESTROY', [volume()])).toBeUndefined();
    expect(a.operationRefusal('ops', 'DESTROY', [volume('x')])).toBe(
      "Principal 'ops' is not authorized to destroy volumes created by principal 'x'",
    );
    expect(a.operationRefusal(undefined, 'CREATE', [])).toBe(
      'A request without a principal is not authorized to create volumes for any role',
    );
  });

  it('asks implicit actions about ANY, and a nested launch about both the parent and the command user', () => {
    const a = new Authorizer(
      acls({
        permissive: false,
        markAgentsGone: [rule(some('ops'), ANY)],
        launchNestedContainersUnderParentWithUser: [rule(some('ops'), some('app'))],
        launchNestedContainersAsUser: [rule(some('ops'), some('app')), rule(some('ops'), ANY)],
      }),
    );
    expect([
      a.may('mark_agents_gone', 'ops'),
      a.may('mark_agents_gone', 'ops', 'ignored'),
      a.may('mark_agents_gone', 'dev'),
    ]).toEqual([true, true, false]);
    expect(a.nestedLaunchRefusal('ops', false, 'app', { user: 'app' })).toBeUndefined();
    expect(a.nestedLaunchRefusal('ops', false, 'app', {})).toBeUndefined();
    expect(a.nestedLaunchRefusal('dev', false, 'app', { user: 'app' })).toBe(
      "Principal 'dev' is not authorized to launch nested containers under a container of user 'app'",
    );
    expect(a.nestedLaunchRefusal('ops', false, 'root', { user: 'app' })).toBe(
      "Principal 'ops' is not authorized to launch nested containers under a container of user 'root'",
    );
    expect(a.nestedLaunchRefusal('ops', true, 'app', { user: 'app' })).toBe(
      "Principal 'ops' is not authorized to launch nested container sessions under a container of user 'app'",
    );
    const strictChild = new Authorizer(
      acls({
        permissive: false,
        launchNestedContainersUnderParentWithUser: [rule(ANY, ANY)],
        launchNestedContainersAsUser: [rule(some('ops'), some('app'))],
      }),
    );
    expect(strictChild.nestedLaunchRefusal('ops', false, 'x', { user: 'root' })).toBe(
      "Principal 'ops' is not authorized to launch nested containers as user 'root'",
    );
    // Without a command (no executor holds the parent), only the parent is asked.
    expect(strictChild.nestedLaunchRefusal('ops', false, undefined)).toBeUndefined();
  });

  it('property: a leading rule ANY/ANY allows everything and NONE/ANY nothing, whatever follows', () => {
    const entity = fc.oneof(
      fc.constant(ANY),
      fc.constant(NONE),
      fc.array(fc.constantFrom('a', 'b', 'c', 'a/%'), { maxLength: 3 }).map((values) => some(...values)),
    );
    const rules = fc.array(fc.record({ principals: entity, objects: entity }), { maxLength: 4 });
    fc.assert(
      fc.property(
        rules,
        fc.boolean(),
        fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
        fc.constantFrom('a', 'b', 'a/x'),
        (rest, permissive, principal, role) => {
          const yes = new Authorizer(
            acls({ permissive, registerFrameworks: [rule(ANY, ANY), ...rest], viewTasks: [rule(ANY, ANY), ...rest] }),
          );
          expect(yes.mayRegister(principal, [role])).toBe(true);
          expect(yes.mayViewTask(principal, role)).toBe(true);
          const no = new Authorizer(
            acls({ permissive, registerFrameworks: [rule(NONE, ANY), ...rest], viewTasks: [rule(NONE, ANY), ...rest] }),
          );
          expect(no.mayRegister(principal, [role])).toBe(false);
          expect(no.mayViewTask(principal, role)).toBe(false);
        },
      ),
      { verbose: true },
    );
  });
});

describe('the master with ACLs and an authenticated principal', () => {
  const cluster = (a?: Acls) =>
    new TestCluster({
      seed: 1,
      master: {
        hostname: 'localhost',
        ip: '127.0.0.1',
        port: 5050,
        version: '1.11.0',
        ...(a === undefined ? {} : { acls: a }),
      },
    });
  const only = acls({ permissive: false, registerFrameworks: [rule(some('alice'), some('dev'))] });
  const info = (roles: string[], principal?: string) =>
    frameworkInfo({ capabilities: ['MULTI_ROLE'], roles, ...(principal === undefined ? {} : { principal }) });

  it('refuses a SUBSCRIBE for a refused role with an ERROR, then closes, and keeps no framework', () => {
    const c = cluster(only);
    const sink = new RecordingSink();
    c.subscribeWith({ info: info(['prod']), suppressedRoles: [] }, sink);
    expect(sink.events).toEqual([{ type: 'ERROR', message: "Not authorized to use roles '{ prod }'" }]);
    expect(sink.closed).toBe(true);
    expect([...c.view.frameworks()]).toEqual([]);
  });

  it('gives the FrameworkInfo the authenticated principal, and asks the ACLs about it', () => {
    const c = cluster(only);
    const sink = new RecordingSink();
    const { frameworkId, streamId } = c.subscribe('conn-1', { info: info(['dev']), suppressedRoles: [] }, 'alice');
    expect(c.view.framework(frameworkId)!.info.principal).toBe('alice');
    expect(c.call(frameworkId, streamId, { type: 'REVIVE', roles: [] }, 'alice')).toEqual({
      ok: true,
      value: undefined,
    });
    expect(c.call(frameworkId, streamId, { type: 'TEARDOWN' }, 'bob')).toEqual({
      ok: false,
      error: {
        code: 'INVALID',
        message: "Authenticated principal 'bob' does not match principal 'alice' set in `FrameworkInfo`",
      },
    });
    expect(c.view.framework(frameworkId)?.state).toBe('subscribed');
    const update = c.call(
      frameworkId,
      streamId,
      {
        type: 'UPDATE_FRAMEWORK',
        subscription: { info: { ...info(['dev', 'ops'], 'alice'), id: frameworkId }, suppressedRoles: [] },
      },
      'alice',
    );
    expect(update).toEqual({
      ok: false,
      error: { code: 'FORBIDDEN', message: "Not authorized to use roles '{ dev, ops }'" },
    });
    expect(c.view.framework(frameworkId)!.roles()).toEqual(['dev']);
    expect(sink.events).toEqual([]);
  });

  it('changes nothing without ACLs or a principal', () => {
    const c = cluster();
    const { frameworkId, streamId } = c.subscribe('conn-1', { info: info(['prod']), suppressedRoles: [] });
    expect(c.view.framework(frameworkId)!.info.principal).toBeUndefined();
    expect(c.call(frameworkId, streamId, { type: 'TEARDOWN' }).ok).toBe(true);
  });
});

describe('Authorizer: the control API', () => {
  it('asks control_simulation about the principal (ANY without one), `permissive` when no rule matches', () => {
    const a = new Authorizer(acls({ permissive: false, controlSimulation: [rule(some('ops'), ANY), rule(ANY, NONE)] }));
    expect([a.mayControlSimulation('ops'), a.mayControlSimulation('bob'), a.mayControlSimulation(undefined)]).toEqual([
      true,
      false,
      false,
    ]);
    expect(new Authorizer(acls({ permissive: true })).mayControlSimulation('bob')).toBe(true);
    expect(new Authorizer(acls({ permissive: false })).mayControlSimulation('bob')).toBe(false);
    expect(new Authorizer(undefined).mayControlSimulation(undefined)).toBe(true);
  });

  it('says whether a principal may view every user, those no rule names included', () => {
    const only = (principal: string, ...users: string[]) => [
      rule(some(principal), some(...users)),
      rule(some(principal), NONE),
    ];
    const a = new Authorizer(
      acls({ viewFrameworks: only('bob', 'bob-user'), viewExecutors: [rule(some('carol'), some('x'))] }),
    );
    expect(a.mayViewEveryUser('bob')).toBe(false);
    // carol is refused no user: the rule naming her allows x, and `permissive` the others.
    expect(a.mayViewEveryUser('carol')).toBe(true);
    expect(a.mayViewEveryUser(undefined)).toBe(true);
    // A user refused by name, every other allowed.
    expect(new Authorizer(acls({ viewTasks: [rule(ANY, NONE)], permissive: true })).mayViewEveryUser('x')).toBe(false);
    expect(new Authorizer(acls({ viewTasks: [rule(some('x'), ANY)], permissive: false })).mayViewEveryUser('x')).toBe(
      false,
    );
    expect(
      new Authorizer(
        acls({
          viewFrameworks: [rule(ANY, ANY)],
          viewTasks: [rule(ANY, ANY)],
          viewExecutors: [rule(ANY, ANY)],
          permissive: false,
        }),
      ).mayViewEveryUser('x'),
    ).toBe(true);
    expect(new Authorizer(undefined).mayViewEveryUser('x')).toBe(true);
  });

  it('property: mayViewEveryUser is true exactly when each view rule allows every user asked', () => {
    const users = ['u1', 'u2', 'u3'];
    const entity = fc.oneof(
      fc.constant(ANY),
      fc.constant(NONE),
      fc.subarray(users, { minLength: 1 }).map((v) => some(...v)),
    );
    const rules = fc.array(
      fc.record({ principals: fc.oneof(fc.constant(ANY), fc.constant(some('p'))), objects: entity }),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(rules, rules, rules, fc.boolean(), (viewFrameworks, viewTasks, viewExecutors, permissive) => {
        const a = new Authorizer(acls({ permissive, viewFrameworks, viewTasks, viewExecutors }));
        const asked = [...users, 'someone-else'];
        const every = asked.every(
          (u) => a.mayViewFramework('p', u) && a.mayViewTask('p', u) && a.mayViewExecutor('p', u),
        );
        expect(a.mayViewEveryUser('p')).toBe(every);
      }),
    );
  });
});
