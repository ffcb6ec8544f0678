/**
 * One fuzz run: a fresh cluster on 127.0.0.1 (port 0, two agents, virtual
 * time, a generated seed), a live subscription, then the generated steps
 * (requests one at a time or in concurrent bursts, moves of virtual time,
 * the release of event streams held open), then the checks of the end.
 * Every request must be answered (no hang), below 500 unless the error
 * catalogue says a 5xx is the answer, and must leave the cluster up
 * (`driver.failure` undefined). At the end the invariants hold and a new
 * scheduler still gets SUBSCRIBED and OFFERS.
 *
 * A broken rule throws a `FuzzFailure` whose message holds the cluster's
 * seed, the request as sent, what came back and the cluster's error log,
 * which fast-check prints beside its own seed and counterexample.
 */
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import pino from 'pino';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import type { Resources } from '../../src/core/model/resources.js';
import { httpError } from '../../src/http/errors.js';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { LiveFramework } from './live.js';
import { operatorVerdict, reopen } from './operator-judge.js';
import { AGENT_DOWN } from './executor-judge.js';
import {
  isAgentOperatorPath,
  isExecutorPath,
  isOperatorPath,
  render,
  requestSpec,
  SCHEDULER_PATHS,
  type RequestSpec,
} from './requests.js';
import type { StreamCheck } from './stream-check.js';
import { send, type WireRequest, type WireResponse } from './transport.js';
import { ACLS, authorization, CREDENTIALS } from './secured.js';
import { Watchdog } from './watchdog.js';

export type Step =
  | { readonly kind: 'request'; readonly spec: RequestSpec }
  /** Requests sent all at once, each on its own connection. */
  | { readonly kind: 'burst'; readonly specs: readonly RequestSpec[] }
  | { readonly kind: 'advance'; readonly ms: number }
  /** The event streams held open so far are dropped, the oldest `share` of them. */
  | { readonly kind: 'release'; readonly share: number };

export interface RunInput {
  readonly clusterSeed: number;
  /** Credentials and ACLs on the master (`secured.ts`). */
  readonly secured: boolean;
  readonly steps: readonly Step[];
}

// An allocation interval (1 s), the default refusal filter (5 s), a heartbeat (15 s), status update retries (10 s and up).
const advance = fc
  .oneof(fc.integer({ min: 0, max: 2_000 }), fc.constantFrom(1_000, 5_000, 6_000, 10_000, 15_000, 60_000))
  .map((ms): Step => ({ kind: 'advance', ms }));
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 24, arbitrary: requestSpec.map((spec): Step => ({ kind: 'request', spec })) },
  {
    weight: 2,
    arbitrary: fc.array(requestSpec, { minLength: 2, maxLength: 6 }).map((specs): Step => ({ kind: 'burst', specs })),
  },
  { weight: 4, arbitrary: advance },
  { weight: 1, arbitrary: fc.constantFrom(0.5, 1).map((share): Step => ({ kind: 'release', share })) },
);

/** A run of up to `maxSteps` steps on a cluster of its own seed. */
export function runInput(maxSteps: number): fc.Arbitrary<RunInput> {
  return fc.record({
    clusterSeed: fc.nat(),
    secured: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    steps: fc.array(step, { minLength: 1, maxLength: maxSteps, size: 'max' }),
  });
}

/** What runs have sent and got, for the figures. */
export class Stats {
  cases = 0;
  runs = 0;
  readonly byStatus = new Map<string, number>();
  /** By the call's type (scheduler API) or the path (other endpoints), then by status. */
  readonly byKind = new Map<string, number>();
  /** What a second request on a kept-alive connection got, after the first was answered. */
  readonly followUps = new Map<string, number>();
  /** Event streams read, and the events read from them (a held stream's until it is dropped), by API. */
  readonly streams = { scheduler: 0, operator: 0, executor: 0, session: 0 };
  readonly events = { scheduler: 0, operator: 0, executor: 0, session: 0 };
  /** Answers held to the one answer upstream gives (the executor API's requests sent as a library sends them). */
  exact = 0;
  onCase: ((stats: Stats) => void) | undefined;

  /** `label`: what the request was, for the counts by kind (by default, the call's type or the path). */
  record(spec: RequestSpec, res: WireResponse, label = kindOf(spec)): void {
    this.recordAs(label, res);
  }

  /** A case of this kind (a call type, a path) and its answer. */
  recordAs(what: string, res: WireResponse): void {
    this.cases++;
    const status =
      res.outcome !== 'response' ? res.outcome : res.stream ? `${res.status} (stream)` : String(res.status);
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    const kind = `${what} ${status}`;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    if (res.followUp !== undefined)
      this.followUps.set(String(res.followUp), (this.followUps.get(String(res.followUp)) ?? 0) + 1);
    if (res.check !== undefined && res.held === undefined) this.streamRead(res.check);
    this.onCase?.(this);
  }

  streamRead(check: StreamCheck): void {
    this.streams[check.api]++;
    this.events[check.api] += check.records;
  }
}

/** `ACCEPT`, `ACCEPT (mutated)`, `operator GET_STATE` or the server and path of a request without a call. */
function kindOf(spec: RequestSpec): string {
  const { body } = spec;
  const onMaster = SCHEDULER_PATHS.includes(spec.target) ? '' : isOperatorPath(spec.target) ? 'operator ' : undefined;
  const onAgent = isExecutorPath(spec.target) ? 'executor ' : isAgentOperatorPath(spec.target) ? 'agent ' : undefined;
  const api = spec.server !== 0 ? onAgent : onMaster;
  if (body.kind === 'call' && api !== undefined) {
    const type =
      body.call !== null && typeof body.call === 'object' && !Array.isArray(body.call) ? body.call['type'] : undefined;
    const mutated = body.json.length + body.proto.length + body.bytes.length > 0;
    return `${api}${typeof type === 'string' ? type : '(no type)'}${mutated ? ' (mutated)' : ''}`;
  }
  return `${spec.server === 0 ? 'master' : 'agent'} ${spec.target.split('?')[0]!.slice(0, 40)}`;
}

/** What a failure was, for the figures: the cluster or the process failed, something never ended, a 5xx, another broken rule. */
export type FailureKind = 'crash' | 'hang' | 'unexpected 5xx' | 'other';

export class FuzzFailure extends Error {
  override name = 'FuzzFailure';
  constructor(
    message: string,
    readonly kind: FailureKind = 'other',
  ) {
    super(message);
  }
}

export interface RunOptions {
  /** Wall-clock time a request may take before it counts as a hang. */
  readonly timeoutMs: number;
  readonly stats: Stats;
  /** Told what each step does, to report a synchronous hang that stops every timer of this process. */
  readonly watchdog?: Watchdog;
  /**
   * Told of every failure as it happens: shrinking re-runs clusters, and
   * with hangs in them it may take minutes before fast-check reports.
   */
  readonly onFailure?: (error: unknown) => void;
}

/** The cluster's error and fatal log lines: a 500 or a failure explains itself there. */
export function errorLog(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8').trimEnd());
      if (lines.length > 20) lines.shift();
      done();
    },
  });
  return { logger: pino({ level: 'error' }, sink), lines };
}

interface Context {
  readonly input: RunInput;
  readonly running: RunningCluster;
  readonly live: LiveFramework;
  readonly ports: number[];
  readonly logLines: string[];
  /** Set by `onFailure` when the core stops the cluster. */
  readonly seen: { failure?: ClusterFailure };
  /** Event streams of generated SUBSCRIBEs kept open, oldest first, each read on as it goes. */
  readonly held: { readonly socket: Socket; readonly check: StreamCheck | undefined }[];
}

/**
 * `promise`, or a `FuzzFailure` saying what did not finish: every wait of a
 * run has a bound, so that a server that stops answering is reported
 * instead of holding the run for ever.
 */
export function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FuzzFailure(`${what()}: no end within ${ms} ms (a hang)`, 'hang')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function runOnce(input: RunInput, options: RunOptions): Promise<void> {
  const { logger, lines } = errorLog();
  const seen: Context['seen'] = {};
  const auth = input.secured ? { credentials: CREDENTIALS, acls: ACLS } : {};
  const start = startCluster({
    port: 0,
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
    logger,
    onFailure: (f) => (seen.failure = f),
    ...auth,
  });
  const running = await within(start, 10_000, () => `cluster seed ${input.clusterSeed}: starting the cluster`);
  const ports = [new URL(running.masterUrl).port, ...running.agents.map((a) => String(a.port))].map(Number);
  const live = new LiveFramework(running, options.timeoutMs, liveHeaders(input));
  const ctx: Context = { input, running, live, ports, logLines: lines, seen, held: [] };
  options.stats.runs++;
  const run = async () => {
    await within(ctx.live.ensure(), options.timeoutMs, () => `${where(ctx, -1)}: the live subscription`);
    for (const [index, s] of input.steps.entries()) await runStep(ctx, index, s, options);
    await finalChecks(ctx, options);
  };
  await guardedRun(options, run, async (failed) => {
    ctx.live.close();
    drop(ctx.held.splice(0), options.stats);
    await closeCluster(running, failed, () => where(ctx, input.steps.length), options);
  });
}

/**
 * `runs` fuzz runs as one fast-check property, as the tests run them: a
 * watchdog for synchronous hangs, the failure shown as soon as it is found
 * (shrinking runs with hangs in them may take minutes), of `seed` when
 * given. Returns the figures.
 */
export async function assertRuns<T>(
  input: fc.Arbitrary<T>,
  run: (input: T, options: RunOptions) => Promise<void>,
  runs: number,
  seed?: number,
): Promise<Stats> {
  const stats = new Stats();
  const watchdog = new Watchdog(30_000);
  let reported = false;
  const onFailure = (error: unknown) => {
    if (!reported)
      console.error(`fuzz: failure found, shrinking it now:\n${(error as Error)?.message ?? String(error)}`);
    reported = true;
  };
  try {
    await fc.assert(
      fc.asyncProperty(input, (i) => run(i, { timeoutMs: 5_000, stats, watchdog, onFailure })),
      // A fixed seed, unless FUZZ_SEED replays another.
      fuzzParameters<T>(runs, process.env['FUZZ_SEED'] === undefined ? seed : undefined),
    );
  } finally {
    await watchdog.stop();
  }
  return stats;
}

/** Runs a fuzz run's body, tells `onFailure` what it throws, and always ends with `cleanup`, told whether the run failed. */
export async function guardedRun(
  options: RunOptions,
  body: () => Promise<void>,
  cleanup: (failed: boolean) => Promise<void>,
): Promise<void> {
  let failed = true;
  try {
    await body();
    failed = false;
  } catch (error) {
    options.onFailure?.(error);
    throw error;
  } finally {
    await cleanup(failed);
  }
}

/** Closes a run's cluster; a close that hangs is a failure when nothing went wrong before it. */
export async function closeCluster(
  running: RunningCluster,
  failed: boolean,
  where: () => string,
  options: RunOptions,
): Promise<void> {
  options.watchdog?.note(`${where()}: closing the cluster`);
  // A failed cluster's close() rejects with the failure, which a step has already reported.
  const closed = within(
    running.close().catch(() => undefined),
    10_000,
    () => `${where()}: closing the cluster`,
  );
  await (failed ? closed.catch(() => undefined) : closed);
}

async function runStep(ctx: Context, index: number, s: Step, options: RunOptions): Promise<void> {
  switch (s.kind) {
    case 'advance':
      options.watchdog?.note(`${where(ctx, index)}: advancing virtual time by ${s.ms} ms`);
      guard(ctx, index, () => ctx.running.advance(s.ms));
      break;
    case 'release':
      drop(ctx.held.splice(0, Math.ceil(ctx.held.length * s.share)), options.stats);
      break;
    case 'request':
    case 'burst': {
      await within(ctx.live.ensure(), options.timeoutMs, () => `${where(ctx, index)}: the live subscription`);
      const specs = s.kind === 'request' ? [s.spec] : s.specs;
      const wires = specs.map((spec) => render(spec, ctx.live, ctx.ports));
      options.watchdog?.note(`${where(ctx, index)}:\n${wires.map(describeRequest).join('\n')}`);
      const answers = await Promise.all(wires.map((wire) => send(wire, options.timeoutMs)));
      specs.forEach((spec, i) => {
        judge(ctx, index, spec, wires[i]!, answers[i]!, options);
      });
      break;
    }
  }
  await settle();
}

/** Closes held event streams, counting what was read from them. */
function drop(held: Context['held'], stats: Stats): void {
  for (const { socket, check } of held) {
    socket.destroy();
    if (check !== undefined) stats.streamRead(check);
  }
}

/** Lets the bytes written by the cluster reach the live subscription. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

function guard(ctx: Context, index: number, apply: () => void): void {
  try {
    apply();
  } catch (error) {
    throw new FuzzFailure(
      `${where(ctx, index)}: the cluster failed: ${(error as Error).message}${logOf(ctx)}`,
      'crash',
    );
  }
}

function judge(
  ctx: Context,
  index: number,
  spec: RequestSpec,
  wire: WireRequest,
  res: WireResponse,
  options: RunOptions,
): void {
  options.stats.record(spec, res);
  if (res.held !== undefined) {
    ctx.held.push({ socket: res.held, check: res.check });
    // A JSON stream starts with SUBSCRIBED: later calls may speak for this framework too.
    const framework = /"framework_id":\{"value":"([^"]+)"\}/.exec(res.body.toString('utf8'))?.[1];
    const stream = res.headers['mesos-stream-id'];
    if (framework !== undefined && stream !== undefined) ctx.live.addOther(framework, stream);
  }
  const broken = verdict(spec, wire, res) ?? heldStreamsBroken(ctx);
  const failure = ctx.seen.failure ?? ctx.running.driver.failure;
  if (broken !== undefined || failure !== undefined) {
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
  if (spec.body.kind === 'call') ctx.live.afterCall(spec.body.call, res.status);
}

/** The first held event stream whose records stopped making sense since it was opened. */
function heldStreamsBroken(ctx: Context): string | undefined {
  const broken = ctx.held.find(({ check }) => check?.problem !== undefined);
  if (broken === undefined) return undefined;
  return `a held ${broken.check!.api} event stream broke: ${broken.check!.problem} (its first events: ${broken.check!.types.join(', ')})`;
}

function checkHeldStreams(ctx: Context): void {
  const broken = heldStreamsBroken(ctx);
  if (broken !== undefined) throw new FuzzFailure(`${where(ctx, ctx.input.steps.length)}: ${broken}${logOf(ctx)}`);
}

const NOT_IMPLEMENTED = httpError('NOT_IMPLEMENTED');

/** Undefined when the answer is acceptable, else what is wrong with it. */
export function verdict(spec: RequestSpec, wire: WireRequest, res: WireResponse): string | undefined {
  if (res.outcome === 'aborted') return undefined;
  if (res.outcome === 'timeout') return `no answer within the per-request timeout (a hang)`;
  if (res.outcome === 'closed') return closeIsExpected(wire) ? undefined : 'the connection closed without an answer';
  const status = res.status ?? 0;
  const body = res.body.toString('utf8');
  if (status >= 500 && !expectedServerError(spec, status, body)) return `answered ${status}`;
  // SUBSCRIBED (or the ERROR of a refused subscription) is written at once, in virtual time too.
  if (res.stream && res.check?.problem !== undefined) return `the event stream is unreadable: ${res.check.problem}`;
  // A session's output stream may say nothing: a command that writes nothing.
  if (res.stream && res.check?.records === 0 && res.check.api !== 'session')
    return 'an event stream opened and ended without an event';
  if (spec.server === 0 && isOperatorPath(spec.target)) {
    const broken = operatorVerdict(wire, res);
    if (broken !== undefined) return broken;
  }
  if (res.followUp === 'timeout')
    return `answered ${status}, then GET /health on the same kept-alive connection got no answer (a hang)`;
  return undefined;
}

/** Node's limit of a request's head; past it, node answers 431 and drops the connection. */
const MAX_HEAD_BYTES = 16 * 1024;

/**
 * When node itself may end a connection without an answer the client can
 * read: a CONNECT it has no handler for; a body cut short by a half-close
 * (`long`); bytes past the declared body (`short`), which node reads as a
 * malformed next request, answered 400 on a connection it then destroys
 * with the client's bytes unread, so the kernel resets it and the client
 * may lose every answer; and, reset the same way, a head over node's limit.
 */
export function closeIsExpected(wire: WireRequest): boolean {
  if (wire.method === 'CONNECT' || wire.framing === 'long' || wire.framing === 'short') return true;
  const head = wire.target.length + wire.headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  return head > MAX_HEAD_BYTES;
}

const CALL_FAILED = httpError('CALL_FAILED');

/**
 * The 5xx answers the error catalogue gives on purpose: an UNKNOWN or
 * unsupported call, a master at its capacity, an agent that is down; on
 * the agent operator API, a call the agent failed to carry out (which
 * `agent-judge.ts` allows for UPDATE_CONTAINER_MEMORY_LIMIT alone).
 */
/** ATTACH_CONTAINER_OUTPUT failed as upstream's containerizer fails it (agent-judge.ts holds it to that call). */
function attachFailure(status: number, body: string): boolean {
  return (
    status === 500 && /^(Unknown container \S+|I\/O switchboard server was disabled for this container)$/.test(body)
  );
}

function expectedServerError(spec: RequestSpec, status: number, body: string): boolean {
  const catalogued =
    (status === NOT_IMPLEMENTED.status && body === NOT_IMPLEMENTED.body) || (status === 503 && body === AGENT_DOWN);
  if (spec.server !== 0 && isExecutorPath(spec.target)) return catalogued;
  if (spec.server !== 0 && isAgentOperatorPath(spec.target))
    return catalogued || (status === CALL_FAILED.status && body === CALL_FAILED.body) || attachFailure(status, body);
  const onApi = spec.server === 0 && (SCHEDULER_PATHS.includes(spec.target) || isOperatorPath(spec.target));
  if (onApi && status === NOT_IMPLEMENTED.status && body === NOT_IMPLEMENTED.body) return true;
  return onApi && status === 503 && /^Too many (subscriptions|frameworks)\b/.test(body);
}

async function finalChecks(ctx: Context, options: RunOptions): Promise<void> {
  const end = ctx.input.steps.length;
  options.watchdog?.note(`${where(ctx, end)}`);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkHeldStreams(ctx);
  ctx.live.close();
  // Operator streams stay to the end, and read what the last minute brings (removals, heartbeats, the last framework).
  const operatorStreams = ctx.held.filter(({ check }) => check?.api === 'operator');
  drop(
    ctx.held.splice(0).filter((h) => !operatorStreams.includes(h)),
    options.stats,
  );
  ctx.held.push(...operatorStreams);
  // The streams' ends reach the master as disconnections before time moves on.
  await settle();
  // Past every failover timeout a template subscribes with, and every executor's grace period.
  guard(ctx, end, () => ctx.running.advance(60_000));
  const operator: Record<string, string> = ctx.input.secured ? { authorization: authorization(1) } : {};
  const closed = await within(
    reopen(ctx.running.masterUrl, operator),
    options.timeoutMs,
    () => `${where(ctx, end)}: lifting quotas and deactivations`,
  );
  if (closed !== undefined)
    throw new FuzzFailure(`${where(ctx, end)}: lifting quotas and deactivations: ${closed}${logOf(ctx)}`);
  const fail = (what: string, kind?: FailureKind) => new FuzzFailure(`${where(ctx, end)}: ${what}${logOf(ctx)}`, kind);
  const client = await freshSubscription(ctx.running, liveHeaders(ctx.input), options.timeoutMs, fail);
  try {
    guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
    await settle();
    checkHeldStreams(ctx);
  } finally {
    client.disconnect();
  }
}

/**
 * The last check of every fuzz run: a normal SUBSCRIBE gets SUBSCRIBED,
 * then OFFERS at once or after an allocation interval or two of virtual
 * time. Only when nothing is left to offer may none come: a framework
 * subscribed by a generated call with a long failover timeout may still
 * hold every agent with its tasks, and that is no fault. Returns the
 * client, still subscribed; `fail` makes the failure to throw.
 */
export async function freshSubscription(
  running: RunningCluster,
  headers: Record<string, string>,
  timeoutMs: number,
  fail: (what: string, kind?: FailureKind) => FuzzFailure,
  at: { readonly url?: string; readonly advance?: (ms: number) => void } = {},
): Promise<SchedulerClient> {
  const client = new SchedulerClient(at.url ?? running.masterUrl, 'json', headers);
  const advance = at.advance ?? ((ms: number) => advanceOrFail(running, ms, fail));
  try {
    const res = await within(
      client.subscribe({ user: 'fuzz', name: 'after' }),
      timeoutMs,
      () => 'a normal SUBSCRIBE afterwards',
    );
    if (res.status !== 200) throw fail(`a normal SUBSCRIBE afterwards got ${res.status} ${res.body}`);
    await client
      .next('SUBSCRIBED', timeoutMs)
      .catch((e: Error) => Promise.reject(fail(`a normal SUBSCRIBE afterwards got no SUBSCRIBED: ${e.message}`)));
    await offersArrive(running, client, timeoutMs, fail, advance);
    return client;
  } catch (error) {
    client.disconnect();
    throw error;
  }
}

function advanceOrFail(
  running: RunningCluster,
  ms: number,
  fail: (what: string, kind?: FailureKind) => FuzzFailure,
): void {
  try {
    running.advance(ms);
  } catch (e) {
    throw fail(`the cluster failed: ${(e as Error).message}`, 'crash');
  }
}

/** `advance` moves the cluster's time between the waits (on a cluster that follows the wall clock, it need not). */
async function offersArrive(
  running: RunningCluster,
  client: SchedulerClient,
  timeoutMs: number,
  fail: (what: string, kind?: FailureKind) => FuzzFailure,
  advance: (ms: number) => void,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.next('OFFERS', attempt === 0 ? 500 : 200);
      return;
    } catch (error) {
      if (attempt * 200 > timeoutMs) {
        if (!roomForATask(running)) return;
        throw fail(`a normal SUBSCRIBE afterwards got no OFFERS: ${(error as Error).message}`);
      }
      advance(1_000);
    }
  }
}

/** Whether some agent that may offer (registered, connected, not deactivated nor gone) has a cpu and 128 MB neither offered nor used. */
function roomForATask(running: RunningCluster): boolean {
  const free = (resources: Resources, name: string) =>
    resources
      .filter((r) => r.name === name && r.role === '*' && r.type === 'SCALAR')
      .reduce((sum, r) => sum + (r.milli ?? 0), 0) / 1000;
  return running.driver.read((view) =>
    [...view.agents()].some(
      (a) =>
        view.agentSnapshot(a.id)?.active === true &&
        free(view.unallocated(a.id), 'cpus') >= 1 &&
        free(view.unallocated(a.id), 'mem') >= 128,
    ),
  );
}

/** What the live framework and the final checks send: the live principal's credentials on a secured run. */
function liveHeaders(input: RunInput): Record<string, string> {
  return input.secured ? { authorization: authorization(0) } : {};
}

function where(ctx: Context, index: number): string {
  const steps = ctx.input.steps.length;
  const at =
    index < 0 ? 'before the first step' : index >= steps ? 'the final checks' : `step ${index + 1} of ${steps}`;
  return `cluster seed ${ctx.input.clusterSeed}, ${at}`;
}

function logOf(ctx: Context): string {
  return ctx.logLines.length === 0 ? '' : `\n  cluster error log:\n    ${ctx.logLines.join('\n    ')}`;
}

const MAX_SHOWN = 1_500;

/** The request as sent, short enough to read. */
export function describeRequest(wire: WireRequest): string {
  const head = [
    `  request: ${JSON.stringify(wire.method)} ${JSON.stringify(shorten(wire.target))} ${wire.version} to port ${wire.port}${wire.socketPath === undefined ? '' : ` over ${wire.socketPath}`}, framing ${wire.framing}`,
  ];
  for (const [n, v] of wire.headers) head.push(`    ${JSON.stringify(n)}: ${JSON.stringify(shorten(v))}`);
  head.push(`    body (${wire.body.length} bytes): ${bodyText(wire.body)}`);
  return head.join('\n');
}

/** The request as sent and the answer, short enough to read. */
export function describe(wire: WireRequest, res: WireResponse): string {
  const head = [describeRequest(wire)];
  head.push(
    `  answer: ${res.outcome} ${res.status ?? ''} after ${Math.round(res.ms)} ms${res.followUp === undefined ? '' : `, follow-up ${res.followUp}`}`,
  );
  for (const [n, v] of Object.entries(res.headers)) head.push(`    ${n}: ${shorten(v)}`);
  head.push(`    body (${res.body.length} bytes): ${bodyText(res.body)}`);
  return head.join('\n');
}

function shorten(text: string): string {
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)`;
}

/** The first bytes, as UTF-8 text when they are text, else as base64; never the cost of a whole 10 MB body. */
function bodyText(body: Buffer): string {
  const head = body.subarray(0, MAX_SHOWN);
  const more = body.length > MAX_SHOWN ? `… (${body.length} bytes)` : '';
  const text = head.toString('utf8');
  // A character cut in two at the end is no reason for base64.
  if (!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(text.replace(/\ufffd$/, '')))
    return `${JSON.stringify(text)}${more}`;
  return `base64 ${head.toString('base64')}${more}`;
}

/**
 * fast-check's parameters for a fuzz property: FUZZ_SEED (unless a seed is
 * given) and FUZZ_PATH replay a reported failure. Shrinking re-runs whole
 * clusters, so it stops after a few minutes with the smallest
 * counterexample found so far.
 */
export function fuzzParameters<T = RunInput>(numRuns: number, seed?: number): fc.Parameters<[T]> {
  const envSeed = process.env['FUZZ_SEED'];
  const path = process.env['FUZZ_PATH'];
  const chosen = seed ?? (envSeed === undefined ? undefined : Number(envSeed));
  return {
    numRuns,
    ...(chosen === undefined ? {} : { seed: chosen }),
    ...(path === undefined ? {} : { path }),
    interruptAfterTimeLimit: 10 * 60_000,
    // The failure's own message (cluster seed, request, answer) in fast-check's report, not only as its cause.
    includeErrorInReport: true,
  };
}
