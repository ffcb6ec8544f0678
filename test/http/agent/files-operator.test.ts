/**
 * LIST_FILES and READ_FILE on the agent's and the master's v1 operator
 * APIs, in both encodings: a task's sandbox listed and its stdout read by
 * the virtual path (and by the real one on the agent), with the files
 * API's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOperatorCall, operatorCall, type Encoding, type Json } from '../operator-harness.js';
import { startSandboxHarness, type SandboxHarness } from './sandbox-harness.js';

let h: SandboxHarness;
let latest: string;
let real: string;

beforeAll(async () => {
  h = await startSandboxHarness();
  await h.launch('hello', 'echo hello', 'TASK_FINISHED');
  latest = `/frameworks/${h.frameworkId}/executors/hello/runs/latest`;
  const state = (await (await fetch(new URL('/state', h.agentUrl))).json()) as Json;
  real = state.completed_frameworks[0].completed_executors[0].directory; // its last executor ended: the framework is a completed one
});

afterAll(async () => {
  await h?.close();
});

const call = (api: 'agent' | 'master', body: Json, encoding: Encoding) =>
  api === 'agent' ? agentOperatorCall(h.agentUrl, body, encoding) : operatorCall(h.r.masterUrl, body, encoding);

describe.each(['json', 'protobuf'] as const)('LIST_FILES and READ_FILE (%s)', (encoding) => {
  it.each(['agent', 'master'] as const)('list a sandbox and read its stdout on the %s', async (api) => {
    const listed = await call(api, { type: 'LIST_FILES', list_files: { path: latest } }, encoding);
    expect(listed.status).toBe(200);
    expect(listed.response?.type).toBe('LIST_FILES');
    const infos = listed.response?.list_files.file_infos as Json[];
    expect(infos.map((f) => f.path)).toEqual([`${latest}/stderr`, `${latest}/stdout`]);
    expect(infos[1]).toMatchObject({ nlink: 1, size: 6, mode: 0o100644, uid: 'alice', gid: 'alice' });
    expect(Number(infos[1]!.mtime.nanoseconds)).toBeGreaterThan(1.6e18);

    const read = await call(api, { type: 'READ_FILE', read_file: { path: `${latest}/stdout`, offset: 0 } }, encoding);
    expect(read.status).toBe(200);
    expect(read.response).toEqual({
      type: 'READ_FILE',
      read_file: { size: 6, data: Buffer.from('hello\n').toString('base64') },
    });
    const part = await call(
      api,
      { type: 'READ_FILE', read_file: { path: `${latest}/stdout`, offset: 1, length: 3 } },
      encoding,
    );
    expect(Buffer.from(part.response?.read_file.data, 'base64').toString()).toBe('ell');
  });

  it('read by the real path on the agent', async () => {
    const read = await call('agent', { type: 'READ_FILE', read_file: { path: `${real}/stdout`, offset: 0 } }, encoding);
    expect(Buffer.from(read.response?.read_file.data, 'base64').toString()).toBe('hello\n');
  });

  it.each(['agent', 'master'] as const)("answer the files API's refusals on the %s", async (api) => {
    const missing = await call(
      api,
      { type: 'LIST_FILES', list_files: { path: '/frameworks/x/executors/y/runs/latest' } },
      encoding,
    );
    expect(missing.status).toBe(404);
    const out = await call(
      api,
      { type: 'READ_FILE', read_file: { path: `${latest}/../../../../../../etc/passwd`, offset: 0 } },
      encoding,
    );
    expect(out.status).toBe(400);
    const directory = await call(api, { type: 'READ_FILE', read_file: { path: latest, offset: 0 } }, encoding);
    expect([directory.status, directory.body]).toEqual([400, 'Cannot read a directory.']);
  });
});
