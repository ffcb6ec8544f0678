/**
 * Reads of a big cluster: the core builds it (no HTTP, so launching many
 * tasks takes seconds, not minutes), then a master app serves it on a
 * loopback socket and `/state`, `/tasks?limit=100` and the operator's
 * GET_STATE (JSON and protobuf) are read through HTTP: time to the first
 * byte, to the last, and size. While a read is written, a small read
 * (`/health`) is sent too: how long it waits shows whether the big one
 * stalls the server.
 *
 *   npx tsx test/bench/reads.ts AGENTS TASKS_PER_AGENT [FRAMEWORKS]
 *
 * READS_ONLY=state (or tasksPage, getStateJson, getStateProto) times one
 * read alone; READS_PROFILE=DIR writes a CPU profile of the reads to DIR.
 *
 * prints one JSON line. A program, not a test: it never fails on speed.
 */
import type { AddressInfo } from 'node:net';
import { buildMasterApp } from '../../src/http/master/app.js';
import { VirtualDriver } from '../../src/runtime/driver.js';
import type { OfferView, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';
import { CoreBench, FRAMEWORK_INFO, ROOMY_AGENT_RESOURCES, TINY_TASK_RESOURCES, LONG_COMMAND } from './core-harness.js';
import { startProfile } from './cpu-profile.js';
import { timedRequest, type ReadFigure } from './scale.js';
import { progress } from './stats.js';

export interface ReadTiming extends ReadFigure {
  /** Wall time of a `/version` read sent just after this one started. */
  readonly smallReadMs: number;
  /** CPU time of the process (server and client) while both were read. */
  readonly cpuMs: number;
}

/** A core cluster of `agents` agents with `perAgent` long tasks each, spread over `frameworks` frameworks. */
export function bigCluster(agents: number, perAgent: number, frameworks = 1): CoreBench {
  const bench = new CoreBench({ agents, agentResources: ROOMY_AGENT_RESOURCES, checkInvariants: false });
  const resources = TINY_TASK_RESOURCES;
  let seq = 0;
  for (let f = 0; f < frameworks; f++) {
    const offers: OfferView[] = [];
    bench.subscribe(
      (event: SchedulerEvent) => {
        if (event.type === 'OFFERS') offers.push(...event.offers);
      },
      { ...FRAMEWORK_INFO, name: `reads-${f}` },
    );
    bench.input((c) => c.advance(1_000));
    const share = Math.ceil(agents / frameworks);
    for (const offer of offers.slice(0, share)) {
      const tasks: TaskSpec[] = Array.from({ length: perAgent }, () => {
        const taskId = `t${++seq}`;
        return { taskId, name: 'long', agentId: offer.agentId, resources, command: LONG_COMMAND, labels: [] };
      });
      bench.call({
        type: 'ACCEPT',
        offerIds: [offer.id],
        operations: [{ type: 'LAUNCH', tasks }],
        filters: { refuseMs: 1e9 },
      });
    }
    for (const offer of offers.slice(share))
      bench.call({ type: 'DECLINE', offerIds: [offer.id], filters: { refuseMs: 1e9 } });
  }
  for (let i = 0; i < 10; i++) bench.input((c) => c.advance(1_000));
  return bench;
}

async function timed(
  base: string,
  path: string,
  method: 'GET' | 'POST',
  body?: string,
  accept?: string,
): Promise<ReadTiming> {
  const cpu = process.cpuUsage();
  const big = timedRequest(new URL(path, base), method, body, accept);
  await new Promise((resolve) => setTimeout(resolve, 1));
  const small = timedRequest(new URL('/version', base), 'GET');
  const [figure, health] = await Promise.all([big, small]);
  const used = process.cpuUsage(cpu);
  return { ...figure, smallReadMs: health.totalMs, cpuMs: (used.user + used.system) / 1000 };
}

export async function benchReads(
  agents: number,
  perAgent: number,
  frameworks: number,
): Promise<Record<string, unknown>> {
  progress(`reads: building ${agents} agents with ${perAgent} tasks each`);
  const t0 = performance.now();
  const bench = bigCluster(agents, perAgent, frameworks);
  const buildMs = performance.now() - t0;
  let tasks = 0;
  for (const fw of bench.cluster.view.frameworks()) tasks += fw.tasks.size;
  const app = buildMasterApp({ driver: new VirtualDriver(bench.cluster) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  try {
    const base = `http://127.0.0.1:${port}`;
    const getState = JSON.stringify({ type: 'GET_STATE' });
    const reads: Record<string, () => Promise<ReadTiming>> = {
      state: () => timed(base, '/state', 'GET'),
      tasksPage: () => timed(base, '/tasks?limit=100', 'GET'),
      getStateJson: () => timed(base, '/api/v1', 'POST', getState),
      getStateProto: () => timed(base, '/api/v1', 'POST', getState, 'application/x-protobuf'),
    };
    const only = process.env['READS_ONLY'];
    const profile = await startProfile(process.env['READS_PROFILE']);
    const rows: Record<string, ReadTiming> = {};
    for (let i = 0; i < 2; i++) {
      progress(`reads: round ${i + 1}`);
      for (const [name, read] of Object.entries(reads))
        if (only === undefined || only === name) rows[name] = await read();
    }
    await profile();
    return { agents, tasks, frameworks, buildMs, ...rows };
  } finally {
    await app.close();
  }
}

if (process.argv[1]?.endsWith('reads.ts')) {
  const [agents = 1000, perAgent = 20, frameworks = 1] = process.argv.slice(2).map(Number);
  benchReads(agents, perAgent, frameworks)
    .then((row) => process.stdout.write(`${JSON.stringify(row)}\n`))
    .catch((error: unknown) => {
      process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    });
}
