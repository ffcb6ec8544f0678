/**
 * One executor fuzz run: a fresh cluster on 127.0.0.1 (two agents that
 * await their custom executors, virtual time, a generated seed, in a third
 * of the runs Unix domain sockets too), a framework that launches tasks
 * with custom executors on them, then the generated steps: requests to the
 * agents' executor API, one at a time or in bursts, over TCP or a socket;
 * moves of virtual time (registration timeouts, grace periods, heartbeats);
 * executor streams dropped; agents crashed and restarted (`reconnect` or
 * `cleanup`), or cut off from the master and healed; the framework's KILL,
 * SHUTDOWN, MESSAGE, ACKNOWLEDGE and TEARDOWN; more launches. Every answer
 * is judged (`verdict` of `session.ts`, then `executor-judge.ts`, exactly
 * for a request sent as an executor library sends it); every executor
 * stream is read to its end; after every step the agents and the streams
 * held here must come to agree. At the end the invariants hold, every
 * agent comes back, and a new executor still subscribes, gets its task and
 * reports it running.
 */
import type { Socket } from 'node:net';
import fc from 'fast-check';
import { ExecutorClient } from '../../src/client/executor-client.js';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import { domainSocketPath } from '../../src/http/domain-sockets.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { executorVerdict, agentState, expectedAnswer, type Expected } from './executor-judge.js';
import { ExecutorPool, type FrameworkAction } from './executor-live.js';
import { executorRequestSpec, renderExecutorRequest, type ExecutorRequestSpec } from './executor-requests.js';
import {
  closeCluster,
  describe,
  describeRequest,
  errorLog,
  FuzzFailure,
  guardedRun,
  settle,
  verdict,
  within,
  type FailureKind,
  type RunOptions,
} from './session.js';
import type { StreamCheck } from './stream-check.js';
import {
  agentFaultStep,
  checkFailure as checkAnyFailure,
  dropStreams as drop,
  guardStep,
  heldStreamsBroken as heldBroken,
  logOf,
  releaseStep,
  takeFaultStep,
  toggleAgent as restartOrCrash,
  toggleLink as cutOrHeal,
  type FaultStep,
} from './cluster-faults.js';
import { send, type WireRequest, type WireResponse } from './transport.js';

export type ExecutorStep =
  | { readonly kind: 'request'; readonly spec: ExecutorRequestSpec }
  | { readonly kind: 'burst'; readonly specs: readonly ExecutorRequestSpec[] }
  /** Time moved, the oldest `share` of the held executor streams dropped, an agent's process or link toggled. */
  | FaultStep
  | { readonly kind: 'launch'; readonly count: number; readonly reuse: boolean }
  | { readonly kind: 'framework'; readonly action: FrameworkAction; readonly index: number };

export interface ExecutorRunInput {
  readonly clusterSeed: number;
  readonly checkpoint: boolean;
  /** The framework has TASK_KILLING_STATE. */
  readonly killing: boolean;
  /** The agents serve their executor API on Unix domain sockets too (`--http-executor-domain-sockets`). */
  readonly sockets: boolean;
  /** Tasks launched before the first step. */
  readonly initial: number;
  readonly steps: readonly ExecutorStep[];
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
// A reconnect's wait (2 s), a grace period (5 s), a registration timeout (1 min), an executor HEARTBEAT (30 min).
const advance = fc
  .oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(1_000, 2_000, 5_000, 6_000, 15_000, 60_000, 30 * 60_000))
  .map((ms): ExecutorStep => ({ kind: 'advance', ms }));
const step: fc.Arbitrary<ExecutorStep> = fc.oneof(
  w(
    24,
    executorRequestSpec.map((spec): ExecutorStep => ({ kind: 'request', spec })),
  ),
  w(
    2,
    fc
      .array(executorRequestSpec, { minLength: 2, maxLength: 5 })
      .map((specs): ExecutorStep => ({ kind: 'burst', specs })),
  ),
  w(3, advance),
  w(1, releaseStep),
  w(2, agentFaultStep),
  w(1, fc.record({ kind: fc.constant('launch' as const), count: fc.integer({ min: 1, max: 3 }), reuse: fc.boolean() })),
  w(
    3,
    fc.record({
      kind: fc.constant('framework' as const),
      action: fc.constantFrom<FrameworkAction>(
        'acknowledge',
        'acknowledge',
        'kill',
        'kill',
        'shutdown',
        'message',
        'message',
        'teardown',
      ),
      index: fc.nat({ max: 7 }),
    }),
  ),
);

export function executorRunInput(maxSteps: number): fc.Arbitrary<ExecutorRunInput> {
  return fc.record({
    clusterSeed: fc.nat(),
    checkpoint: fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false))),
    killing: fc.boolean(),
    sockets: fc.oneof(w(2, fc.constant(false)), w(1, fc.constant(true))),
    initial: fc.integer({ min: 1, max: 4 }),
    steps: fc.array(step, { minLength: 1, maxLength: maxSteps, size: 'max' }),
  });
}

/** An executor's event stream held open: the executor lives on it until it is dropped or the agent ends it. */
interface Held {
  readonly socket: Socket;
  readonly check: StreamCheck | undefined;
  readonly executorId: string | undefined;
}

interface Context {
  readonly input: ExecutorRunInput;
  readonly running: RunningCluster;
  readonly pool: ExecutorPool;
  readonly agentPorts: number[];
  /** The agents' domain sockets, by agent, when they serve them. */
  readonly socketPaths: string[] | undefined;
  readonly logLines: string[];
  readonly seen: { failure?: ClusterFailure };
  readonly held: Held[];
  /** Agents cut off from the master. */
  readonly cut: Set<string>;
  /** The state the agents may not have caught up with: the next request is judged by the general rules only. */
  unsettled: boolean;
}

export async function runExecutorsOnce(input: ExecutorRunInput, options: RunOptions): Promise<void> {
  const { logger, lines } = errorLog();
  const seen: Context['seen'] = {};
  const start = startCluster({
    port: 0,
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
    logger,
    customExecutors: 'await',
    httpExecutorDomainSockets: input.sockets,
    onFailure: (f) => (seen.failure = f),
  });
  const running = await within(start, 10_000, () => `cluster seed ${input.clusterSeed}: starting the cluster`);
  const pool = new ExecutorPool(running, options.timeoutMs, { checkpoint: input.checkpoint, killing: input.killing });
  const ctx: Context = {
    input,
    running,
    pool,
    agentPorts: running.agents.map((a) => a.port),
    socketPaths: socketsOf(running, input),
    logLines: lines,
    seen,
    held: [],
    cut: new Set(),
    unsettled: false,
  };
  options.stats.runs++;
  const run = async () => {
    await within(pool.start(), options.timeoutMs, () => `${where(ctx, -1)}: the executors' framework`);
    const first = pool.launch(input.initial, false, (ms) => guard(ctx, -1, () => running.advance(ms)));
    await within(first, options.timeoutMs, () => `${where(ctx, -1)}: the first launch`);
    for (const [index, s] of input.steps.entries()) await runStep(ctx, index, s, options);
    await finalChecks(ctx, options);
  };
  await guardedRun(options, run, async (failed) => {
    pool.close();
    drop(ctx.held.splice(0), options);
    await closeCluster(running, failed, () => where(ctx, input.steps.length), options);
  });
}

function socketsOf(running: RunningCluster, input: ExecutorRunInput): string[] | undefined {
  return input.sockets && running.workDir !== undefined
    ? running.agents.map((a) => domainSocketPath(running.workDir!, a.id))
    : undefined;
}

async function runStep(ctx: Context, index: number, s: ExecutorStep, options: RunOptions): Promise<void> {
  options.watchdog?.note(
    `${where(ctx, index)}: ${s.kind === 'request' || s.kind === 'burst' ? 'requests' : JSON.stringify(s)}`,
  );
  switch (s.kind) {
    case 'advance':
    case 'release':
    case 'agent':
      takeFaultStep(ctx, where(ctx, index), s, options);
      break;
    case 'launch':
      await within(
        ctx.pool.launch(s.count, s.reuse, (ms) => guard(ctx, index, () => ctx.running.advance(ms))),
        options.timeoutMs,
        () => `${where(ctx, index)}: a launch`,
      );
      break;
    case 'framework':
      await within(
        ctx.pool.act(s.action, s.index),
        options.timeoutMs,
        () => `${where(ctx, index)}: the framework's ${s.action}`,
      ).catch((e: Error) => {
        throw e instanceof FuzzFailure ? e : new FuzzFailure(`${where(ctx, index)}: ${e.message}${logOf(ctx)}`);
      });
      break;
    case 'request':
    case 'burst':
      await requests(ctx, index, s.kind === 'request' ? [s.spec] : s.specs, options);
      break;
  }
  await settle();
  await quiet(ctx, index, options);
  checkFailure(ctx, index);
}

/** Sends the requests (at once, each on its own connection), then judges each answer. */
async function requests(
  ctx: Context,
  index: number,
  specs: readonly ExecutorRequestSpec[],
  options: RunOptions,
): Promise<void> {
  ctx.pool.drain();
  const wires = specs.map((spec) => renderExecutorRequest(spec, ctx.pool, ctx.agentPorts, ctx.socketPaths));
  options.watchdog?.note(`${where(ctx, index)}:\n${wires.map(describeRequest).join('\n')}`);
  // Only a request alone on a quiet cluster has one right answer.
  const exact = specs.length === 1 && !ctx.unsettled;
  const expected = exact ? expectedAnswer(wires[0]!, agentState(ctx.running, agentIdOf(ctx, wires[0]!))) : undefined;
  const answers = await Promise.all(wires.map((wire) => send(wire, options.timeoutMs)));
  // A request given up on may reach the agent after the next one has been judged.
  ctx.unsettled = wires.some((wire) => wire.abort !== 'no');
  specs.forEach((spec, i) => {
    judge(ctx, index, spec, wires[i]!, answers[i]!, i === 0 ? expected : undefined, options);
  });
}

/** The executor a request subscribed as, when it opened a stream: read from the request's body. */
function subscribedExecutor(wire: WireRequest, res: WireResponse): string | undefined {
  if (!res.stream || res.status !== 200) return undefined;
  const call = wire.body.toString('latin1');
  // The live ids are plain ASCII, in JSON and in protobuf alike: the one the pool knows is the one in the body.
  return /fuzz-executor-\d+/.exec(call)?.[0];
}

function judge(
  ctx: Context,
  index: number,
  spec: ExecutorRequestSpec,
  wire: WireRequest,
  res: WireResponse,
  expected: Expected | undefined,
  options: RunOptions,
): void {
  options.stats.record(spec, res);
  if (expected !== undefined && res.outcome === 'response') options.stats.exact++;
  if (res.held !== undefined)
    ctx.held.push({ socket: res.held, check: res.check, executorId: subscribedExecutor(wire, res) });
  const broken =
    verdict(spec, wire, res) ??
    (res.outcome === 'response' ? executorVerdict(wire, res, expected) : undefined) ??
    heldStreamsBroken(ctx);
  const failure = ctx.seen.failure ?? ctx.running.driver.failure;
  if (broken === undefined && failure === undefined) return;
  const what =
    broken ??
    `the cluster failed: ${failure!.message}\n  last trace entries:\n    ${failure!.lastEntries.join('\n    ')}`;
  const kind: FailureKind =
    broken === undefined
      ? 'crash'
      : res.outcome === 'timeout' || res.followUp === 'timeout'
        ? 'hang'
        : (res.status ?? 0) >= 500
          ? 'unexpected 5xx'
          : 'other';
  throw new FuzzFailure(`${where(ctx, index)}: ${what}\n${describe(wire, res)}${logOf(ctx)}`, kind);
}

function agentIdOf(ctx: Context, wire: WireRequest): string {
  return ctx.running.agents[ctx.agentPorts.indexOf(wire.port)]!.id;
}

/**
 * A dropped stream reaches the agent as a disconnection a little later, and
 * a stream the agent ends reaches the client a little later. Until both
 * sides agree (an executor the agent has as subscribed has one stream open
 * here; an executor with a stream open here is subscribed, or being shut
 * down), the agent's answers may not be those of the state it is heading
 * for; and a stream the agent leaves open for an executor that is gone, or
 * a second one, is a stream no executor library would ever see end.
 */
async function quiet(ctx: Context, index: number, options: RunOptions): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  for (
    let left = disagreements(ctx);
    left.length > 0 && ctx.running.driver.failure === undefined;
    left = disagreements(ctx)
  ) {
    if (performance.now() > deadline) {
      throw new FuzzFailure(
        `${where(ctx, index)}: the agents and their executors' streams disagree: ${left.join('; ')}${logOf(ctx)}`,
        'hang',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function disagreements(ctx: Context): string[] {
  const open = new Map<string, number>();
  for (const h of ctx.held) {
    if (h.executorId !== undefined && h.check?.ended !== true && !h.socket.destroyed)
      open.set(h.executorId, (open.get(h.executorId) ?? 0) + 1);
  }
  const states = ctx.running.driver.read(
    (view) =>
      new Map(
        ctx.running.agents.flatMap((a) =>
          (view.agentNode(a.id)?.executors() ?? [])
            .filter((e) => e.kind === 'custom')
            .map((e) => [e.executorId, e.state] as const),
        ),
      ),
  );
  const found: string[] = [];
  for (const [executorId, state] of states) {
    if (state === 'subscribed' && !open.has(executorId))
      found.push(`${executorId} is subscribed on a stream dropped here`);
  }
  for (const [executorId, streams] of open) {
    const state = states.get(executorId) ?? 'gone';
    if (streams > 1) found.push(`${executorId} has ${streams} streams open`);
    if (state !== 'subscribed' && state !== 'terminating')
      found.push(`the stream of ${executorId} is open, the executor ${state}`);
  }
  return found;
}

/**
 * The end: the invariants hold; with every stream dropped and every agent
 * back (`reconnect`), past every timeout, they still hold and no executor
 * is still being shut down; and a new executor subscribes, gets its task
 * and reports it running to its framework.
 */
async function finalChecks(ctx: Context, options: RunOptions): Promise<void> {
  const end = ctx.input.steps.length;
  options.watchdog?.note(`${where(ctx, end)}`);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  drop(ctx.held.splice(0), options);
  await quiet(ctx, end, options);
  // An agent still cleaning up exits once its executors are gone: it is started again after that.
  for (let i = 0; i < 4; i++) {
    for (const [agent, { id }] of ctx.running.agents.entries()) {
      const crashed = ctx.running.driver.read((view) => view.agentNode(id)?.state === 'crashed');
      if (crashed) toggleAgent(ctx, end, agent, 'reconnect');
      if (ctx.cut.has(id)) toggleLink(ctx, end, agent);
    }
    guard(ctx, end, () => ctx.running.advance(30_000));
    await settle();
  }
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
  const stuck = stillShuttingDown(ctx);
  if (stuck.length > 0)
    throw new FuzzFailure(
      `${where(ctx, end)}: executors still shutting down long after their grace period: ${stuck.join(', ')}${logOf(ctx)}`,
    );
  await within(aNewExecutorRuns(ctx), options.timeoutMs * 3, () => `${where(ctx, end)}: a new executor afterwards`);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
}

/** Executors the agents are shutting down: none may be left once every grace period is long past. */
function stillShuttingDown(ctx: Context): string[] {
  return ctx.running.driver.read((view) =>
    ctx.running.agents.flatMap((a) =>
      (view.agentNode(a.id)?.executors() ?? [])
        .filter((e) => e.alive && e.state === 'terminating')
        .map((e) => e.executorId),
    ),
  );
}

async function aNewExecutorRuns(ctx: Context): Promise<void> {
  const end = ctx.input.steps.length;
  const fail = (what: string) => new FuzzFailure(`${where(ctx, end)}: a new executor afterwards: ${what}${logOf(ctx)}`);
  await ctx.pool.declineAll();
  const before = ctx.pool.executors.length;
  const launched = await ctx.pool.launch(1, false, (ms) => guard(ctx, end, () => ctx.running.advance(ms)));
  const executor = ctx.pool.executors[before];
  if (!launched || executor === undefined) {
    // Every executor slot used is no fault of the cluster; no offer at all is.
    if (launched) return;
    throw fail('no offer came');
  }
  const taskId = executor.tasks[0]!;
  const client = new ExecutorClient(ctx.running.agents.find((a) => a.id === executor.agentId)!.url, {
    frameworkId: ctx.pool.frameworkId!,
    executorId: executor.executorId,
  });
  try {
    const sub = await client.subscribe();
    if (sub.status !== 200) throw fail(`SUBSCRIBE got ${sub.status} ${sub.body}`);
    await client.next('SUBSCRIBED').catch((e: Error) => Promise.reject(fail(`no SUBSCRIBED: ${e.message}`)));
    await client.next('LAUNCH').catch((e: Error) => Promise.reject(fail(`no LAUNCH: ${e.message}`)));
    const update = await client.update({
      task_id: { value: taskId },
      state: 'TASK_RUNNING',
      uuid: Buffer.alloc(16, 7).toString('base64'),
    });
    if (update.status !== 202) throw fail(`UPDATE got ${update.status} ${update.body}`);
    const seen = await ctx.pool.scheduler
      .nextUpdate(taskId)
      .catch((e: Error) => Promise.reject(fail(`the framework got no update: ${e.message}`)));
    if (seen.update.status.state !== 'TASK_RUNNING') throw fail(`the framework got ${seen.update.status.state}`);
  } finally {
    client.close();
  }
}

function where(ctx: Context, index: number): string {
  const steps = ctx.input.steps.length;
  const at =
    index < 0 ? 'before the first step' : index >= steps ? 'the final checks' : `step ${index + 1} of ${steps}`;
  return `executor fuzz, cluster seed ${ctx.input.clusterSeed}, ${at}`;
}

const guard = (ctx: Context, index: number, apply: () => void) => guardStep(ctx, where(ctx, index), apply);
const checkFailure = (ctx: Context, index: number) => checkAnyFailure(ctx, where(ctx, index), 'executor event stream');
const heldStreamsBroken = (ctx: Context) => heldBroken(ctx, 'executor event stream');
const toggleAgent = (ctx: Context, index: number, agent: number, recover: 'reconnect' | 'cleanup') =>
  restartOrCrash(ctx, where(ctx, index), agent, recover);
const toggleLink = (ctx: Context, index: number, agent: number) => cutOrHeal(ctx, where(ctx, index), agent);
