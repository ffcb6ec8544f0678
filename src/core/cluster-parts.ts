/**
 * What a `Cluster` (cluster.ts) is made of, built from its options: the
 * context its nodes share (loop, seeded randomness, trace, network), the
 * agents (cluster-agents.ts), the masters' group with the one misuse log
 * across failovers, the read model, the fault actions, and the gate its
 * inputs go through (input-gate.ts) with the steps around each: reads
 * settle before; after, what it made due runs, then the leader's
 * after-input work and the invariants on what it touched.
 */
import { ClusterAgents } from './cluster-agents.js';
import { sandboxSettings } from './agent/sandboxes.js';
import { DEFAULT_EPOCH_MS, type ClusterOptions } from './cluster-options.js';
import { FaultActions } from './faults/actions.js';
import { encodeValue, startRecord } from './input-record.js';
import { InputGate } from './input-gate.js';
import { assertInvariants } from './invariants.js';
import { EventLoop } from './kernel/event-loop.js';
import type { Probes } from './kernel/probes.js';
import { Rng } from './kernel/rng.js';
import { Trace } from './kernel/trace.js';
import { DEFAULT_ELECTION_DELAY_MS, MasterGroup } from './master/group.js';
import { Master } from './master/master.js';
import { MisuseLog } from './master/misuse.js';
import type { SimContext, WallClock } from './network/context.js';
import { Network } from './network/network.js';
import type { Outbox } from './network/outbox.js';
import { ClusterView } from './view.js';

export interface ClusterParts {
  /** Its loop the event loop itself, which the cluster runs. */
  readonly ctx: SimContext & { readonly loop: EventLoop };
  readonly agents: ClusterAgents;
  readonly masters: MasterGroup;
  readonly view: ClusterView;
  readonly faults: FaultActions;
  readonly gate: InputGate;
}

export function assembleCluster(options: ClusterOptions, seed: string, outbox: Outbox, probes: Probes): ClusterParts {
  const ctx = simContext(options, seed, probes);
  // As plain data (maps tagged), so that log lines show its fields.
  ctx.trace.append(
    'cluster:start',
    JSON.parse(encodeValue(startRecord(seed, ctx.epochMs, options))) as Record<string, unknown>,
  );
  const agents = new ClusterAgents(ctx, outbox, sandboxSettings(options));
  // One misuse log across failovers: what a framework did to the old leader still counts.
  const misuse = new MisuseLog(ctx);
  const masters = new MasterGroup(ctx, options.master, outbox, {
    seed,
    count: options.masters ?? 1,
    electionDelayMs: options.electionDelayMs ?? DEFAULT_ELECTION_DELAY_MS,
    create: (nodeCtx, master) => new Master(nodeCtx, master, outbox, misuse),
    elected: () => {
      misuse.masterChanged();
      for (const agent of agents.all.values()) agent.masterDetected();
    },
  });
  const view = new ClusterView(() => masters.current, agents.all, ctx, masters);
  // The faults act on whichever master leads when they come.
  const faults = new FaultActions({
    ctx,
    wallClock: ctx.wallClock,
    get master() {
      return masters.current;
    },
    agents: agents.all,
    outbox,
  });
  const checkInvariants = options.checkInvariants ?? true;
  const gate = new InputGate(ctx, options.recordInputs ?? options.recordTrace ?? false, {
    before: () => view.settleReads(),
    after: () => {
      ctx.loop.runDue();
      const leader = masters.leader;
      leader?.afterInput();
      if (!checkInvariants || leader === undefined) return;
      assertInvariants(leader, masters.current, agents.all, 'touched', seed, ctx.loop.now());
    },
  });
  return { ctx, agents, masters, view, faults, gate };
}

/** The context every node is handed, its wall clock the one the clock faults step. */
function simContext(
  options: ClusterOptions,
  seed: string,
  probes: Probes,
): SimContext & { loop: EventLoop; wallClock: WallClock } {
  const loop = new EventLoop();
  const rng = new Rng(seed);
  const window = options.traceWindow === undefined ? {} : { tailSize: options.traceWindow };
  const trace = new Trace(loop, { record: options.recordTrace ?? false, ...window });
  const network = new Network(loop, trace, rng.fork('network'), { latencyMs: options.networkLatencyMs ?? 0 });
  const epochMs = options.epochMs ?? DEFAULT_EPOCH_MS;
  return { loop, rng, trace, network, epochMs, wallClock: { stepMs: 0 }, probes };
}
