/**
 * What the fuzz runs that aim at agents share: a cluster's failure told as
 * a `FuzzFailure` (a step that makes the core fail, a failure the core
 * reported, a held stream whose records stopped making sense), and the
 * faults a step brings on an agent (its process crashed and restarted, its
 * link to the master cut and healed). `where` says the run and the step.
 */
import fc from 'fast-check';
import { MASTER_NODE } from '../../src/core/model/messages.js';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import { FuzzFailure, type RunOptions } from './session.js';
import type { Socket } from 'node:net';
import type { StreamCheck } from './stream-check.js';

export interface FaultContext {
  readonly running: RunningCluster;
  /** Set by `onFailure` when the core stops the cluster. */
  readonly seen: { failure?: ClusterFailure };
  /** Streams held open, read as they go. */
  readonly held: readonly { readonly check: StreamCheck | undefined }[];
  /** Agents cut off from the master. */
  readonly cut: Set<string>;
  /** The cluster's error log lines. */
  readonly logLines: readonly string[];
}

export function logOf(ctx: FaultContext): string {
  return ctx.logLines.length === 0 ? '' : `\n  cluster error log:\n    ${ctx.logLines.join('\n    ')}`;
}

/** Applies a step to the cluster; a throw is the cluster failing. */
export function guardStep(ctx: FaultContext, where: string, apply: () => void): void {
  try {
    apply();
  } catch (error) {
    throw new FuzzFailure(`${where}: the cluster failed: ${(error as Error).message}${logOf(ctx)}`, 'crash');
  }
}

/** Crashes the agent, or starts it again when it is down. */
export function toggleAgent(ctx: FaultContext, where: string, agent: number, recover: 'reconnect' | 'cleanup'): void {
  const id = ctx.running.agents[agent % ctx.running.agents.length]!.id;
  const crashed = ctx.running.driver.read((view) => view.agentNode(id)?.state === 'crashed');
  guardStep(ctx, where, () =>
    ctx.running.driver.input((c) => (crashed ? c.restartAgent(id, recover) : c.crashAgent(id))),
  );
}

/** Cuts the agent off from the master, or heals the cut. */
export function toggleLink(ctx: FaultContext, where: string, agent: number): void {
  const id = ctx.running.agents[agent % ctx.running.agents.length]!.id;
  const cut = ctx.cut.has(id);
  guardStep(ctx, where, () =>
    ctx.running.driver.input((c) => (cut ? c.heal(id, MASTER_NODE) : c.partition(id, MASTER_NODE))),
  );
  if (cut) ctx.cut.delete(id);
  else ctx.cut.add(id);
}

/** The first held stream whose records stopped making sense, told as `a held <what> broke: ...`. */
export function heldStreamsBroken(ctx: FaultContext, what: string): string | undefined {
  const broken = ctx.held.find(({ check }) => check?.problem !== undefined);
  if (broken === undefined) return undefined;
  return `a held ${what} broke: ${broken.check!.problem} (its first records: ${broken.check!.types.join(', ')})`;
}

/** Throws when a held stream broke or the cluster failed. */
export function checkFailure(ctx: FaultContext, where: string, what: string): void {
  const broken = heldStreamsBroken(ctx, what);
  if (broken !== undefined) throw new FuzzFailure(`${where}: ${broken}${logOf(ctx)}`);
  const failure = ctx.seen.failure ?? ctx.running.driver.failure;
  if (failure !== undefined) {
    throw new FuzzFailure(
      `${where}: the cluster failed: ${failure.message}\n  last trace entries:\n    ${failure.lastEntries.join('\n    ')}${logOf(ctx)}`,
      'crash',
    );
  }
}

/** Closes held streams, counting what was read from them. */
/**
 * The steps the runs aimed at agents share: time moved; the oldest `share`
 * of the streams held open so far dropped; and an agent's `process` crashed
 * if it runs, else started again in this recover mode, or its `link` to the
 * master cut, or healed if cut.
 */
export type FaultStep =
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'release'; readonly share: number }
  | {
      readonly kind: 'agent';
      readonly agent: number;
      readonly fault: 'process' | 'link';
      readonly recover: 'reconnect' | 'cleanup';
    };

/** The oldest half, or all, of the held streams let go. */
export const releaseStep: fc.Arbitrary<FaultStep> = fc
  .constantFrom(0.5, 1)
  .map((share): FaultStep => ({ kind: 'release', share }));

/** One of two agents' process crashed or started again (twice as often), or its link cut or healed. */
export const agentFaultStep: fc.Arbitrary<FaultStep> = fc.record({
  kind: fc.constant('agent' as const),
  agent: fc.nat({ max: 1 }),
  fault: fc.constantFrom('process' as const, 'process' as const, 'link' as const),
  recover: fc.constantFrom('reconnect' as const, 'cleanup' as const),
});

/** Takes one of the shared steps; `release` lets go of that share of the held streams, oldest first. */
export function takeFaultStep(
  ctx: FaultContext & { readonly held: { readonly socket: Socket; readonly check: StreamCheck | undefined }[] },
  where: string,
  s: FaultStep,
  options: RunOptions,
): void {
  switch (s.kind) {
    case 'advance':
      return guardStep(ctx, where, () => ctx.running.advance(s.ms));
    case 'release':
      return dropStreams(ctx.held.splice(0, Math.ceil(ctx.held.length * s.share)), options);
    case 'agent':
      return s.fault === 'process' ? toggleAgent(ctx, where, s.agent, s.recover) : toggleLink(ctx, where, s.agent);
  }
}

export function dropStreams(
  held: readonly { readonly socket: Socket; readonly check: StreamCheck | undefined }[],
  options: RunOptions,
): void {
  for (const { socket, check } of held) {
    socket.destroy();
    if (check !== undefined) options.stats.streamRead(check);
  }
}
