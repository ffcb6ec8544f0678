/**
 * The library refuses a start with a StartError that names what is wrong in
 * its own terms (the option, never a command-line flag): agent resources
 * that give an agent nothing or misname a resource, and a port that a
 * master, an agent or the agent listener cannot have.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { StartError } from '../../src/start/errors.js';
import { portFree } from './ports.js';

const squatters: net.Server[] = [];
const running: RunningCluster[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
  await Promise.all(squatters.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A port held by another listener on 127.0.0.1. */
async function takenPort(port = 0): Promise<number> {
  const server = net.createServer();
  squatters.push(server);
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen({ host: '127.0.0.1', port }, resolve),
  );
  return (server.address() as net.AddressInfo).port;
}

async function refusal(start: Promise<RunningCluster>): Promise<StartError> {
  const error = await start.then(
    (r) => {
      running.push(r);
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StartError);
  return error as StartError;
}

describe('agent resources', () => {
  it.each([
    ['', /^agentResources: "" names no resource; give at least one/],
    ['  ;  ', /^agentResources: ".*" names no resource/],
    ['cpu:4;mem:1024', /^agentResources: unknown resource 'cpu' \(did you mean 'cpus'\?\)/],
    ['cpus:4;memory:1024', /^agentResources: unknown resource 'memory' \(did you mean 'mem'\?\)/],
    ['cpus:4;ports:31000', /^agentResources: 'ports' takes ranges such as \[31000-32000\], not a number$/],
    ['cpus:[1-4]', /^agentResources: 'cpus' takes a number, not ranges/],
    ['cpus:lots', /^agentResources: Invalid scalar for 'cpus': 'lots'$/],
  ])('%j is refused, naming agentResources', async (text, message) => {
    const error = await refusal(startCluster({ port: 0, agents: 1, time: 'virtual', agentResources: text }));
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('--');
    expect(error.option).toBe('agentResources');
  });

  it('an agent group without resources is refused, naming the group', async () => {
    const error = await refusal(
      startCluster({ port: 0, time: 'virtual', agentGroups: [{ count: 1 }, { count: 1, resources: '' }] }),
    );
    expect(error.message).toMatch(/^agentGroups\[1\]\.resources: "" names no resource/);
    expect(error.option).toBe('agentGroups');
  });

  it('custom resources are taken, as upstream takes them', async () => {
    const r = await startCluster({
      port: 0,
      agents: 1,
      time: 'virtual',
      agentResources: 'cpus:2;mem:512;licences:3;zones:{a,b}',
    });
    running.push(r);
    const state = (await (await fetch(new URL('/slaves', r.masterUrl))).json()) as {
      slaves: { resources: Record<string, unknown> }[];
    };
    expect(state.slaves[0]!.resources).toMatchObject({ cpus: 2, mem: 512, licences: 3, zones: '{a, b}' });
  });
});

describe('options refused', () => {
  it.each([
    [{ masters: 0 }, 'masters', 'masters: must be a whole number from 1 to 64, got 0'],
    [
      { heartbeatIntervalSeconds: 0 },
      'heartbeatIntervalSeconds',
      'heartbeatIntervalSeconds: must be a positive number, got 0',
    ],
    [{ agents: -1 }, 'agents', 'agents: must be a whole number of at least 0, got -1'],
    [{ containerizers: 'mesos,k8s' }, 'containerizers', "containerizers: takes mesos and docker, got 'k8s'"],
    [
      { customExecutors: 'fork' as never },
      'customExecutors',
      "customExecutors: must be one of simulate, spawn, await, got 'fork'",
    ],
    [
      { executorShutdownGracePeriodSeconds: -1 },
      'executorShutdownGracePeriodSeconds',
      'executorShutdownGracePeriodSeconds: must be a positive number, got -1',
    ],
    [
      { authenticateHttpReadonly: true },
      'authenticateHttpReadonly',
      "authenticateHttpReadonly: needs credentials: there are none for the realm 'mesos-master-readonly'",
    ],
  ] as const)('%j: a StartError naming the option, not a flag', async (options, option, message) => {
    const error = await refusal(startCluster({ port: 0, agents: 0, time: 'virtual', ...options }));
    expect(error.message).toBe(message);
    expect(error.option).toBe(option);
  });
});

describe('a port that is taken', () => {
  it('the master: a StartError naming it and the port, with the option port', async () => {
    const port = await takenPort();
    const error = await refusal(startCluster({ port, agents: 1, time: 'virtual' }));
    expect(error.message).toBe(`the master cannot listen on 127.0.0.1:${port}: the port is in use`);
    expect(error.option).toBe('port');
  });

  it('master 2 of 3: the masters already listening let go of their ports', async () => {
    const taken = await takenPort();
    const first = taken - 1;
    // The master before the taken port must be free for the test to say anything.
    if (!(await portFree(first))) return;
    const error = await refusal(startCluster({ port: first, masters: 3, agents: 1, time: 'virtual' }));
    expect(error.message).toBe(`master 2 of 3 cannot listen on 127.0.0.1:${taken}: the port is in use`);
    expect(error.option).toBe('port');
    expect(await portFree(first)).toBe(true);
  });

  it('an agent: a StartError naming which agent and its port, with the option agentPort', async () => {
    const port = await takenPort();
    const error = await refusal(startCluster({ port: 0, agents: 1, agentPort: port, time: 'virtual' }));
    expect(error.message).toBe(`agent 1 cannot listen on 127.0.0.1:${port}: the port is in use`);
    expect(error.option).toBe('agentPort');
  });
});

describe('a start refused after its work directory is made', () => {
  it('removes the directory it made: an executor token key that cannot be read', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'start-refused-'));
    const before = process.env['TMPDIR'];
    // The cluster makes its work directory under TMPDIR: here, where nothing else does.
    process.env['TMPDIR'] = tmp;
    try {
      const options = { agents: 1, time: 'virtual', customExecutors: 'spawn' } as const;
      const auth = { authenticateHttpExecutors: true, jwtSecretKey: path.join(tmp, 'no-such-key') };
      const error = await refusal(startCluster({ ...options, ...auth }));
      expect(error.option).toBe('jwtSecretKey');
      expect(readdirSync(tmp)).toEqual([]);
      // A key that can be read starts it, its work directory where the refused one was not left.
      writeFileSync(path.join(tmp, 'key'), 'a'.repeat(64));
      const r = await startCluster({
        ...options,
        authenticateHttpExecutors: true,
        jwtSecretKey: path.join(tmp, 'key'),
      });
      running.push(r);
      expect(r.workDir!.startsWith(tmp)).toBe(true);
    } finally {
      process.env['TMPDIR'] = before;
      if (before === undefined) delete process.env['TMPDIR'];
    }
  });
});
