/**
 * The files API on an agent and, for the virtual paths, on the master: a
 * task's stdout read at both, browse, the size by `offset=-1`, jsonp,
 * download and debug, upstream's 400 and 404, the paths that would leave
 * a sandbox refused, the `access_sandboxes` ACL and the read-only realm,
 * and a sandbox gone after the gc delay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GC_DELAY_MS } from '../../../src/core/agent/sandboxes.js';
import type { Json } from '../operator-harness.js';
import { startSandboxHarness, type SandboxHarness } from './sandbox-harness.js';

let h: SandboxHarness;
let latest: string;
let real: string;

async function get(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, base), { headers });
  return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, text: await res.text() };
}

const q = (path: string) => encodeURIComponent(path);

beforeAll(async () => {
  h = await startSandboxHarness();
  await h.launch('hello', 'echo hello', 'TASK_FINISHED');
  latest = `/frameworks/${h.frameworkId}/executors/hello/runs/latest`;
  const state = JSON.parse((await get(h.agentUrl, '/state')).text) as Json;
  real = state.completed_frameworks[0].completed_executors[0].directory; // its last executor ended: the framework is a completed one
});

afterAll(async () => {
  await h?.close();
});

describe('the files API of an agent and of the master', () => {
  it("reads a task's stdout at the agent, by virtual and real path, and through the master's virtual path", async () => {
    for (const [base, path] of [
      [h.agentUrl, `${latest}/stdout`],
      [h.agentUrl, `${real}/stdout`],
      [h.r.masterUrl, `${latest}/stdout`],
    ] as const) {
      const res = await get(base, `/files/read?path=${q(path)}&offset=0`);
      expect(res.status, `${base} ${path}`).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ data: 'hello\n', offset: 0 });
    }
    const container = real.slice(real.lastIndexOf('/') + 1);
    const byRun = await get(
      h.agentUrl,
      `/files/read?path=${q(`/frameworks/${h.frameworkId}/executors/hello/runs/${container}/stdout`)}`,
    );
    expect(JSON.parse(byRun.text)).toEqual({ data: '', offset: 6 });
  });

  it('reads from an offset, a length, and past the end as upstream', async () => {
    const read = async (query: string) =>
      JSON.parse((await get(h.agentUrl, `/files/read?path=${q(`${latest}/stdout`)}&${query}`)).text);
    expect(await read('offset=-1')).toEqual({ data: '', offset: 6 });
    expect(await read('offset=1&length=3')).toEqual({ data: 'ell', offset: 1 });
    expect(await read('offset=2&length=-1')).toEqual({ data: 'llo\n', offset: 2 });
    expect(await read('offset=10')).toEqual({ data: '', offset: 10 });
  });

  it('browses a sandbox: stdout and stderr with their FileInfo', async () => {
    for (const base of [h.agentUrl, h.r.masterUrl]) {
      const res = await get(base, `/files/browse?path=${q(latest)}`);
      expect(res.status).toBe(200);
      const listing = JSON.parse(res.text) as Json[];
      expect(listing.map((f) => f.path)).toEqual([`${latest}/stderr`, `${latest}/stdout`]);
      const stdout = listing[1]!;
      expect(stdout).toMatchObject({ nlink: 1, size: 6, mode: '-rw-r--r--', uid: 'alice', gid: 'alice' });
      expect(Object.keys(stdout)).toEqual(['path', 'nlink', 'size', 'mtime', 'mode', 'uid', 'gid']);
      expect(stdout.mtime).toBeGreaterThan(1_600_000_000);
    }
  });

  it('answers jsonp with a call of the function', async () => {
    const res = await get(h.agentUrl, `/files/read?path=${q(`${latest}/stdout`)}&offset=-1&jsonp=cb`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/javascript');
    expect(res.text).toBe('cb({"data":"","offset":6});');
    const browse = await get(h.agentUrl, `/files/browse?path=${q(latest)}&jsonp=show`);
    expect(browse.text.startsWith('show([')).toBe(true);
  });

  it('downloads a file as an attachment, and lists the attached paths in /files/debug', async () => {
    const res = await get(h.agentUrl, `/files/download?path=${q(`${latest}/stdout`)}`);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=stdout');
    expect(res.text).toBe('hello\n');
    const debug = JSON.parse((await get(h.agentUrl, '/files/debug')).text) as Record<string, string>;
    expect(debug[latest]).toBe(real);
    expect(debug[real]).toBe(real);
    const master = JSON.parse((await get(h.r.masterUrl, '/files/debug')).text) as Record<string, string>;
    expect(master[latest]).toBe(real);
  });

  it("answers upstream's 400 for bad queries and reads of a directory, 404 for a path not attached", async () => {
    const cases: [string, number, string][] = [
      ['/files/read', 400, "Expecting 'path=value' in query."],
      ['/files/browse?path=', 400, "Expecting 'path=value' in query."],
      [`/files/read?path=${q(latest)}`, 400, 'Cannot read a directory.'],
      [`/files/download?path=${q(latest)}`, 400, 'Cannot download a directory.'],
      [
        `/files/read?path=${q(`${latest}/stdout`)}&offset=abc`,
        400,
        "Failed to parse offset: Failed to convert 'abc' to number.",
      ],
      [`/files/read?path=${q(`${latest}/stdout`)}&offset=-2`, 400, 'Negative offset provided: -2.'],
      [`/files/read?path=${q(`${latest}/stdout`)}&length=-5`, 400, 'Negative length provided: -5.'],
      [`/files/read?path=${q(`${latest}/nothing`)}`, 404, '404 Not Found.'],
      [`/files/browse?path=${q('/frameworks/none/executors/x/runs/latest')}`, 404, '404 Not Found.'],
    ];
    for (const [path, status, text] of cases) {
      const res = await get(h.agentUrl, path);
      expect([res.status, res.text], path).toEqual([status, text]);
    }
  });

  describe('keeps paths inside the sandboxes', () => {
    it('refuses `..` that climbs out (400), inside it reads on', async () => {
      const res = await get(h.agentUrl, `/files/read?path=${q(`${latest}/../../../../../../etc/passwd`)}`);
      expect([res.status, res.text]).toEqual([400, `'${latest}/../../../../../../etc/passwd' is inaccessible.`]);
      const up = await get(h.agentUrl, `/files/browse?path=${q(`${real}/..`)}`);
      expect(up.status).toBe(400);
      const inside = await get(h.agentUrl, `/files/read?path=${q(`${latest}/a/../stdout`)}&offset=0`);
      expect(JSON.parse(inside.text)).toEqual({ data: 'hello\n', offset: 0 });
    });

    it('refuses a percent-encoded `..` (decoded once, as upstream), and a double-encoded one names no file', async () => {
      const once = await get(h.agentUrl, `/files/read?path=${latest}/%2e%2e/%2E%2E/%2e%2e/%2e%2e/%2e%2e/etc/passwd`);
      expect(once.status).toBe(400);
      const twice = await get(h.agentUrl, `/files/read?path=${latest}/%252e%252e/%252e%252e/etc/passwd`);
      expect(twice.status).toBe(404);
      const master = await get(
        h.r.masterUrl,
        `/files/read?path=${latest}/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd`,
      );
      expect(master.status).toBe(400);
    });

    it('finds nothing at an absolute path outside the attached roots (404)', async () => {
      for (const path of ['/etc/passwd', '/', '/var/lib/mesos', `/var/lib/mesos/slaves/${h.agentId}`]) {
        const res = await get(h.agentUrl, `/files/browse?path=${q(path)}`);
        expect(res.status, path).toBe(404);
      }
      // The master attaches no real paths.
      expect((await get(h.r.masterUrl, `/files/read?path=${q(`${real}/stdout`)}`)).status).toBe(404);
    });
  });

  it('forgets a sandbox once the gc delay is over (404)', async () => {
    h.r.advance(DEFAULT_GC_DELAY_MS + 1_000);
    expect((await get(h.agentUrl, `/files/read?path=${q(`${latest}/stdout`)}`)).status).toBe(404);
    expect((await get(h.r.masterUrl, `/files/read?path=${q(`${latest}/stdout`)}`)).status).toBe(404);
    expect(JSON.parse((await get(h.agentUrl, '/files/debug')).text)).toEqual({});
  });
});

describe('the files API with authentication and ACLs', () => {
  const basic = (user: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
  });
  let a: SandboxHarness;
  beforeAll(async () => {
    a = await startSandboxHarness(
      {
        credentials: {
          credentials: [
            { principal: 'alice', secret: 'a' },
            { principal: 'bob', secret: 'b' },
          ],
        },
        authenticateHttpReadonly: true,
        acls: {
          permissive: true,
          access_sandboxes: [
            { principals: { values: ['alice'] }, users: { type: 'ANY' } },
            { principals: { type: 'ANY' }, users: { type: 'NONE' } },
          ],
        },
      },
      basic('alice', 'a'),
    );
    await a.launch('hello', 'echo hello', 'TASK_FINISHED');
  });
  afterAll(async () => {
    await a?.close();
  });

  it('asks for credentials in the read-only realm, and refuses a principal access_sandboxes refuses (403)', async () => {
    const path = `/files/read?path=${q(`/frameworks/${a.frameworkId}/executors/hello/runs/latest/stdout`)}&offset=0`;
    for (const base of [a.agentUrl, a.r.masterUrl]) {
      const anonymous = await get(base, path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(
        `Basic realm="${base === a.agentUrl ? 'mesos-agent-readonly' : 'mesos-master-readonly'}"`,
      );
      expect((await get(base, path, basic('bob', 'b'))).status).toBe(403);
      const alice = await get(base, path, basic('alice', 'a'));
      expect([alice.status, alice.text]).toEqual([200, '{"data":"hello\\n","offset":0}']);
    }
  });
});
