/**
 * `clustersim serve workflow` and `clustersim workflow run` as child
 * processes: the service against a cluster with engine containers, and the
 * operator command's exit codes for each way a task can end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../e2e/cli-process.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';

let cluster: RunningCluster;
let serve: ChildProcess;
let serveExit: Promise<{ code: number | null; stdout: string; stderr: string }>;
let url: string;
const dir = mkdtempSync(path.join(os.tmpdir(), 'workflow-cli-'));

beforeAll(async () => {
  cluster = await startCluster({
    port: 0,
    time: 'realtime',
    containerizers: 'docker,mesos',
    agentAttributes: 'workflow:true',
  });
  const config = path.join(dir, 'workflow.cfg');
  writeFileSync(
    config,
    `[cluster]\nmaster = ${new URL(cluster.masterUrl).host}\nframework_name = cli-test\ncluster_attributes = workflow:true\n`,
  );
  const started = runCli(['serve', 'workflow', '--config', config, '--port', '0', '--log-level', 'silent']);
  serve = started.child;
  serveExit = started.output;
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /workflow service at (http:\/\/\S+)/.exec(out);
      if (m !== null) resolve(m[1]!);
    });
    void serveExit.then(({ code, stderr }) => reject(new Error(`serve workflow exited with ${code}: ${stderr}`)));
  });
}, 30_000);
afterAll(async () => {
  serve?.kill('SIGTERM');
  await serveExit;
  await cluster?.close();
});

const run = (args: readonly string[]) => runCli(['workflow', 'run', '--poll-interval', '0.1', ...args]).output;

describe('clustersim workflow run', () => {
  it('exits 0 on TASK_FINISHED, with a command through /bin/sh -c', async () => {
    const out = await run([
      '--url',
      url,
      '--image',
      'alpine:3.20',
      '--mem-limit',
      '64m',
      '--env',
      'A=1',
      '--',
      'sleep 0.2 && exit 0',
    ]);
    expect(out).toMatchObject({ code: 0, stdout: 'TASK_FINISHED\n' });
    expect(out.stderr).toMatch(/TASK_RUNNING/);
  }, 30_000);

  it('exits 1 printing the state when the task fails (the API from the configuration)', async () => {
    const config = path.join(dir, 'operator.cfg');
    writeFileSync(config, `[cluster]\noperator_api_url = ${url}\n`);
    const out = await run(['--config', config, '--image', 'alpine', '--', 'exit', '3']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/ended in state TASK_FAILED/);
  }, 30_000);

  it('exits 4 at the startup timeout while no agent satisfies the request', async () => {
    const out = await run([
      '--url',
      url,
      '--image',
      'alpine',
      '--attribute',
      'zone:none',
      '--startup-timeout',
      '0.5',
      '--',
      'true',
    ]);
    expect(out.code).toBe(4);
    expect(out.stderr).toMatch(/timed out waiting for task workflow\.run\.[0-9a-f]+ \(last state none: still queued\)/);
  }, 30_000);

  it('exits 2 on an HTTP error (a refused request, a service that is not there)', async () => {
    const refused = await run(['--url', url, '--image', 'alpine', '--mem-limit', 'lots', '--', 'true']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/400 'mem_limit' must be/);
    const absent = await run(['--url', 'http://127.0.0.1:9', '--image', 'alpine', '--', 'true']);
    expect(absent.code).toBe(2);
  }, 30_000);

  it('exits 3 on an answer that is not JSON', async () => {
    const fake = http.createServer((req, res) => res.end(req.method === 'POST' ? 'Ok' : '<html>'));
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const port = (fake.address() as { port: number }).port;
    const out = await run(['--url', `http://127.0.0.1:${port}`, '--image', 'alpine', '--', 'true']);
    fake.close();
    expect(out.code).toBe(3);
    expect(out.stderr).toMatch(/invalid JSON answer/);
  }, 30_000);
});

describe('clustersim serve workflow', () => {
  it('refuses a configuration with an unknown key, naming it', async () => {
    const bad = path.join(dir, 'bad.cfg');
    writeFileSync(bad, '[cluster]\nmaster = 127.0.0.1:1\ntask_cpus = 2\n');
    const out = await runCli(['serve', 'workflow', '--config', bad, '--port', '0']).output;
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/\[cluster\] task_cpus: unknown key/);
  }, 30_000);
});
