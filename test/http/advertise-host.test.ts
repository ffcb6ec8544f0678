/**
 * `advertiseHost` / `--advertise-host`: the servers bind to `host`, and the
 * cluster tells clients the advertised host everywhere they read where to
 * go (MasterInfo and its pid, offers' agent hostnames and URLs, agent pids,
 * `/redirect`, a standby's redirect), and `CLUSTERSIM_*` variables set
 * `clustersim up`'s flags.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { runCli, startUp, type UpProcess } from '../e2e/cli-process.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let running: RunningCluster | undefined;
const clients: SchedulerClient[] = [];
const ups: UpProcess[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await Promise.all(ups.splice(0).map((u) => u.stop()));
  await running?.close();
  running = undefined;
});

const getJson = async (url: string): Promise<Json> => (await fetch(url)).json();

describe('advertiseHost', () => {
  it('is the host of MasterInfo, the pids, the offers and /redirect, while the servers listen on host', async () => {
    running = await startCluster({
      host: '127.0.0.1',
      advertiseHost: 'localhost',
      port: 0,
      agents: 2,
      time: 'virtual',
    });
    const port = Number(new URL(running.masterUrl).port);
    expect(new URL(running.masterUrl).hostname).toBe('127.0.0.1');
    const client = new SchedulerClient(running.masterUrl);
    clients.push(client);
    await client.subscribe({ user: 'u', name: 'advertised' });
    const info = (await client.next('SUBSCRIBED')).subscribed.master_info;
    expect([info.hostname, info.address.hostname, info.pid, info.port]).toEqual([
      'localhost',
      'localhost',
      `master@localhost:${port}`,
      port,
    ]);
    const offers = (await client.next('OFFERS')).offers.offers as Json[];
    for (const offer of offers) {
      expect(offer.hostname).toBe('localhost');
      expect(offer.url.address.hostname).toBe('localhost');
    }
    const slaves = (await getJson(`${running.masterUrl}/slaves`)).slaves as Json[];
    expect(slaves.map((s) => s.pid).sort()).toEqual(running.agents.map((a) => `slave(1)@localhost:${a.port}`).sort());
    expect(slaves.every((s) => s.hostname === 'localhost')).toBe(true);
    for (const agent of running.agents) {
      expect(agent.hostname).toBe('localhost');
      // The endpoint's URL is where its listener is; the agent answers there.
      expect(new URL(agent.url).hostname).toBe('127.0.0.1');
      expect((await fetch(`${agent.url}/health`)).status).toBe(200);
    }
    const redirect = await fetch(`${running.masterUrl}/redirect`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([307, `//localhost:${port}`]);
    expect((await getJson(`${running.masterUrl}/state`)).hostname).toBe('localhost');
  });

  it("is the host a standby master's redirect sends clients to", async () => {
    running = await startCluster({
      host: '127.0.0.1',
      advertiseHost: 'localhost',
      port: 0,
      agents: 1,
      masters: 2,
      time: 'virtual',
    });
    const [leader, standby] = running.masterUrls as [string, string];
    const res = await fetch(`${standby}/state?x=1`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([307, `//localhost:${new URL(leader).port}/state?x=1`]);
  });

  it('is checked: a host name or an IPv4 address, reachable, and not with loopback addressing', async () => {
    for (const bad of ['', 'a b', 'http://x', '0.0.0.0', '-x']) {
      await expect(startCluster({ port: 0, advertiseHost: bad, time: 'virtual' })).rejects.toThrow(StartError);
    }
    await expect(
      startCluster({ port: 0, advertiseHost: 'localhost', agentAddressing: 'loopback', time: 'virtual' }),
    ).rejects.toThrow(/advertise-host applies to --agent-addressing ports/);
  });
});

/** A free port with the next one free too (for a range of two agents). */
async function freePorts(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const next = await new Promise<boolean>((resolve) => {
      const s = net
        .createServer()
        .once('error', () => resolve(false))
        .listen(port + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (next && port < 65_000) return port;
  }
}

describe('clustersim up from the environment', () => {
  it('takes every flag from CLUSTERSIM_* variables: --advertise-host, --agents, --agent-port', async () => {
    const agentPort = await freePorts();
    const up = await startUp(['--log-level', 'silent'], {
      CLUSTERSIM_ADVERTISE_HOST: 'localhost',
      CLUSTERSIM_AGENTS: '2',
      CLUSTERSIM_AGENT_PORT: String(agentPort),
    });
    ups.push(up);
    const slaves = (await getJson(`${up.masterUrl}/slaves`)).slaves as Json[];
    expect(slaves.map((s) => s.pid).sort()).toEqual([
      `slave(1)@localhost:${agentPort}`,
      `slave(1)@localhost:${agentPort + 1}`,
    ]);
    const info = (await getJson(`${up.masterUrl}/state`)) as Json;
    expect(info.pid).toBe(`master@localhost:${new URL(up.masterUrl).port}`);
  });

  it('lets a flag on the command line win, ignores variables that name no flag of the command, and checks values', async () => {
    const up = await startUp(['--agents', '1', '--log-level', 'silent'], {
      CLUSTERSIM_AGENTS: '3',
      CLUSTERSIM_CONFIG: '/nowhere.ini',
      CLUSTERSIM_NO_SUCH_FLAG: 'x',
    });
    ups.push(up);
    expect((await getJson(`${up.masterUrl}/slaves`)).slaves).toHaveLength(1);
    const bad = await runCli(['up', '--port', '0', '--log-level', 'silent'], { CLUSTERSIM_TIME: 'sideways' }).output;
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/time/);
    expect(bad.stderr).toMatch(/sideways/);
  });

  it('turns boolean flags on: CLUSTERSIM_AUTHENTICATE_HTTP_READONLY=true needs credentials', async () => {
    const bad = await runCli(['up', '--port', '0', '--log-level', 'silent'], {
      CLUSTERSIM_AUTHENTICATE_HTTP_READONLY: 'true',
    }).output;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--authenticate-http-readonly: needs credentials');
  });
});
