/**
 * `clustersim up` as a process: its ready line, a refused start on a port
 * that is taken, and its logs, as JSON lines (one per task launch, status
 * update and offer batch at info, with the cluster time) and as pretty text.
 */
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { runCli, startUp, type UpProcess } from '../e2e/cli-process.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function takenPort(): Promise<number> {
  const server = net.createServer();
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return (server.address() as net.AddressInfo).port;
}

/** `up` until its ready line; stopped after the test. */
async function up(args: readonly string[]): Promise<UpProcess> {
  const process = await startUp(args);
  cleanups.push(() => process.stop());
  return process;
}

const cpusMem = [
  { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
  { name: 'mem', type: 'SCALAR', scalar: { value: 64 } },
];

/** Subscribes, launches one task on the first offer and waits until it runs. */
async function launchOne(masterUrl: string): Promise<string> {
  const client = new SchedulerClient(masterUrl, 'json');
  cleanups.push(async () => client.disconnect());
  expect((await client.subscribe({ user: 'tester', name: 'logs' })).status).toBe(200);
  const frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value as string;
  const offer = (await client.next('OFFERS', 10_000)).offers.offers[0];
  const task = {
    name: 'web',
    task_id: { value: 'web-1' },
    agent_id: offer.agent_id,
    resources: cpusMem,
    command: { value: 'sleep 3600' },
  };
  const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] };
  expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
  // Each update waits for the acknowledgement of the one before.
  for (let state = ''; state !== 'TASK_RUNNING'; ) {
    const { status } = (await client.nextUpdate('web-1', 10_000)).update;
    state = status.state as string;
    expect(
      (
        await client.call({
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
        })
      ).status,
    ).toBe(202);
  }
  return frameworkId;
}

/** The process' stderr as JSON objects, once `done` holds for one of them. */
async function jsonLines(
  p: UpProcess,
  done: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i++) {
    const lines = p
      .stderr()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    if (lines.some(done)) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no such log line in:\n${p.stderr()}`);
}

describe('clustersim up as a process', () => {
  it('a master port that is taken: one line naming the master and the port, exit code 2', async () => {
    const port = await takenPort();
    const out = await runCli(['up', '--port', String(port), '--agents', '1', '--log-level', 'silent']).output;
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      `clustersim up: the master cannot listen on 127.0.0.1:${port}: the port is in use (--port)\n`,
    );
  }, 60_000);

  it('an agent port that is taken: one line naming the agent and the port, exit code 2', async () => {
    const port = await takenPort();
    const out = await runCli([
      'up',
      '--port',
      '0',
      '--agents',
      '2',
      '--agent-port',
      String(port),
      '--log-level',
      'silent',
    ]).output;
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `clustersim up: agent 1 of 2 cannot listen on 127.0.0.1:${port}: the port is in use (--agent-port)\n`,
    );
  }, 60_000);

  it('--log-format json: a line per task launch, status update and offer batch at info, with the cluster time', async () => {
    const p = await up(['--agents', '1', '--log-format', 'json', '--log-level', 'info']);
    const frameworkId = await launchOne(p.masterUrl);
    const lines = await jsonLines(p, (l) => l['event'] === 'task:status' && l['state'] === 'TASK_RUNNING');
    expect(lines.find((l) => l['event'] === 'event:offers')).toMatchObject({
      level: 30,
      frameworkId,
      offers: 1,
      msg: `1 offer sent to framework ${frameworkId}`,
    });
    const launch = lines.find((l) => l['event'] === 'task:launch');
    expect(launch).toMatchObject({ level: 30, msg: 'task web-1 launched', taskId: 'web-1', frameworkId });
    expect(typeof launch!['at']).toBe('number');
    // Real time: the cluster's clock is the wall clock, give or take the run.
    expect(Math.abs(Date.parse(String(launch!['clusterTime'])) - Date.now())).toBeLessThan(60_000);
    expect(lines.find((l) => l['event'] === 'task:status' && l['state'] === 'TASK_RUNNING')).toMatchObject({
      msg: 'task web-1 TASK_RUNNING',
      taskId: 'web-1',
    });
    expect(lines.map((l) => l['msg'])).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^the master listening at http:\/\/127\.0\.0\.1:\d+$/),
        expect.stringMatching(/^the agent listener listening at /),
      ]),
    );
  }, 60_000);

  it('--log-format pretty: text lines for people; the ready line counts agents grammatically', async () => {
    const p = await up(['--agents', '2', '--log-format', 'pretty', '--log-level', 'info', '--time', 'virtual']);
    for (
      let i = 0;
      i < 100 &&
      !p
        .stderr()
        .includes(
          'agent:add {"clusterTime":"2023-11-14T22:13:20.000Z","agentId":"4c22ee2f-d887-4c23-861d-899f28639ece-S1"',
        );
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = p
      .stderr()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: the master listening at http:\/\/127\.0\.0\.1:\d+$/),
      ]),
    );
    expect(lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\[[\d:.]+\] INFO: the agent listener listening at /)]),
    );
    // Virtual time starts at its epoch (2023-11-14T22:13:20Z), whatever the wall clock says.
    expect(lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/INFO[^:]*: agent:add .*"clusterTime":"2023-11-14T22:13:20/)]),
    );
  }, 60_000);

  it('on a terminal, pretty and coloured by default', async (context) => {
    // util-linux's script(1) gives the command a terminal; without it there is nothing to run this on.
    if (spawnSync('script', ['--version']).error !== undefined) return context.skip();
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const command = `'${process.execPath}' --import tsx src/cli/main.ts up --port 0 --agents 1`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    let text = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('master at')) resolve();
      });
      void exited.then(() => reject(new Error(`script exited: ${text}`)));
    });
    child.kill('SIGTERM');
    await exited;
    expect(text).toMatch(
      /^\[[\d:.]+\] \x1b\[32mINFO\x1b\[39m: \x1b\[36mthe master listening at http:\/\/127\.0\.0\.1:\d+/m,
    );
    expect(text).not.toMatch(/^\{"level"/m);
  }, 60_000);

  it('the ready line says "0 agents" (and "1 agent": test/e2e/cli.test.ts)', async () => {
    const { child, output } = runCli(['up', '--port', '0', '--agents', '0', '--log-level', 'silent']);
    child.stdout!.on('data', () => child.kill('SIGTERM'));
    const out = await output;
    expect(out.stdout).toMatch(/^clustersim: master at http:\/\/127\.0\.0\.1:\d+ with 0 agents\n$/);
  }, 60_000);
});
