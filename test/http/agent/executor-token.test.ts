import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { sendUnauthorized } from '../../../src/http/auth.js';
import {
  authorizeExecutor,
  EXECUTOR_REALM,
  ExecutorTokens,
  type ExecutorIdentity,
} from '../../../src/http/agent/executor-token.js';

const SECRET = new TextEncoder().encode('a secret of the agent, 32 bytes!');
const ID: ExecutorIdentity = { frameworkId: 'fw-1', executorId: 'exec-1', containerId: 'c-0001' };

const b64url = (text: string | Buffer): string => Buffer.from(text).toString('base64url');

/** A token made by hand, as upstream's JWT code writes one: base64url without padding, HMAC-SHA256 over `header.payload`. */
function handMade(header: object, payload: object, secret: Uint8Array = SECRET): string {
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
}

const HS256 = { alg: 'HS256', typ: 'JWT' };

describe('ExecutorTokens.sign', () => {
  it('writes the bytes upstream writes: its header, the claims cid, eid, fid in that order, an HMAC-SHA256 signature', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const token = await tokens.sign(ID);
    expect(token).toBe(handMade(HS256, { cid: 'c-0001', eid: 'exec-1', fid: 'fw-1' }));
    const [header, payload] = token.split('.') as [string, string];
    expect(Buffer.from(header, 'base64url').toString()).toBe('{"alg":"HS256","typ":"JWT"}');
    expect(Buffer.from(payload, 'base64url').toString()).toBe('{"cid":"c-0001","eid":"exec-1","fid":"fw-1"}');
  });

  it('signs the same token at once with signSync, for callers that cannot wait', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const identities: ExecutorIdentity[] = [ID, { frameworkId: 'fw-ü', executorId: 'e "quoted"', containerId: '' }];
    for (const identity of identities) {
      const token = tokens.signSync(identity);
      expect(token).toBe(await tokens.sign(identity));
      expect(await tokens.verify(token)).toMatchObject({
        ok: true,
        claims: { fid: identity.frameworkId, eid: identity.executorId },
      });
    }
  });

  it('refuses an empty secret', async () => {
    await expect(ExecutorTokens.create(new Uint8Array())).rejects.toThrow('empty');
  });
});

describe('ExecutorTokens.verify', () => {
  it('gives back the claims of its own tokens', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    expect(await tokens.verify(await tokens.sign(ID))).toEqual({
      ok: true,
      claims: { cid: 'c-0001', eid: 'exec-1', fid: 'fw-1' },
    });
  });

  it('refuses a token signed with another key, or one whose payload was changed', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const other = await ExecutorTokens.create(new TextEncoder().encode('another key'));
    const foreign = await other.sign(ID);
    expect(await tokens.verify(foreign)).toEqual({
      ok: false,
      fault: 'bad-signature',
      message: 'Token signature does not match',
    });

    const [header, , signature] = (await tokens.sign(ID)).split('.') as [string, string, string];
    const forged = `${header}.${b64url('{"cid":"c-0001","eid":"exec-2","fid":"fw-1"}')}.${signature}`;
    expect(await tokens.verify(forged)).toMatchObject({ ok: false, fault: 'bad-signature' });
  });

  it('calls malformed what is not a signed compact token, in upstream words where it has them', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    expect(await tokens.verify('abc')).toEqual({
      ok: false,
      fault: 'malformed',
      message: 'Expected 3 components in token, got 1',
    });
    expect(await tokens.verify('a.b.c.d')).toEqual({
      ok: false,
      fault: 'malformed',
      message: 'Expected 3 components in token, got 4',
    });
    expect(await tokens.verify('!!.??.**')).toMatchObject({ ok: false, fault: 'malformed' });
    expect(await tokens.verify(`${b64url('not json')}.${b64url('{}')}.x`)).toMatchObject({
      ok: false,
      fault: 'malformed',
    });
    // An unsecured token ("alg":"none") never passes for a signed one.
    const unsecured = `${b64url('{"alg":"none","typ":"JWT"}')}.${b64url('{"fid":"fw-1"}')}.`;
    expect(await tokens.verify(unsecured)).toEqual({
      ok: false,
      fault: 'malformed',
      message: 'Token \'alg\' value "none" does not match, expected "HS256"',
    });
    expect(await tokens.verify(handMade({ alg: 'HS256', crit: ['x'], x: 1 }, ID))).toMatchObject({
      ok: false,
      fault: 'malformed',
    });
  });

  it('refuses a token without claims, and an expired one', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    expect(await tokens.verify(handMade(HS256, {}))).toEqual({
      ok: false,
      fault: 'missing-claims',
      message: 'JWT claims missing',
    });
    const expired = handMade(HS256, { fid: 'fw-1', exp: 1_000_000_000 });
    expect(await tokens.verify(expired)).toEqual({ ok: false, fault: 'expired', message: 'Token has expired' });
  });

  it('writes claims that are not strings as JSON, as upstream does', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const verdict = await tokens.verify(handMade(HS256, { fid: 'fw-1', n: 5, list: [1, 'a'], flag: true }));
    expect(verdict).toEqual({ ok: true, claims: { fid: 'fw-1', n: '5', list: '[1,"a"]', flag: 'true' } });
  });

  it('shares one random key per process when no secret is given', async () => {
    const [one, two] = await Promise.all([ExecutorTokens.create(), ExecutorTokens.create()]);
    expect(await two.verify(await one.sign(ID))).toMatchObject({ ok: true });
    const keyed = await ExecutorTokens.create(SECRET);
    expect(await keyed.verify(await one.sign(ID))).toMatchObject({ ok: false, fault: 'bad-signature' });
  });
});

describe('ExecutorTokens.fromFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'executor-token-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the bytes of the file as the key, as they are', async () => {
    const path = join(dir, 'key');
    writeFileSync(path, SECRET);
    const fromFile = await ExecutorTokens.fromFile(path);
    expect(await fromFile.sign(ID)).toBe(await (await ExecutorTokens.create(SECRET)).sign(ID));
  });

  it('refuses an empty file and a missing one', async () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '');
    await expect(ExecutorTokens.fromFile(empty)).rejects.toThrow('is empty');
    await expect(ExecutorTokens.fromFile(join(dir, 'absent'))).rejects.toThrow('ENOENT');
  });
});

describe('ExecutorTokens.authenticate (401 with a Bearer challenge)', () => {
  const challenge = (description: string): string =>
    `Bearer realm="${EXECUTOR_REALM}", error="invalid_token", error_description="${description}"`;

  it('asks for a token without naming an error when none was sent', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const result = await tokens.authenticate(undefined);
    expect(result).toMatchObject({ ok: false, challenge: 'Bearer realm="mesos-agent-executor"' });
    expect(result.ok || result.error).toMatchObject({ status: 401, body: '401 Unauthorized.' });
  });

  it('names what is wrong with a header or a token', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const other = await (await ExecutorTokens.create(new TextEncoder().encode('k2'))).sign(ID);
    const cases: readonly (readonly [string, string])[] = [
      ['Bearer', challenge("Malformed 'Authorization' header")],
      ['Bearer  two-spaces', challenge("Malformed 'Authorization' header")],
      ['Basic dXNlcjpwdw==', challenge("Scheme 'Basic' unsupported")],
      ['Bearer abc', challenge('Invalid JWT: Expected 3 components in token, got 1')],
      [`Bearer ${other}`, challenge('Invalid JWT: Token signature does not match')],
      [`Bearer ${handMade(HS256, {})}`, challenge('JWT claims missing')],
    ];
    for (const [header, expected] of cases) {
      expect(await tokens.authenticate(header), header).toMatchObject({ ok: false, challenge: expected });
    }
  });

  it('accepts its own token and gives its claims', async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const result = await tokens.authenticate(`Bearer ${await tokens.sign(ID)}`);
    expect(result).toEqual({ ok: true, claims: { cid: 'c-0001', eid: 'exec-1', fid: 'fw-1' } });
  });
});

describe('a route guarded by ExecutorTokens', () => {
  it("answers 401 with upstream's challenge and body through auth.ts's sendUnauthorized, and lets a valid token through", async () => {
    const tokens = await ExecutorTokens.create(SECRET);
    const app = Fastify();
    app.addHook('onRequest', async (req, reply) => {
      const result = await tokens.authenticate(req.headers.authorization);
      return result.ok ? undefined : sendUnauthorized(reply, result);
    });
    app.post('/api/v1/executor', async () => 'through');
    const without = await app.inject({ method: 'POST', url: '/api/v1/executor' });
    expect([without.statusCode, without.headers['www-authenticate'], without.body]).toEqual([
      401,
      'Bearer realm="mesos-agent-executor"',
      '401 Unauthorized.',
    ]);
    const bad = await app.inject({
      method: 'POST',
      url: '/api/v1/executor',
      headers: { authorization: 'Bearer a.b.c' },
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['www-authenticate']).toMatch(
      /^Bearer realm="mesos-agent-executor", error="invalid_token", error_description="Invalid JWT: /,
    );
    const good = await app.inject({
      method: 'POST',
      url: '/api/v1/executor',
      headers: { authorization: `Bearer ${tokens.signSync(ID)}` },
    });
    expect([good.statusCode, good.body]).toEqual([200, 'through']);
    await app.close();
  });
});

describe('authorizeExecutor (403 for another executor)', () => {
  const claims = { cid: 'c-0001', eid: 'exec-1', fid: 'fw-1' };
  const principal = '{"claims":{"cid":"c-0001","eid":"exec-1","fid":"fw-1"}}';

  it('lets an executor in with its own claims', () => {
    expect(authorizeExecutor(claims, ID)).toBeUndefined();
  });

  it('refuses another framework, executor or container, in upstream words', () => {
    expect(authorizeExecutor(claims, { ...ID, frameworkId: 'fw-2' })).toBe(
      `Authenticated principal '${principal}' does not contain an 'fid' claim with the framework ID fw-2, which is set in the call`,
    );
    expect(authorizeExecutor(claims, { ...ID, executorId: 'exec-2' })).toBe(
      `Authenticated principal '${principal}' does not contain an 'eid' claim with the executor ID exec-2, which is set in the call`,
    );
    expect(authorizeExecutor(claims, { ...ID, containerId: 'c-0002' })).toBe(
      `Authenticated principal '${principal}' does not contain a 'cid' claim with the correct active ContainerID`,
    );
  });

  it('refuses claims that lack one of the three', () => {
    expect(authorizeExecutor({ eid: 'exec-1', cid: 'c-0001' }, ID)).toContain("an 'fid' claim");
    expect(authorizeExecutor({ fid: 'fw-1', cid: 'c-0001' }, ID)).toContain("an 'eid' claim");
    expect(authorizeExecutor({ fid: 'fw-1', eid: 'exec-1' }, ID)).toContain("a 'cid' claim");
  });
});
