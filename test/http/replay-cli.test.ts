/**
 * `clustersim replay`: a run recorded over real sockets (a scheduler
 * client subscribing, launching, acknowledging; faults through the control
 * API; an agent crash and restart), its trace read from GET /sim/v1/trace,
 * replays without divergence; a tampered copy reports the entry tampered
 * with; a file that is not a trace is refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient } from '../../src/client/scheduler-client.js';
import { startCluster } from '../../src/start/cluster.js';
import { runCli } from '../e2e/cli-process.js';
import { parseTraceLine, replay, type TraceLine } from '../../src/scenario/replay.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'replay-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first `count` lines of GET /sim/v1/trace (a stream that stays open). */
function readTrace(masterUrl: string, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const request = http.get(new URL('/sim/v1/trace', masterUrl), (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const lines = text.split('\n');
        if (lines.length > count) {
          request.destroy();
          resolve(lines.slice(0, count));
        }
      });
    });
    request.on('error', reject);
  });
}

async function recordedRun(encoding: 'json' | 'protobuf' = 'json'): Promise<{ lines: string[]; hash: string }> {
  const r = await startCluster({ port: 0, agents: 2, time: 'virtual', recordTrace: true, seed: 11 });
  const post = (p: string, body: unknown) =>
    postRaw(new URL(p, r.masterUrl), JSON.stringify(body), { 'content-type': 'application/json' });
  const client = new SchedulerClient(r.masterUrl, encoding);
  try {
    await client.subscribe({ user: 'u', name: 'recorded', checkpoint: true, failover_timeout: 60 });
    await client.next('SUBSCRIBED');
    const offer = (await client.next('OFFERS')).offers.offers[0];
    const task = (id: string, command: string) => ({
      name: id,
      task_id: { value: id },
      agent_id: offer.agent_id,
      resources: [
        { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
        { name: 'mem', type: 'SCALAR', scalar: { value: 32 } },
      ],
      command: { value: command },
    });
    const accept = {
      offer_ids: [offer.id],
      operations: [{ type: 'LAUNCH', launch: { task_infos: [task('a', 'sleep 20'), task('b', 'sleep 600')] } }],
    };
    expect((await client.call({ type: 'ACCEPT', accept })).status).toBe(202);
    const ack = async (taskId: string) => {
      const { status } = (await client.nextUpdate(taskId)).update;
      await client.call({
        type: 'ACKNOWLEDGE',
        acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
      });
    };
    await ack('a');
    await ack('b');
    await post('/sim/v1/faults', { type: 'crash_agent', agent_id: offer.agent_id.value });
    await post('/sim/v1/advance', { ms: 10_000 });
    await post('/sim/v1/faults', { type: 'restart_agent', agent_id: offer.agent_id.value, recover: 'reconnect' });
    await post('/sim/v1/faults', { type: 'network_rule', action: 'delay', delay_ms: 50, jitter_ms: 20 });
    await post('/sim/v1/run_until_idle', { max_ms: 60_000 });
    await post('/sim/v1/run_until', { condition: { frameworks: { state: 'subscribed' } }, max_ms: 1_000 });
    const lines = await readTrace(r.masterUrl, r.trace().length);
    expect(lines.map((l) => JSON.parse(l).kind)).toEqual(
      expect.arrayContaining(['input:subscribe', 'input:call', 'input:inject', 'input:advanceTo', 'agent:crash']),
    );
    return { lines, hash: r.cluster.trace.hash() };
  } finally {
    client.disconnect();
    await r.close();
  }
}

describe('clustersim replay', () => {
  it('replays a recorded run without divergence, and finds the first entry of a tampered copy', async () => {
    const { lines, hash } = await recordedRun();
    const file = path.join(dir, 'run.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const good = await runCli(['replay', file]).output;
    expect(good).toMatchObject({ code: 0, stdout: `replay: ${lines.length} entries, no divergence (hash ${hash})\n` });

    const at = lines.findIndex((l, i) => i > 10 && JSON.parse(l).kind === 'task:status');
    const entry = JSON.parse(lines[at]!) as { seq: number; time_ms: number; line: string };
    const tampered = [...lines];
    tampered[at] = JSON.stringify({ ...entry, line: entry.line.replace('TASK_', 'TASK_NOT_') });
    const bad = path.join(dir, 'tampered.jsonl');
    writeFileSync(bad, tampered.join('\n'));
    const diverged = await runCli(['replay', '--quiet', bad]).output;
    expect(diverged.code).toBe(1);
    expect(diverged.stdout).toContain(
      `replay: diverged at entry ${entry.seq} (time ${entry.time_ms} ms), after ${at} entries that agree`,
    );
    expect(diverged.stdout).toContain(`  expected: ${entry.line.replace('TASK_', 'TASK_NOT_')}`);
    expect(diverged.stdout).toContain(`  produced: ${entry.line}`);
  });

  it('replays a run whose scheduler spoke protobuf (bytes in its calls)', async () => {
    const { lines, hash } = await recordedRun('protobuf');
    const entries = lines.map((l) => parseTraceLine(l) as TraceLine);
    expect(await replay(entries)).toEqual({ entries: lines.length, hash, divergence: undefined });
  });

  it('refuses a file that is not a whole trace, and has --help', async () => {
    const notJson = path.join(dir, 'not.jsonl');
    writeFileSync(notJson, '{"seq":1,"time_ms":0,"kind":"cluster:start","line":"0 cluster:start {}"}\nhello\n');
    const refused = await runCli(['replay', notJson]).output;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/does not name the seed|line 2: not JSON/);
    const nowhere = path.join(dir, 'nowhere.jsonl');
    const missing = await runCli(['replay', nowhere]).output;
    expect([missing.code, missing.stderr]).toEqual([2, `clustersim replay: ${nowhere}: cannot be read (ENOENT)\n`]);
    const help = await runCli(['replay', '--help']).output;
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/clustersim replay <trace>/);
  });
});
