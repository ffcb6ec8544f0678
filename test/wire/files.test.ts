/**
 * The files API's decisions, without a server: how a requested path
 * resolves against the attached ones, the queries of `/files/read`, the
 * window a read answers, and FileInfo's `mode` and message.
 */
import { describe, expect, it } from 'vitest';
import { Sandbox, SandboxBudget } from '../../src/core/process/sandbox.js';
import {
  fileInfoMessage,
  filesReadQuery,
  modeString,
  readWindow,
  resolveAttached,
  type AttachedSandbox,
} from '../../src/wire/files.js';

const sandbox = new Sandbox('/w/slaves/a/frameworks/f/executors/e/runs/c', new SandboxBudget(1_000), 100, 0);
const attached: AttachedSandbox = {
  agentId: 'a',
  frameworkId: 'f',
  executorId: 'e',
  root: sandbox.path,
  sandbox,
  onDisk: false,
  user: 'alice',
};
const paths = new Map([
  [sandbox.path, attached],
  ['/frameworks/f/executors/e/runs/latest', attached],
]);

describe('resolveAttached', () => {
  it('takes the longest attached prefix; what follows is the path inside the sandbox', () => {
    expect(resolveAttached(paths, '/frameworks/f/executors/e/runs/latest/stdout')).toMatchObject({
      ok: true,
      inner: 'stdout',
    });
    expect(resolveAttached(paths, '/frameworks/f/executors/e/runs/latest/')).toMatchObject({ ok: true, inner: '' });
    expect(resolveAttached(paths, `${sandbox.path}/logs/./a/../b`)).toMatchObject({ ok: true, inner: 'logs/b' });
  });

  it('refuses a `..` that leaves the sandbox, and finds nothing outside every attached path', () => {
    expect(resolveAttached(paths, `${sandbox.path}/../c2/stdout`)).toEqual({
      ok: false,
      error: 'INVALID',
      message: `'${sandbox.path}/../c2/stdout' is inaccessible.`,
    });
    for (const path of ['/etc/passwd', '/', '', '/frameworks/f/executors/e/runs', '/w/slaves/a']) {
      expect(resolveAttached(paths, path), path).toEqual({ ok: false, error: 'NOT_FOUND' });
    }
  });
});

describe('/files/read', () => {
  const query = (text: string) => filesReadQuery(new Map(new URLSearchParams(text)));

  it("reads offset and length as upstream: -1 the default and 'none', below it refused", () => {
    expect(query('path=/x')).toEqual({ ok: true, value: { path: '/x', offset: -1, length: undefined } });
    expect(query('path=/x&offset=3&length=-1')).toEqual({
      ok: true,
      value: { path: '/x', offset: 3, length: undefined },
    });
    expect(query('path=/x&offset=1.5')).toEqual({
      ok: false,
      error: "Failed to parse offset: Failed to convert '1.5' to number.",
    });
    expect(query('path=/x&length=-2')).toEqual({ ok: false, error: 'Negative length provided: -2.' });
    expect(query('offset=0')).toEqual({ ok: false, error: "Expecting 'path=value' in query." });
  });

  it('answers the size for offset=-1, nothing past the end, and at most 16 pages', () => {
    expect(readWindow(6, { offset: -1, length: undefined })).toEqual({ start: 0, end: 0, offset: 6 });
    expect(readWindow(6, { offset: 9, length: 2 })).toEqual({ start: 0, end: 0, offset: 9 });
    expect(readWindow(6, { offset: 2, length: 100 })).toEqual({ start: 2, end: 6, offset: 2 });
    expect(readWindow(1_000_000, { offset: 0, length: undefined })).toEqual({ start: 0, end: 65_536, offset: 0 });
  });
});

describe('FileInfo', () => {
  it('writes the mode as ls does, and the message with the file type bits and nanoseconds', () => {
    expect(modeString(0o100644, false)).toBe('-rw-r--r--');
    expect(modeString(0o40755, true)).toBe('drwxr-xr-x');
    expect(modeString(0o120777, false)).toBe('lrwxrwxrwx');
    expect(modeString(0o4755, false)).toBe('-rwxr-xr-x');
    const stat = { directory: false, nlink: 1, size: 6, mtimeMs: 1_500, mode: 0o644, uid: 'u', gid: 'g' };
    expect(fileInfoMessage('/p', stat)).toEqual({
      path: '/p',
      nlink: 1,
      size: 6,
      mtime: { nanoseconds: 1_500_000_000 },
      mode: 0o100644,
      uid: 'u',
      gid: 'g',
    });
  });
});
