/**
 * The log lines taken from the trace, in this process: at info one per
 * offer batch, task launch and status update, with the cluster time (in
 * virtual time the epoch plus `at`, whatever the wall clock says); none of
 * them at warn.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { defaultLogFormat } from '../../src/runtime/logging.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';

const EPOCH = 1_700_000_000_000;
const running: RunningCluster[] = [];
const clients: SchedulerClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await Promise.all(running.splice(0).map((r) => r.close()));
});

/** A cluster in virtual time whose log lines, as objects, land in `lines`. */
async function logged(level: string): Promise<{ r: RunningCluster; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const r = await startCluster({
    port: 0,
    agents: 1,
    time: 'virtual',
    seed: 0,
    epochMs: EPOCH,
    logger: pino({ level }, sink),
  });
  running.push(r);
  return { r, lines };
}

/** Subscribes, launches `t1` on the first offer and acknowledges its updates until it runs. */
async function launch(r: RunningCluster): Promise<string> {
  const client = new SchedulerClient(r.masterUrl, 'json');
  clients.push(client);
  await client.subscribe({ user: 'tester', name: 'log-lines' });
  const frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value as string;
  for (let i = 0; i < 30 && !client.pending.some((e) => e.type === 'OFFERS'); i++) {
    r.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const offer = (await client.next('OFFERS', 1_000)).offers.offers[0];
  const resources = [{ name: 'cpus', type: 'SCALAR', scalar: { value: 1 } }];
  const task = {
    name: 't1',
    task_id: { value: 't1' },
    agent_id: offer.agent_id,
    resources,
    command: { value: 'sleep 60' },
  };
  await client.call({
    type: 'ACCEPT',
    accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
  });
  for (let state = ''; state !== 'TASK_RUNNING'; ) {
    const { status } = (await client.nextUpdate('t1')).update;
    state = status.state as string;
    await client.call({
      type: 'ACKNOWLEDGE',
      acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
    });
  }
  return frameworkId;
}

describe('log lines from the trace', () => {
  it('at info: offer batches, launches and status updates, with the cluster time', async () => {
    const { r, lines } = await logged('info');
    const frameworkId = await launch(r);
    const of = (event: string) => lines.filter((l) => l['event'] === event);
    expect(of('event:offers')[0]).toMatchObject({
      level: 30,
      frameworkId,
      offers: 1,
      msg: `1 offer sent to framework ${frameworkId}`,
    });
    expect(of('task:launch')).toEqual([
      expect.objectContaining({ level: 30, taskId: 't1', frameworkId, msg: 'task t1 launched' }),
    ]);
    expect(of('task:status').map((l) => l['msg'])).toEqual(['task t1 TASK_STARTING', 'task t1 TASK_RUNNING']);
    for (const line of lines.filter((l) => l['event'] !== undefined)) {
      expect(line['clusterTime']).toBe(new Date(EPOCH + (line['at'] as number)).toISOString());
    }
  });

  it('at warn: none of them', async () => {
    const { r, lines } = await logged('warn');
    await launch(r);
    expect(lines.filter((l) => l['event'] !== undefined)).toEqual([]);
  });

  it('the default format: pretty for a terminal, JSON for anything else', () => {
    expect(defaultLogFormat({ isTTY: true })).toBe('pretty');
    expect(defaultLogFormat({ isTTY: false })).toBe('json');
    expect(defaultLogFormat({})).toBe('json');
  });
});
