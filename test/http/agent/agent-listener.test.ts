/**
 * `--agent-addressing`: agents at addresses of their own in 127.0.0.0/8,
 * served by one app, and the default of a port each; on real loopback
 * sockets.
 */
import net from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AgentDirectory,
  listenOnAddresses,
  listenPorts,
  listenWildcard,
  loopbackAddresses,
  loopbackHost,
} from '../../../src/http/agent/listener.js';
import { buildAgentApp } from '../../../src/http/agent/app.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const running: RunningCluster[] = [];
const closers: (() => Promise<unknown>)[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(running.splice(0).map((r) => r.close()));
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function start(options: StartClusterOptions): Promise<RunningCluster> {
  const cluster = await startCluster({ port: 0, time: 'virtual', ...options });
  running.push(cluster);
  return cluster;
}

/** A raw GET on a fresh connection to `host:port`: the whole reply, or the error that ended it. */
function rawGet(host: string, port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    sockets.push(socket);
    let data = '';
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    socket.on('data', (chunk) => (data += String(chunk)));
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
    socket.on('close', () => resolve(data));
  });
}

/** Opens a connection and resolves once it is connected (or refused). */
function connect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    sockets.push(socket);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('loopback addressing', () => {
  it('gives each agent an address of its own on one shared port, in its id, pid and AgentInfo', async () => {
    const cluster = await start({ agents: 3, agentAddressing: 'loopback' });
    const ips = cluster.agents.map((a) => a.hostname);
    expect(ips).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const port = cluster.agents[0]!.port;
    for (const agent of cluster.agents) {
      expect(agent.port).toBe(port);
      expect(agent.url).toBe(`http://${agent.hostname}:${port}`);
      expect(agent.pid).toBe(`slave(1)@${agent.hostname}:${port}`);
    }
    const slaves = (await (await fetch(`${cluster.masterUrl}/slaves`)).json()) as Json;
    expect(slaves.slaves.map((s: Json) => [s.id, s.hostname, s.pid])).toEqual(
      cluster.agents.map((a) => [a.id, a.hostname, a.pid]),
    );
    const reply = await fetch(`${cluster.masterUrl}/api/v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ type: 'GET_AGENTS' }),
    });
    const agents = ((await reply.json()) as Json).get_agents.agents;
    expect(agents.map((a: Json) => [a.agent_info.id.value, a.agent_info.hostname, a.agent_info.port, a.pid])).toEqual(
      cluster.agents.map((a) => [a.id, a.hostname, a.port, a.pid]),
    );
  });

  it('serves every agent at its own endpoint, and nothing at an address of no agent', async () => {
    const cluster = await start({ agents: 3, agentAddressing: 'loopback' });
    for (const agent of cluster.agents) {
      const health = await fetch(`${agent.url}/health`);
      expect(health.status).toBe(200);
      const version = await fetch(`${agent.url}/slave(1)/version`);
      expect(((await version.json()) as Json).version).toMatch(/^1\./);
    }
    const port = cluster.agents[0]!.port;
    expect(await rawGet('127.0.0.9', port, '/health')).toBe('error ECONNREFUSED');
  });

  it("answers each agent's own state and operator calls through the one shared app", async () => {
    const cluster = await start({ agents: 3, agentAddressing: 'loopback' });
    for (const agent of cluster.agents) {
      const state = (await (await fetch(`${agent.url}/state`)).json()) as Json;
      expect([state.id, state.hostname]).toEqual([agent.id, agent.hostname]);
      const reply = await fetch(`${agent.url}/api/v1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ type: 'GET_AGENT' }),
      });
      expect(((await reply.json()) as Json).get_agent.agent_info.id.value).toBe(agent.id);
    }
  });

  it('skips the master host and takes the port asked for', async () => {
    expect(loopbackAddresses(3, '127.0.0.3')).toEqual(['127.0.0.2', '127.0.0.4', '127.0.0.5']);
    expect(loopbackAddresses(300, '127.0.0.1').slice(253, 256)).toEqual(['127.0.0.255', '127.0.1.0', '127.0.1.1']);
    const probe = Fastify();
    await probe.listen({ host: '127.0.0.1', port: 0 });
    const free = (probe.server.address() as net.AddressInfo).port;
    await probe.close();
    const cluster = await start({ agents: 2, agentAddressing: 'loopback', agentPort: free });
    expect(cluster.agents.map((a) => a.url)).toEqual([`http://127.0.0.2:${free}`, `http://127.0.0.3:${free}`]);
  });

  it('caps connections per agent address, not for all agents together', async () => {
    const cluster = await start({ agents: 2, agentAddressing: 'loopback', agentMaxConnections: 1 });
    const [a, b] = cluster.agents;
    await connect(a!.hostname, a!.port);
    // Over the cap: accepted by the kernel, then closed by the server before a byte is read.
    expect(await rawGet(a!.hostname, a!.port, '/health')).toBe('');
    expect(await rawGet(b!.hostname, b!.port, '/health')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("holds every agent address to the listener's timeouts, not only the first", async () => {
    const cluster = await start({
      agents: 2,
      agentAddressing: 'loopback',
      headersTimeoutSeconds: 0.1,
      requestTimeoutSeconds: 0.1,
    });
    const second = cluster.agents[1]!;
    const socket = await connect(second.hostname, second.port);
    let data = '';
    socket.on('data', (chunk) => (data += String(chunk)));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    await closed;
    expect(data).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('falls back to a port per agent on a host that is not an IPv4 loopback address', async () => {
    expect(loopbackHost('127.0.0.1')).toBe(true);
    expect(loopbackHost('0.0.0.0')).toBe(true);
    expect(loopbackHost('::1')).toBe(false);
    expect(loopbackHost('localhost')).toBe(false);
    const cluster = await start({ host: 'localhost', agents: 2, agentAddressing: 'loopback' });
    expect(cluster.agents.map((a) => a.hostname)).toEqual(['localhost', 'localhost']);
    expect(cluster.agents[0]!.port).not.toBe(cluster.agents[1]!.port);
  });
});

describe('an unknown addressing', () => {
  it('stops the start with a StartError naming the choices', async () => {
    const options = { port: 0, time: 'virtual', agents: 1, agentAddressing: 'nat' } as unknown as StartClusterOptions;
    await expect(startCluster(options)).rejects.toThrow("agentAddressing: must be one of ports, loopback, got 'nat'");
  });
});

describe('ports addressing (the default)', () => {
  it('gives each agent a port of its own on the host', async () => {
    const cluster = await start({ agents: 3 });
    expect(cluster.agents.map((a) => a.hostname)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(new Set(cluster.agents.map((a) => a.port)).size).toBe(3);
    for (const agent of cluster.agents) {
      expect(agent.pid).toBe(`slave(1)@127.0.0.1:${agent.port}`);
      expect((await fetch(`${agent.url}/health`)).status).toBe(200);
    }
  });

  it("answers each agent's own state at its own port, all through one app and its server", async () => {
    const cluster = await start({ agents: 3 });
    const ports = cluster.agents.map((a) => a.port);
    for (const agent of cluster.agents) {
      const state = (await (await fetch(`${agent.url}/state`)).json()) as Json;
      expect([state.id, state.pid]).toEqual([agent.id, agent.pid]);
    }
    // Free ports after an ephemeral first one, not one ephemeral port each.
    expect(ports[1]).toBeGreaterThan(ports[0]!);
    expect(ports[2]).toBeGreaterThan(ports[1]!);
  });

  it('binds free ports after an ephemeral first one for one app, and dispatches by the port', async () => {
    const app = buildAgentApp({ name: 'agents' });
    closers.push(() => app.close());
    const directory = new AgentDirectory('port');
    app.get('/whoami', async (req) => directory.agentOf(req.socket) ?? 'nobody');
    const ports = await listenPorts(app, '127.0.0.1', 4, 0, 8);
    expect(new Set(ports).size).toBe(4);
    expect([...ports].sort((x, y) => x - y)).toEqual(ports);
    expect(await rawGet('127.0.0.1', ports[3]!, '/whoami')).toMatch(/nobody$/);
    ports.forEach((port, i) => {
      directory.add(port, `agent-${i}`);
    });
    const replies = await Promise.all(ports.map((port) => rawGet('127.0.0.1', port, '/whoami')));
    expect(replies.map((r) => r.split('\r\n\r\n')[1])).toEqual(['agent-0', 'agent-1', 'agent-2', 'agent-3']);
  });
});

describe('one socket for all agent addresses', () => {
  it('dispatches by the address a connection arrived on, closing those for no agent', async () => {
    const app = buildAgentApp({ name: 'agents' });
    closers.push(() => app.close());
    const directory = new AgentDirectory();
    const seen: (string | undefined)[] = [];
    app.addHook('onRequest', async (req) => {
      seen.push(directory.agentOf(req.socket));
    });
    // The wildcard address would listen beyond loopback; one loopback address shows the dispatch.
    const { port } = await listenWildcard(app, directory, 0, 8, '127.0.0.1');
    expect(await rawGet('127.0.0.1', port, '/health')).toBe('');
    directory.add('127.0.0.1', 'agent-1');
    expect(await rawGet('127.0.0.1', port, '/health')).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen).toEqual(['agent-1']);
  });

  it('names the agent of each address served by one app', async () => {
    const app = buildAgentApp({ name: 'agents' });
    closers.push(() => app.close());
    const directory = new AgentDirectory();
    app.get('/whoami', async (req) => directory.agentOf(req.socket) ?? 'nobody');
    const addresses = loopbackAddresses(3, '127.0.0.1');
    const { port } = await listenOnAddresses(app, addresses, 0, 8);
    addresses.forEach((ip, i) => {
      directory.add(ip, `agent-${i}`);
    });
    const replies = await Promise.all(addresses.map((ip) => rawGet(ip, port, '/whoami')));
    expect(replies.map((r) => r.split('\r\n\r\n')[1])).toEqual(['agent-0', 'agent-1', 'agent-2']);
  });
});
