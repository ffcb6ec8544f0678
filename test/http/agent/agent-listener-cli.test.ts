/**
 * `clustersim up --agent-addressing`: the flag reaches the cluster, and a
 * port taken on one agent's address stops the start with one line.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startUp, type UpProcess } from '../../e2e/cli-process.js';
import { startCluster } from '../../../src/start/cluster.js';
import { StartError } from '../../../src/start/errors.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const ups: UpProcess[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(ups.splice(0).map((u) => u.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('clustersim up --agent-addressing', () => {
  it('loopback: agents at 127.0.0.2 and up on one port, each serving its endpoint', async () => {
    const up = await startUp(['--agents', '2', '--agent-addressing', 'loopback', '--log-level', 'silent']);
    ups.push(up);
    const slaves = (await (await fetch(new URL('/slaves', up.masterUrl))).json()) as Json;
    const endpoints: string[] = slaves.slaves.map((s: Json) => s.pid.split('@')[1]);
    const port = endpoints[0]!.split(':')[1];
    expect(endpoints).toEqual([`127.0.0.2:${port}`, `127.0.0.3:${port}`]);
    for (const endpoint of endpoints) expect((await fetch(`http://${endpoint}/health`)).status).toBe(200);
  });

  it('refuses an addressing it does not know', async () => {
    const bad = await runCli(['up', '--port', '0', '--agent-addressing', 'nat']).output;
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/agent-addressing/);
  });
});

describe('a port taken on an agent address', () => {
  it('stops the start with a StartError naming the address', async () => {
    const squatter = net.createServer();
    servers.push(squatter);
    await new Promise<void>((resolve) => squatter.listen({ host: '127.0.0.3', port: 0 }, resolve));
    const port = (squatter.address() as net.AddressInfo).port;
    const start = startCluster({ port: 0, time: 'virtual', agents: 3, agentAddressing: 'loopback', agentPort: port });
    await expect(start).rejects.toThrow(StartError);
    await expect(start).rejects.toThrow(`the agent listener cannot listen on 127.0.0.3:${port}: the port is in use`);
    await expect(start).rejects.toMatchObject({ option: 'agentPort' });
  });
});

/** `clustersim up` from the sources under a lower limit of open files; its exit code and stderr. */
function upWithFileLimit(limit: number, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const cli = ['--import', 'tsx', 'src/cli/main.ts', 'up', ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('sh', ['-c', `ulimit -n ${limit} && exec "${process.execPath}" ${cli}`], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

describe('too few file descriptors for a socket per agent address', () => {
  it('stops `up` with one line that says what to do', async () => {
    const result = await upWithFileLimit(200, [
      '--port',
      '0',
      '--agents',
      '300',
      '--agent-addressing',
      'loopback',
      '--log-level',
      'silent',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'clustersim up: --agent-addressing: loopback: out of file descriptors for 300 agent addresses',
    );
  });
});
