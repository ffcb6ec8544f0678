/**
 * Large clusters: how long `startCluster()` takes to have N agents ready
 * (every listener bound and every agent added to the core), and the heap
 * the idle cluster holds per agent, for each agent addressing. Heap is
 * measured after full garbage collections, before and after the start, in
 * one process, one cluster at a time.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { AgentAddressing } from '../../src/http/agent/listener.js';
import { startCluster } from '../../src/start/cluster.js';
import { progress } from './stats.js';

export interface AgentsRow {
  readonly agents: number;
  /** `loopback` on 127.0.0.1 (a socket per agent address), on 0.0.0.0 (one socket), or `ports`. */
  readonly addressing: AgentAddressing | 'loopback, 0.0.0.0';
  readonly startMs: number;
  /** Heap held by the idle cluster, bytes per agent. */
  readonly heapPerAgent: number;
  /** The same less the heap of a cluster of no agents: what one more agent costs. */
  readonly marginalPerAgent: number;
  /** HTTP status of the last agent's /health. */
  readonly lastAgentHealth: number;
}

/** A full collection, so that heap figures count only what is held. */
export function collector(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}

/** Heap held by an idle cluster of no agents. */
async function emptyClusterHeap(gc: () => void): Promise<number> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const cluster = await startCluster({ port: 0, agents: 0, time: 'realtime', logLevel: 'silent' });
  gc();
  const held = process.memoryUsage().heapUsed - before;
  await cluster.close();
  return held;
}

const MODES = {
  loopback: { agentAddressing: 'loopback', host: '127.0.0.1' },
  'loopback, 0.0.0.0': { agentAddressing: 'loopback', host: '0.0.0.0' },
  ports: { agentAddressing: 'ports', host: '127.0.0.1' },
} as const;

/** `wildcard` adds rows on 0.0.0.0, which listen beyond loopback while they run. */
export async function benchAgents(
  counts: readonly number[],
  portsMax: number,
  wildcard: boolean,
): Promise<AgentsRow[]> {
  const gc = collector();
  // The first start loads and compiles code; it is not part of any row.
  await emptyClusterHeap(gc);
  const empty = await emptyClusterHeap(gc);
  const rows: AgentsRow[] = [];
  for (const agents of counts) {
    for (const addressing of Object.keys(MODES) as (keyof typeof MODES)[]) {
      if (addressing === 'ports' && agents > portsMax) continue;
      if (addressing === 'loopback, 0.0.0.0' && !wildcard) continue;
      progress(`agents: ${agents} agents, ${addressing} addressing`);
      gc();
      const before = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const cluster = await startCluster({
        port: 0,
        agents,
        ...MODES[addressing],
        time: 'realtime',
        logLevel: 'silent',
      });
      const startMs = performance.now() - t0;
      try {
        gc();
        const held = process.memoryUsage().heapUsed - before;
        const heapPerAgent = held / agents;
        const marginalPerAgent = (held - empty) / agents;
        const last = cluster.agents[cluster.agents.length - 1]!;
        const lastAgentHealth = (await fetch(`${last.url}/health`)).status;
        rows.push({ agents, addressing, startMs, heapPerAgent, marginalPerAgent, lastAgentHealth });
      } finally {
        await cluster.close();
      }
    }
  }
  return rows;
}
