/**
 * Authentication (`credentials`) and authorization (`acls`) on the master's
 * HTTP API, against real sockets: HTTP Basic on the scheduler API with the
 * upstream realm and 401, the principal carried into the core, and the ACLs
 * deciding SUBSCRIBE and UPDATE_FRAMEWORK. Without either, nothing changes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../src/client/scheduler-client.js';
import { authenticate, SCHEDULER_REALM } from '../../src/http/auth.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';

const CREDENTIALS = {
  credentials: [
    { principal: 'alice', secret: 's3cret' },
    { principal: 'bob', secret: 'hunter2' },
  ],
};
const ACLS = {
  permissive: false,
  register_frameworks: [
    { principals: { values: ['alice'] }, roles: { values: ['dev', 'eng/%'] } },
    { principals: { values: ['bob'] }, roles: { type: 'ANY' } },
  ],
};
const basic = (user: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
});
const ALICE = basic('alice', 's3cret');
const BOB = basic('bob', 'hunter2');
const JSON_TYPE = { 'content-type': 'application/json' };
const CHALLENGE = `Basic realm="${SCHEDULER_REALM}"`;

const multiRole = (roles: string[], extra: Record<string, unknown> = {}) => ({
  user: 'root',
  name: 'auth-test',
  roles,
  capabilities: [{ type: 'MULTI_ROLE' }],
  ...extra,
});

let running: RunningCluster | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(options: StartClusterOptions = {}): Promise<RunningCluster> {
  running = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 3, ...options });
  return running;
}

const schedulerUrl = (r: RunningCluster, prefix = '') => new URL(`${prefix}/api/v1/scheduler`, r.masterUrl);
const subscribeBody = (info: Record<string, unknown>) =>
  JSON.stringify({ type: 'SUBSCRIBE', subscribe: { framework_info: info } });

async function subscribed(
  r: RunningCluster,
  headers: Record<string, string>,
  info: Record<string, unknown>,
): Promise<SchedulerClient> {
  const client = new SchedulerClient(r.masterUrl, 'json', headers);
  const res = await client.subscribe(info);
  expect([res.status, res.body]).toEqual([200, '']);
  await client.next('SUBSCRIBED');
  return client;
}

describe('authenticate (HTTP Basic, as upstream)', () => {
  const creds = new Map([['alice', 's3cret']]);
  it('returns the principal of valid credentials, and the 401 with the realm otherwise', () => {
    expect(authenticate(ALICE.authorization, creds, SCHEDULER_REALM)).toEqual({ ok: true, principal: 'alice' });
    for (const header of [
      undefined,
      basic('alice', 'wrong').authorization,
      basic('mallory', 's3cret').authorization,
      `Bearer ${Buffer.from('alice:s3cret').toString('base64')}`,
      `basic ${Buffer.from('alice:s3cret').toString('base64')}`,
      `Basic  ${Buffer.from('alice:s3cret').toString('base64')}`,
      'Basic !!not-base64!!',
      `Basic ${Buffer.from('alice').toString('base64')}`,
      `Basic ${Buffer.from('alice:s3cret:x').toString('base64')}`,
    ]) {
      const result = authenticate(header, creds, SCHEDULER_REALM);
      expect(result.ok, String(header)).toBe(false);
      if (!result.ok) {
        expect(result.challenge).toBe(CHALLENGE);
        expect([result.error.status, result.error.body]).toEqual([401, '401 Unauthorized.']);
      }
    }
  });
});

describe('without credentials or ACLs', () => {
  it('serves the scheduler API as before, whatever Authorization header comes along', async () => {
    const r = await start();
    const client = await subscribed(r, basic('nobody', 'nothing'), multiRole(['prod']));
    expect(r.cluster.view.framework(client.frameworkId!)!.info.principal).toBeUndefined();
    expect((await client.call({ type: 'REVIVE' })).status).toBe(202);
    client.disconnect();
  });
});

describe('with credentials', () => {
  it('answers 401 with WWW-Authenticate and the upstream body, and closes, on both paths and before the method check', async () => {
    const r = await start({ credentials: CREDENTIALS });
    for (const prefix of ['', '/master']) {
      for (const headers of [JSON_TYPE, { ...JSON_TYPE, ...basic('alice', 'nope') }]) {
        const res = await postRaw(schedulerUrl(r, prefix), subscribeBody(multiRole(['dev'])), headers);
        expect([res.status, res.body]).toEqual([401, '401 Unauthorized.']);
        expect(res.headers['www-authenticate']).toBe(CHALLENGE);
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(res.headers.connection).toBe('close');
      }
    }
    const get = await fetch(schedulerUrl(r));
    expect([get.status, get.headers.get('www-authenticate')]).toEqual([401, CHALLENGE]);
    const authenticatedGet = await fetch(schedulerUrl(r), { headers: ALICE });
    expect(authenticatedGet.status).toBe(405);
  });

  it('leaves the read endpoints and unknown paths open', async () => {
    const r = await start({ credentials: CREDENTIALS });
    expect((await fetch(new URL('/state', r.masterUrl))).status).toBe(200);
    expect((await fetch(new URL('/master/frameworks', r.masterUrl))).status).toBe(200);
    expect((await fetch(new URL('/nothing-here', r.masterUrl))).status).toBe(404);
    // A path below the operator endpoint is served by it, as upstream routes: credentials first.
    expect((await fetch(new URL('/api/v1/nothing-here', r.masterUrl), { method: 'POST' })).status).toBe(401);
  });

  it('subscribes an authenticated scheduler, giving its FrameworkInfo the authenticated principal', async () => {
    const r = await start({ credentials: CREDENTIALS });
    const client = await subscribed(r, ALICE, multiRole(['dev']));
    expect(r.cluster.view.framework(client.frameworkId!)!.info.principal).toBe('alice');
    const frameworks = (await (await fetch(new URL('/frameworks', r.masterUrl))).json()) as {
      frameworks: { principal?: string }[];
    };
    expect(frameworks.frameworks[0]!.principal).toBe('alice');
    expect((await client.call({ type: 'REVIVE' })).status).toBe(202);
    client.disconnect();
  });

  it('refuses a SUBSCRIBE whose FrameworkInfo declares another principal: 400 at validation', async () => {
    const r = await start({ credentials: CREDENTIALS });
    const res = await postRaw(schedulerUrl(r), subscribeBody(multiRole(['dev'], { principal: 'bob' })), {
      ...JSON_TYPE,
      ...ALICE,
    });
    expect([res.status, res.body]).toEqual([
      400,
      "Failed to validate scheduler::Call: Authenticated principal 'alice' does not match principal 'bob' set in `FrameworkInfo`",
    ]);
    expect(res.headers.connection).toBe('close');
    expect([...r.cluster.view.frameworks()]).toEqual([]);
  });

  it("refuses a call, TEARDOWN included, on another principal's framework: 400, and the framework stays", async () => {
    const r = await start({ credentials: CREDENTIALS });
    const alice = await subscribed(r, ALICE, multiRole(['dev']));
    const asBob = { ...JSON_TYPE, ...BOB, 'mesos-stream-id': alice.streamId! };
    const teardown = JSON.stringify({ type: 'TEARDOWN', framework_id: { value: alice.frameworkId } });
    const res = await postRaw(schedulerUrl(r), teardown, asBob);
    expect([res.status, res.body]).toEqual([
      400,
      "Authenticated principal 'bob' does not match principal 'alice' set in `FrameworkInfo`",
    ]);
    expect(r.cluster.view.framework(alice.frameworkId!)?.state).toBe('subscribed');
    expect((await alice.call({ type: 'TEARDOWN' })).status).toBe(202);
    expect(r.cluster.view.framework(alice.frameworkId!)).toBeUndefined();
  });
});

describe('with credentials and ACLs', () => {
  it('refuses a SUBSCRIBE for a role the ACLs do not allow: ERROR event first, then the stream closes', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS });
    const client = new SchedulerClient(r.masterUrl, 'json', ALICE);
    // The connection is taken (200), then the framework refused: subscribe() rejects with the ERROR's message.
    await expect(client.subscribe(multiRole(['dev', 'prod']))).rejects.toThrow(
      "Not authorized to use roles '{ dev, prod }'",
    );
    const first = await client.next();
    expect(first).toMatchObject({ type: 'ERROR', message: "Not authorized to use roles '{ dev, prod }'" });
    await expect(client.next()).rejects.toThrow('closed');
    expect([...r.cluster.view.frameworks()]).toEqual([]);
  });

  it('allows every role the rules cover, nested ones through `eng/%`, and another principal any role', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS });
    const alice = await subscribed(r, ALICE, multiRole(['dev', 'eng/web', 'eng/web/a']));
    const bob = await subscribed(r, BOB, multiRole(['prod']));
    const refused = new SchedulerClient(r.masterUrl, 'json', ALICE);
    await expect(refused.subscribe(multiRole(['eng']))).rejects.toThrow('Not authorized');
    expect(await refused.next()).toMatchObject({ type: 'ERROR', message: "Not authorized to use roles '{ eng }'" });
    alice.disconnect();
    bob.disconnect();
  });

  it('answers UPDATE_FRAMEWORK asking for a refused role 403, and changes nothing', async () => {
    const r = await start({ credentials: CREDENTIALS, acls: ACLS });
    const client = await subscribed(r, ALICE, multiRole(['dev']));
    const info = multiRole(['dev', 'prod'], { id: { value: client.frameworkId }, principal: 'alice' });
    const res = await client.call({ type: 'UPDATE_FRAMEWORK', update_framework: { framework_info: info } });
    expect([res.status, res.body]).toEqual([403, "Not authorized to use roles '{ dev, prod }'"]);
    expect(r.cluster.view.framework(client.frameworkId!)!.roles()).toEqual(['dev']);
    const allowed = multiRole(['dev', 'eng/x'], { id: { value: client.frameworkId }, principal: 'alice' });
    expect(
      (await client.call({ type: 'UPDATE_FRAMEWORK', update_framework: { framework_info: allowed } })).status,
    ).toBe(200);
    expect(r.cluster.view.framework(client.frameworkId!)!.roles()).toEqual(['dev', 'eng/x']);
    client.disconnect();
  });

  it('with ACLs alone, asks them about the principal the FrameworkInfo declares', async () => {
    const r = await start({ acls: ACLS });
    const declared = new SchedulerClient(r.masterUrl);
    await expect(declared.subscribe(multiRole(['prod'], { principal: 'alice' }))).rejects.toThrow('Not authorized');
    expect(await declared.next()).toMatchObject({ type: 'ERROR', message: "Not authorized to use roles '{ prod }'" });
    const bob = await subscribed(r, {}, multiRole(['prod'], { principal: 'bob' }));
    // No principal at all: no rule names "anybody", and the ACLs are not permissive.
    const anonymous = new SchedulerClient(r.masterUrl);
    await expect(anonymous.subscribe(multiRole(['dev']))).rejects.toThrow('Not authorized');
    expect(await anonymous.next()).toMatchObject({ type: 'ERROR', message: "Not authorized to use roles '{ dev }'" });
    bob.disconnect();
  });
});

describe('files refused at start', () => {
  it('names the flag, the file and what is wrong, on one line', async () => {
    const cases: [StartClusterOptions, RegExp][] = [
      [{ credentials: { credentials: [] } }, /^credentials \(object\): holds no credentials/],
      [{ credentials: { credentials: [{ secret: 'x' }] } as never }, /'credentials\[0\]\.principal' is missing/],
      [{ credentials: '/nonexistent/creds.json' }, /^credentials \/nonexistent\/creds\.json: cannot read the file/],
      [{ acls: { register_framework: [] } }, /^acls \(object\): unknown field 'register_framework' in 'the file'/],
      [
        { acls: { register_frameworks: [{ principals: { type: 'ALL' }, roles: { type: 'ANY' } }] } },
        /'register_frameworks\[0\]\.principals\.type' must be SOME, ANY or NONE/,
      ],
      [
        { acls: { register_frameworks: [{ principals: { type: 'ANY' } }] } },
        /'register_frameworks\[0\]\.roles' is missing/,
      ],
      [
        { acls: { view_flags: [{ principals: { type: 'ANY' }, flags: { values: ['x'] } }] } },
        /acls\.view_flags type must be either NONE or ANY/,
      ],
      [{ acls: '{"permissive": 1}' }, /^acls \(inline JSON\): 'permissive' must be true or false, got 1$/],
    ];
    for (const [options, message] of cases) {
      const error = await startCluster({ port: 0, agents: 0, time: 'virtual', ...options }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, message.source).toBeInstanceOf(StartError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});
