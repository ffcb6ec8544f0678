/**
 * What the fuzz runs of the control API, the workflow service and the
 * orchestration framework share: a cluster on 127.0.0.1 with its error log,
 * requests sent one at a time or in bursts and judged by the rules every
 * API keeps (an answer, no 5xx but the documented ones, a one-line reason
 * for a refusal, a kept-alive connection still in step), the cluster's
 * failure caught after every step, and a new scheduler that still gets
 * SUBSCRIBED and OFFERS at the end. Each target adds its own requests,
 * judge and final checks (`control-session.ts`, `workflow-session.ts`,
 * `orchestrator-session.ts`).
 */
import type { Socket } from 'node:net';
import fc from 'fast-check';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { render, type RequestSpec, type TokenResolver } from './requests.js';
import {
  closeCluster,
  closeIsExpected,
  describe,
  describeRequest,
  errorLog,
  freshSubscription,
  FuzzFailure,
  guardedRun,
  settle,
  within,
  type FailureKind,
  type RunOptions,
} from './session.js';
import { send, type WireRequest, type WireResponse } from './transport.js';

export type ServiceStep =
  | { readonly kind: 'request'; readonly spec: RequestSpec }
  /** Requests sent all at once, each on its own connection. */
  | { readonly kind: 'burst'; readonly specs: readonly RequestSpec[] }
  /** Virtual time moves on (a realtime cluster waits as long, up to a second). */
  | { readonly kind: 'advance'; readonly ms: number };

export const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });

/** The steps of a run: mostly requests, some bursts and moves of time. */
export function serviceSteps(
  request: fc.Arbitrary<RequestSpec>,
  advance: fc.Arbitrary<number>,
  maxSteps: number,
): fc.Arbitrary<ServiceStep[]> {
  const step: fc.Arbitrary<ServiceStep> = fc.oneof(
    w(
      24,
      request.map((spec): ServiceStep => ({ kind: 'request', spec })),
    ),
    w(
      2,
      fc.array(request, { minLength: 2, maxLength: 5 }).map((specs): ServiceStep => ({ kind: 'burst', specs })),
    ),
    w(
      4,
      advance.map((ms): ServiceStep => ({ kind: 'advance', ms })),
    ),
  );
  return fc.array(step, { minLength: 1, maxLength: maxSteps, size: 'max' });
}

/** A run's cluster and what it has seen; `label` names the target and its seed in every report. */
export interface ServiceRun {
  readonly label: string;
  readonly steps: number;
  readonly running: RunningCluster;
  readonly logLines: string[];
  readonly seen: { failure?: ClusterFailure };
  /** Streams kept open by requests that asked to (`hold`), dropped at the end. */
  readonly held: Socket[];
}

/** What a target's requests go to and how their answers are judged. */
export interface Surface {
  /** The port of each server a spec may name (`spec.server`, modulo their number). */
  ports(): readonly number[];
  readonly tokens: TokenResolver;
  /** Undefined when the answer is right for this API, else what is wrong (after the rules of `serviceVerdict`). */
  judge(spec: RequestSpec, wire: WireRequest, res: WireResponse): string | undefined;
  /** A 5xx this API gives on purpose, documented in its error catalogue. */
  expected5xx(spec: RequestSpec, status: number, body: string): boolean;
  /** A close without an answer this API gives on purpose (besides node's own, which every API may give). */
  closeExpected?(spec: RequestSpec, wire: WireRequest): boolean;
  /** Told of every answer, after it is judged: a target learns ids from them. */
  seen?(spec: RequestSpec, wire: WireRequest, res: WireResponse): void;
  /** The label of the request for the counts by kind. */
  kind(spec: RequestSpec): string;
}

/** Starts a run's cluster (port 0, loopback) with its error log and failure caught. */
export async function startRun(label: string, steps: number, options: StartClusterOptions): Promise<ServiceRun> {
  const { logger, lines } = errorLog();
  const seen: ServiceRun['seen'] = {};
  const start = startCluster({ port: 0, host: '127.0.0.1', logger, onFailure: (f) => (seen.failure = f), ...options });
  const running = await within(start, 10_000, () => `${label}: starting the cluster`);
  return { label, steps, running, logLines: lines, seen, held: [] };
}

/** Runs `body`, then drops the held streams, calls `cleanup` and closes the cluster, whatever happened. */
export async function runGuarded(
  run: ServiceRun,
  options: RunOptions,
  body: () => Promise<void>,
  cleanup: () => Promise<void> = async () => {},
): Promise<void> {
  options.stats.runs++;
  await guardedRun(options, body, async (failed) => {
    for (const socket of run.held.splice(0)) socket.destroy();
    await cleanup().catch(() => undefined);
    await closeCluster(run.running, failed, () => where(run, run.steps), options);
  });
}

export function where(run: ServiceRun, index: number): string {
  const at =
    index < 0 ? 'before the first step' : index >= run.steps ? 'the final checks' : `step ${index + 1} of ${run.steps}`;
  return `${run.label}, ${at}`;
}

export function logOf(run: ServiceRun): string {
  return run.logLines.length === 0 ? '' : `\n  cluster error log:\n    ${run.logLines.join('\n    ')}`;
}

/** Applies a change to the cluster; its failure is a crash. */
export function guard(run: ServiceRun, index: number, apply: () => void): void {
  try {
    apply();
  } catch (error) {
    throw new FuzzFailure(
      `${where(run, index)}: the cluster failed: ${(error as Error).message}${logOf(run)}`,
      'crash',
    );
  }
}

/** The cluster stopped (an invariant broke): a crash, whatever the answers were. */
export function checkCluster(run: ServiceRun, index: number): void {
  const failure = run.seen.failure ?? run.running.driver.failure;
  if (failure === undefined) return;
  throw new FuzzFailure(
    `${where(run, index)}: the cluster failed: ${failure.message}\n  last trace entries:\n    ${failure.lastEntries.join('\n    ')}${logOf(run)}`,
    'crash',
  );
}

/** Moves virtual time on, or waits as long (up to a second) on a cluster that follows the wall clock. */
export async function advance(run: ServiceRun, index: number, ms: number, options: RunOptions): Promise<void> {
  options.watchdog?.note(`${where(run, index)}: advancing time by ${ms} ms`);
  if (run.running.driver.mode === 'virtual') guard(run, index, () => run.running.advance(ms));
  else await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 1_000)));
}

/** Sends the requests at once, each on its own connection, and judges each answer. */
export async function requests(
  run: ServiceRun,
  surface: Surface,
  index: number,
  specs: readonly RequestSpec[],
  options: RunOptions,
): Promise<void> {
  const wires = specs.map((spec) => render(spec, surface.tokens, surface.ports()));
  options.watchdog?.note(`${where(run, index)}:\n${wires.map(describeRequest).join('\n')}`);
  const answers = await Promise.all(wires.map((wire) => send(wire, options.timeoutMs)));
  specs.forEach((spec, i) => {
    judge(run, surface, index, spec, wires[i]!, answers[i]!, options);
  });
  await settle();
  checkCluster(run, index);
}

function judge(
  run: ServiceRun,
  surface: Surface,
  index: number,
  spec: RequestSpec,
  wire: WireRequest,
  res: WireResponse,
  options: RunOptions,
): void {
  options.stats.record(spec, res, surface.kind(spec));
  if (res.held !== undefined) run.held.push(res.held);
  const closes = () => surface.closeExpected?.(spec, wire) === true;
  const broken =
    serviceVerdict(wire, res, (status, body) => surface.expected5xx(spec, status, body), closes) ??
    (res.outcome === 'response' ? surface.judge(spec, wire, res) : undefined);
  if (broken !== undefined) {
    const kind: FailureKind =
      res.outcome === 'timeout' || res.followUp === 'timeout'
        ? 'hang'
        : (res.status ?? 0) >= 500
          ? 'unexpected 5xx'
          : 'other';
    throw new FuzzFailure(`${where(run, index)}: ${broken}\n${describe(wire, res)}${logOf(run)}`, kind);
  }
  checkCluster(run, index);
  surface.seen?.(spec, wire, res);
}

/**
 * The rules every API keeps, whatever it is: an answer (or the close node
 * itself gives to what it cannot read), no 5xx but the documented ones, a
 * refusal with a reason on one line, and a kept-alive connection still in step.
 */
export function serviceVerdict(
  wire: WireRequest,
  res: WireResponse,
  expected5xx: (status: number, body: string) => boolean,
  closeExpected: () => boolean = () => false,
): string | undefined {
  if (res.outcome === 'aborted') return undefined;
  if (res.outcome === 'timeout') return 'no answer within the per-request timeout (a hang)';
  if (res.outcome === 'closed')
    return closeIsExpected(wire) || closeExpected() ? undefined : 'the connection closed without an answer';
  const status = res.status ?? 0;
  const body = res.body.toString('utf8');
  if (status >= 500 && !expected5xx(status, body)) return `answered ${status}`;
  // Node's own refusals (a head it cannot parse, a head too large) have no body and no Content-Type.
  if (status >= 400 && wire.method !== 'HEAD' && res.headers['content-type'] !== undefined) {
    const reason = body.replace(/\n$/, '');
    if (reason.trim() === '') return `answered ${status} with no reason`;
    if (reason.includes('\n')) return `answered ${status} with a reason of more than one line`;
  }
  if (res.followUp === 'timeout')
    return `answered ${status}, then GET /health on the same kept-alive connection got no answer (a hang)`;
  return undefined;
}

/**
 * A new scheduler subscribes to the leading master (or, with `masterUrl`,
 * to that one) and gets SUBSCRIBED, then OFFERS unless nothing is left to offer.
 */
export async function freshSubscriber(run: ServiceRun, options: RunOptions, masterUrl?: string): Promise<void> {
  const end = run.steps;
  const url = masterUrl ?? run.running.leaderUrl() ?? run.running.masterUrl;
  const fail = (what: string, kind?: FailureKind) => new FuzzFailure(`${where(run, end)}: ${what}${logOf(run)}`, kind);
  // On a cluster that follows the wall clock, the waits for OFFERS are the time that passes.
  const virtual = run.running.driver.mode === 'virtual';
  const advance = (ms: number) => virtual && guard(run, end, () => run.running.advance(ms));
  const client = await freshSubscription(run.running, {}, options.timeoutMs, fail, { url, advance });
  try {
    guard(run, end, () => run.running.driver.input((c) => c.checkAllInvariants()));
    checkCluster(run, end);
  } finally {
    client.disconnect();
  }
}
