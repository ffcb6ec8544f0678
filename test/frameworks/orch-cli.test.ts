/**
 * The commands as child processes: `clustersim serve orchestrator`
 * configured by its environment against a cluster of this process, and the
 * plugin `clustersim orch list|kubeconfig|scale|status|version` with the
 * principal and secret of its INI file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { RunningCluster } from '../../src/start/cluster.js';
import { startOrchestratorBeside } from '../../src/cli/orch.js';
import { runningAtMaster, startOrchCluster, until } from './orch-harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

let cluster: RunningCluster;
let serve: ChildProcess;
let apiUrl: string;
let dir: string;
let ini: string;
let frameworkId: string;

function run(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const orch = (...args: string[]) => run(['orch', '--config', ini, ...args]);

beforeAll(async () => {
  cluster = await startOrchCluster(3);
  dir = mkdtempSync(path.join(os.tmpdir(), 'orch-cli-'));
  ini = path.join(dir, 'config.ini');
  writeFileSync(
    ini,
    `[master]\naddress = ${cluster.masterUrl.replace('http://', '')}\n\n[framework]\nprincipal = ops\nsecret = s3cret\n`,
  );
  const env = {
    CLUSTER_MASTER: cluster.masterUrl,
    FRAMEWORK_PORT: '0',
    FRAMEWORK_HOSTNAME: '127.0.0.1',
    AUTH_USERNAME: 'ops',
    AUTH_PASSWORD: 's3cret',
    ORCH_AGENT_MEM: '256',
    HEARTBEAT_INTERVAL: '500ms',
    LOGLEVEL: 'error',
  };
  serve = spawn(process.execPath, [...CLI, 'serve', 'orchestrator', '--listen', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  apiUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const match = /API on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    serve.once('exit', (code) => reject(new Error(`serve orchestrator exited with ${code}`)));
  });
  await until(
    'the framework subscribed',
    () => cluster.driver.read((v) => [...v.frameworks()].some((f) => f.info.name === 'm3s')),
    15_000,
  );
  frameworkId = cluster.driver.read((v) => [...v.frameworks()].find((f) => f.info.name === 'm3s')!.id);
  await until(
    'every part running',
    () => JSON.stringify(runningAtMaster(cluster, frameworkId)) === '{"server":1,"agent":1,"datastore":1}',
    15_000,
  );
}, 40_000);

afterAll(async () => {
  if (serve?.exitCode === null) {
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  }
  await cluster?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('clustersim serve orchestrator', { timeout: 60_000 }, () => {
  it('refuses an invalid variable at start, naming it, with exit code 2', async () => {
    const r = await run(['serve', 'orchestrator'], { ORCH_AGENT_COUNT: 'many', CLUSTER_MASTER: cluster.masterUrl });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('clustersim: ORCH_AGENT_COUNT: expected a non-negative integer, got "many"\n');
  });

  it('says why when the master cannot be reached, with exit code 1', async () => {
    const r = await run(['serve', 'orchestrator', '--listen', '127.0.0.1'], {
      CLUSTER_MASTER: '127.0.0.1:1',
      FRAMEWORK_PORT: '0',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^clustersim: .*ECONNREFUSED/);
  });

  it('prints --help for serve and for each plugin command', async () => {
    for (const args of [
      ['serve', 'orchestrator'],
      ['orch'],
      ['orch', 'list'],
      ['orch', 'kubeconfig'],
      ['orch', 'scale'],
      ['orch', 'status'],
      ['orch', 'version'],
    ]) {
      const r = await run([...args, '--help']);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toContain(`clustersim ${args.join(' ')}`);
    }
  });
});

describe('clustersim orch', { timeout: 60_000 }, () => {
  it('lists the frameworks: ID, Active, WebUI, Name', async () => {
    const r = await orch('list');
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+Active\s+WebUI\s+Name$/);
    expect(lines[1]!.split(/\s+/)).toEqual([frameworkId, 'true', apiUrl, 'm3s']);
  });

  it('prints the status of the parts and of the nodes', async () => {
    expect(JSON.parse((await orch('status', frameworkId)).stdout)).toEqual({
      Server: 'TASK_RUNNING',
      Agent: 'TASK_RUNNING',
      Datastore: 'TASK_RUNNING',
      API: 'ok',
    });
    expect(JSON.parse((await orch('status', '--m3s', frameworkId)).stdout).API).toBe('ok');
    expect(JSON.parse((await orch('status', '--kubernetes', frameworkId)).stdout).Ready).toBe(true);
  });

  it('prints the client configuration', async () => {
    const r = await orch('kubeconfig', frameworkId);
    expect(r.code).toBe(0);
    expect(parse(r.stdout).clusters[0].cluster.server).toMatch(/^https:\/\/127\.0\.0\.\d+:3\d{4}$/);
  });

  it('scales agents, managers and datastores', async () => {
    expect((await orch('scale', '--agent', frameworkId, '2')).code).toBe(0);
    await until('two agents', () => runningAtMaster(cluster, frameworkId).agent === 2);
    expect(JSON.parse((await orch('scale', frameworkId, '1')).stdout)).toEqual({ Scale: 1, Previous: 2 });
    expect(JSON.parse((await orch('scale', '--manager', frameworkId, '1')).stdout)).toEqual({ Scale: 1, Previous: 1 });
    expect(JSON.parse((await orch('scale', '--datastore', frameworkId, '1')).stdout)).toEqual({
      Scale: 1,
      Previous: 1,
    });
    await until('one agent', () => runningAtMaster(cluster, frameworkId).agent === 1);
  });

  it('fails with one line: exit code 2 for a bad count, 1 for an unknown framework and wrong credentials', async () => {
    expect(await orch('scale', frameworkId, 'two')).toMatchObject({
      code: 2,
      stderr: 'clustersim orch scale: <count>: "two" is not a whole number of at least 0\n',
    });
    expect(await orch('status', 'no-such-id')).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^clustersim orch: no framework no-such-id at the master/),
    });
    const wrong = path.join(dir, 'wrong.ini');
    writeFileSync(wrong, `[master]\naddress = ${cluster.masterUrl}\n[framework]\nprincipal = ops\nsecret = nope\n`);
    expect(await run(['orch', '--config', wrong, 'status', frameworkId])).toMatchObject({
      code: 1,
      stderr: `clustersim orch: framework ${frameworkId}: 401 Unauthorized\n`,
    });
    writeFileSync(wrong, `[framework]\nprincipal = ops\npassword = s3cret\n`);
    expect(await run(['orch', '--config', wrong, 'list'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unknown key password in [framework]'),
    });
  });

  it('prints its version', async () => {
    expect(await orch('version')).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^clustersim orch \d+\.\d+\.\d+\n$/),
    });
  });
});

describe('beside a cluster (for up --with orchestrator)', () => {
  it("starts the framework from the environment against the cluster's master, its API on the host given", async () => {
    const beside = await startOrchestratorBeside(cluster.masterUrl, '127.0.0.1', {
      FRAMEWORK_NAME: 'beside',
      FRAMEWORK_PORT: '0',
      CLUSTER_MASTER: '10.9.9.9:5050',
      ORCH_AGENT_MEM: '64',
    });
    try {
      const match = /^orchestration framework beside at (http:\/\/127\.0\.0\.1:\d+) \(framework (\S+)\)$/.exec(
        beside.line,
      );
      expect(match, beside.line).not.toBeNull();
      const info = cluster.driver.read((v) => v.framework(match![2]!)?.info);
      expect(info).toMatchObject({ name: 'beside', webuiUrl: match![1] });
      await until(
        'its parts running',
        () => JSON.stringify(runningAtMaster(cluster, match![2]!)) === '{"server":1,"agent":1,"datastore":1}',
      );
      expect(await (await fetch(`${match![1]}/api/framework/v0/status/framework`)).json()).toMatchObject({ API: 'ok' });
    } finally {
      await beside.close();
    }
  });
});

describe('clustersim serve orchestrator, stopped', () => {
  it('exits 0 on SIGTERM, leaving the framework to its failover timeout at the master', async () => {
    const exited = new Promise<number | null>((r) => serve.once('exit', (code) => r(code)));
    serve.kill('SIGTERM');
    expect(await exited).toBe(0);
    await until(
      'disconnected at the master',
      () => cluster.driver.read((v) => v.framework(frameworkId)?.state) === 'disconnected',
    );
  });
});
