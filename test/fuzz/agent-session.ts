/**
 * One agent operator API fuzz run: a fresh cluster on 127.0.0.1 (two
 * agents, virtual time, a generated seed, cgroups v1 or v2 with memory
 * isolation or without), a framework running long tasks on both agents,
 * plain and DOCKER ones (`task-host.ts`), then the generated steps:
 * requests to the agents' `/api/v1` (sessions, nested containers, input
 * streams, waits, kills, removals, memory limits, reads), one at a time or
 * in bursts; moves of virtual time; session streams dropped; agents
 * crashed and restarted, or cut off from the master and healed; tasks
 * killed and launched. Every answer is judged (`verdict` of `session.ts`,
 * then `agent-judge.ts`); a wait, whose answer comes when its container
 * ends, is judged when it comes, and must come by the end.
 *
 * At the end, with every agent back, every session dropped and every task
 * killed, every wait has its answer and the invariants hold; then a new
 * task's exec session runs `echo` to its end and its wait says 0, and a
 * fresh SUBSCRIBE still gets offers.
 */
import type { Socket } from 'node:net';
import fc from 'fast-check';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { AGENT_CALL_TYPE, WAIT_CALLS } from './agent-calls.js';
import { agentOperatorState, agentVerdict, type AgentOperatorState } from './agent-judge.js';
import { agentRequestSpec, renderAgentRequest, type AgentRequestSpec } from './agent-requests.js';
import { callOf } from './operator-judge.js';
import {
  closeCluster,
  describe,
  describeRequest,
  errorLog,
  freshSubscription,
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
import { TaskHost } from './task-host.js';
import { frameRecord } from '../../src/wire/recordio.js';
import { decodeJson } from '../../src/wire/json.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { send, type WireRequest, type WireResponse } from './transport.js';

export type AgentStep =
  | { readonly kind: 'request'; readonly spec: AgentRequestSpec }
  | { readonly kind: 'burst'; readonly specs: readonly AgentRequestSpec[] }
  /** Time moved, the oldest `share` of the held session streams dropped, an agent's process or link toggled. */
  | FaultStep
  | { readonly kind: 'launch' }
  | { readonly kind: 'kill' }
  /** A `cat` session as an interactive client runs it: its input typed in records, its output the same text, its wait 0. */
  | {
      readonly kind: 'interactive';
      readonly agent: number;
      readonly texts: readonly string[];
      readonly encoding: 'json' | 'protobuf';
      readonly chunked: boolean;
    };

export interface AgentRunInput {
  readonly clusterSeed: number;
  readonly cgroups: 'v1' | 'v2';
  /** `cgroups/mem` among the isolators. */
  readonly memoryIsolation: boolean;
  readonly delegated: boolean;
  readonly steps: readonly AgentStep[];
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
// A session's `sleep 5`, a reconnect's wait (2 s), an executor's grace period (5 s), a registration timeout (1 min).
const advance = fc
  .oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(1_000, 5_000, 6_000, 60_000, 100_000))
  .map((ms): AgentStep => ({ kind: 'advance', ms }));
const step: fc.Arbitrary<AgentStep> = fc.oneof(
  w(
    24,
    agentRequestSpec.map((spec): AgentStep => ({ kind: 'request', spec })),
  ),
  w(
    2,
    fc.array(agentRequestSpec, { minLength: 2, maxLength: 5 }).map((specs): AgentStep => ({ kind: 'burst', specs })),
  ),
  w(4, advance),
  w(1, releaseStep),
  w(1, agentFaultStep),
  w(1, fc.constant<AgentStep>({ kind: 'launch' })),
  w(1, fc.constant<AgentStep>({ kind: 'kill' })),
  w(
    2,
    fc.record({
      kind: fc.constant('interactive' as const),
      agent: fc.nat({ max: 1 }),
      texts: fc.array(
        fc.oneof(fc.constantFrom('hello\n', 'a', 'é\n', ' '), fc.string({ minLength: 1, maxLength: 20 })),
        { minLength: 1, maxLength: 4 },
      ),
      encoding: fc.constantFrom('json' as const, 'protobuf' as const),
      chunked: fc.boolean(),
    }),
  ),
);

export function agentRunInput(maxSteps: number): fc.Arbitrary<AgentRunInput> {
  return fc.record({
    clusterSeed: fc.nat(),
    cgroups: fc.constantFrom('v1' as const, 'v2' as const),
    memoryIsolation: fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false))),
    delegated: fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false))),
    steps: fc.array(step, { minLength: 1, maxLength: maxSteps, size: 'max' }),
  });
}

/** A session's output stream held open. */
interface Held {
  readonly socket: Socket;
  readonly check: StreamCheck | undefined;
}

/** A wait sent and not answered yet: judged when its answer comes. */
interface Pending {
  readonly index: number;
  readonly spec: AgentRequestSpec;
  readonly wire: WireRequest;
  readonly answer: Promise<WireResponse>;
  res?: WireResponse;
}

interface Context {
  readonly input: AgentRunInput;
  readonly running: RunningCluster;
  readonly host: TaskHost;
  readonly agentPorts: number[];
  readonly logLines: string[];
  readonly seen: { failure?: ClusterFailure };
  readonly held: Held[];
  readonly pending: Pending[];
  readonly cut: Set<string>;
  readonly memoryLimits: boolean;
}

/** How long a wait may take in wall-clock time: it ends when its container does, at the latest at the end of the run. */
const WAIT_LIMIT_MS = 120_000;

export async function runAgentsOnce(input: AgentRunInput, options: RunOptions): Promise<void> {
  const { logger, lines } = errorLog();
  const seen: Context['seen'] = {};
  const isolation = input.memoryIsolation ? 'cgroups/cpu,cgroups/mem' : 'posix/cpu,posix/mem';
  const start = startCluster({
    port: 0,
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
    logger,
    cgroups: input.cgroups,
    isolation,
    memoryControllerDelegated: input.delegated,
    onFailure: (f) => (seen.failure = f),
  });
  const running = await within(start, 10_000, () => `cluster seed ${input.clusterSeed}: starting the cluster`);
  const host = new TaskHost(running, options.timeoutMs);
  const memoryLimits = input.memoryIsolation && (input.cgroups === 'v1' || input.delegated);
  const ctx: Context = {
    input,
    running,
    host,
    agentPorts: running.agents.map((a) => a.port),
    logLines: lines,
    seen,
    held: [],
    pending: [],
    cut: new Set(),
    memoryLimits,
  };
  options.stats.runs++;
  const run = async () => {
    await host.begin((ms) => guard(ctx, -1, () => running.advance(ms)), where(ctx, -1));
    for (const [index, s] of input.steps.entries()) await runStep(ctx, index, s, options);
    await finalChecks(ctx, options);
  };
  await guardedRun(options, run, async (failed) => {
    host.close();
    drop(ctx.held.splice(0), options);
    await closeCluster(running, failed, () => where(ctx, input.steps.length), options);
    // The waits still out end with the cluster: their sockets are closed by then.
    await Promise.all(ctx.pending.map((p) => p.answer));
  });
}

async function runStep(ctx: Context, index: number, s: AgentStep, options: RunOptions): Promise<void> {
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
        ctx.host.launch((ms) => guard(ctx, index, () => ctx.running.advance(ms))),
        options.timeoutMs,
        () => `${where(ctx, index)}: launching tasks`,
      );
      break;
    case 'kill':
      await within(ctx.host.kill(index), options.timeoutMs, () => `${where(ctx, index)}: killing a task`);
      break;
    case 'request':
    case 'burst':
      await requests(ctx, index, s.kind === 'request' ? [s.spec] : s.specs, options);
      break;
    case 'interactive':
      await within(
        interactive(ctx, index, s, options),
        options.timeoutMs * 3,
        () => `${where(ctx, index)}: an interactive session`,
      );
      break;
  }
  await settle();
  judgeAnsweredWaits(ctx, options);
  checkFailure(ctx, index);
}

async function requests(
  ctx: Context,
  index: number,
  specs: readonly AgentRequestSpec[],
  options: RunOptions,
): Promise<void> {
  const resolver = (agent: number) => ctx.host.resolver(agent);
  const wires = specs.map((spec) => renderAgentRequest(spec, ctx.agentPorts, resolver));
  options.watchdog?.note(`${where(ctx, index)}:\n${wires.map(describeRequest).join('\n')}`);
  // Requests of a burst race each other: only a request alone is held to the one right answer.
  const states = wires.map((wire) =>
    wires.length === 1 ? agentOperatorState(ctx.running, agentOfPort(ctx, wire.port), ctx.memoryLimits) : undefined,
  );
  const now: Promise<void>[] = [];
  for (const [i, wire] of wires.entries()) {
    const type = callOf<{ type?: string }>(wire, AGENT_CALL_TYPE)?.type;
    if (type !== undefined && WAIT_CALLS.includes(type)) {
      // A wait is answered when its container ends: it is judged then.
      const pending: Pending = { index, spec: specs[i]!, wire, answer: send(wire, WAIT_LIMIT_MS) };
      void pending.answer.then((res) => (pending.res = res));
      ctx.pending.push(pending);
      continue;
    }
    now.push(send(wire, options.timeoutMs).then((res) => judge(ctx, index, specs[i]!, wire, res, options, states[i]!)));
  }
  await Promise.all(now);
}

function agentOfPort(ctx: Context, port: number): string {
  return ctx.running.agents[Math.max(0, ctx.agentPorts.indexOf(port))]!.id;
}

function judge(
  ctx: Context,
  index: number,
  spec: AgentRequestSpec,
  wire: WireRequest,
  res: WireResponse,
  options: RunOptions,
  state?: AgentOperatorState,
): void {
  options.stats.record(spec, res);
  if (res.held !== undefined) ctx.held.push({ socket: res.held, check: res.check });
  const general = verdict(spec, wire, res);
  const judged =
    general === undefined && res.outcome === 'response' ? agentVerdict(wire, res, state) : { exact: false };
  if (judged.exact && judged.problem === undefined) options.stats.exact++;
  const broken = general ?? judged.problem ?? heldStreamsBroken(ctx);
  if (broken === undefined) return;
  const kind: FailureKind =
    res.outcome === 'timeout' || res.followUp === 'timeout'
      ? 'hang'
      : (res.status ?? 0) >= 500
        ? 'unexpected 5xx'
        : 'other';
  throw new FuzzFailure(`${where(ctx, index)}: ${broken}\n${describe(wire, res)}${logOf(ctx)}`, kind);
}

/** The waits answered since the last look, judged now (their state before is unknown: the general rules only). */
function judgeAnsweredWaits(ctx: Context, options: RunOptions): void {
  for (let i = 0; i < ctx.pending.length; ) {
    const p = ctx.pending[i]!;
    if (p.res === undefined) {
      i++;
      continue;
    }
    ctx.pending.splice(i, 1);
    judge(ctx, p.index, p.spec, p.wire, p.res, options);
  }
}

/**
 * The end: every agent back, every session dropped, past every timeout,
 * every task killed: every wait has its answer, judged; the invariants
 * hold; a new task's session runs to its end; a fresh SUBSCRIBE gets offers.
 */
async function finalChecks(ctx: Context, options: RunOptions): Promise<void> {
  const end = ctx.input.steps.length;
  options.watchdog?.note(`${where(ctx, end)}`);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
  drop(ctx.held.splice(0), options);
  for (const [agent, { id }] of ctx.running.agents.entries()) {
    if (ctx.running.driver.read((view) => view.agentNode(id)?.state === 'crashed'))
      toggleAgent(ctx, end, agent, 'reconnect');
    if (ctx.cut.has(id)) toggleLink(ctx, end, agent);
  }
  for (let i = 0; i < 3; i++) {
    guard(ctx, end, () => ctx.running.advance(60_000));
    await settle();
  }
  await within(ctx.host.kill(), options.timeoutMs, () => `${where(ctx, end)}: killing the tasks`);
  for (let i = 0; i < 3; i++) {
    guard(ctx, end, () => ctx.running.advance(10_000));
    await settle();
  }
  const waits = Promise.all(ctx.pending.map((p) => p.answer));
  await within(
    waits,
    options.timeoutMs,
    () => `${where(ctx, end)}: the answers of ${ctx.pending.length} waits, every container ended`,
  ).catch((error: FuzzFailure) => {
    throw new FuzzFailure(
      `${error.message}\n${ctx.pending
        .filter((p) => p.res === undefined)
        .map((p) => describeRequest(p.wire))
        .join('\n')}${logOf(ctx)}`,
      'hang',
    );
  });
  judgeAnsweredWaits(ctx, options);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
  await within(aSessionRuns(ctx, options), options.timeoutMs * 3, () => `${where(ctx, end)}: a new session afterwards`);
  await ctx.host.declineAll();
  const fail = (what: string, kind?: FailureKind) => new FuzzFailure(`${where(ctx, end)}: ${what}${logOf(ctx)}`, kind);
  const client = await freshSubscription(ctx.running, {}, options.timeoutMs, fail);
  client.disconnect();
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
}

/** A new task, and an interactive session in its container that runs to its end (`interactive`). */
async function aSessionRuns(ctx: Context, options: RunOptions): Promise<void> {
  const end = ctx.input.steps.length;
  const fail = (what: string) => new FuzzFailure(`${where(ctx, end)}: a new session afterwards: ${what}${logOf(ctx)}`);
  if (!(await ctx.host.launch((ms) => guard(ctx, end, () => ctx.running.advance(ms))))) throw fail('no offer came');
  if (ctx.host.containers(0).all.length === 0) throw fail('no task runs on the first agent');
  await interactive(
    ctx,
    end,
    { kind: 'interactive', agent: 0, texts: ['after\n', 'the end'], encoding: 'json', chunked: true },
    options,
  );
}

/** A request as an ordinary client sends it to the agent on `port`, a session's stream held. */
function plainCall(
  port: number,
  body: object | Buffer,
  accept: string,
  extra: [string, string][] = [],
  contentType = 'application/json',
): WireRequest {
  return {
    port,
    method: 'POST',
    target: '/api/v1',
    version: 'HTTP/1.1',
    headers: [['Host', `127.0.0.1:${port}`], ['Content-Type', contentType], ['Accept', accept], ...extra],
    body: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
    framing: 'length',
    followUp: false,
    hold: true,
    abort: 'no',
    operator: false,
    session: true,
  };
}

type Interactive = Extract<AgentStep, { kind: 'interactive' }>;

/**
 * A `cat` session under a running task of the agent: 200 and its stream
 * (503 while the agent is down); its input, typed as STDIN records and
 * ended, is 200; its output is that text, the stream ends, its wait says 0.
 */
async function interactive(ctx: Context, index: number, s: Interactive, options: RunOptions): Promise<void> {
  const agent = s.agent % ctx.agentPorts.length;
  const parent = ctx.host.containers(agent).all[0];
  if (parent === undefined) return;
  const port = ctx.agentPorts[agent]!;
  const up = agentOperatorState(ctx.running, ctx.running.agents[agent]!.id, ctx.memoryLimits).up;
  const containerId = { parent: { value: parent }, value: `i${index}` };
  const fail = (what: string, wire: WireRequest, res: WireResponse) =>
    new FuzzFailure(`${where(ctx, index)}: an interactive session: ${what}\n${describe(wire, res)}${logOf(ctx)}`);
  const launch = plainCall(
    port,
    {
      type: 'LAUNCH_NESTED_CONTAINER_SESSION',
      launch_nested_container_session: {
        container_id: containerId,
        command: { shell: false, value: 'cat', arguments: ['cat'] },
      },
    },
    'application/recordio',
    [['Message-Accept', 'application/json']],
  );
  const session = await send(launch, options.timeoutMs);
  options.stats.recordAs('agent interactive session', session);
  if (!up) {
    if (session.status !== 503) throw fail('expected 503 while the agent is down', launch, session);
    return;
  }
  if (session.status !== 200 || session.held === undefined || session.check === undefined)
    throw fail('expected 200 and its output stream', launch, session);
  try {
    const records = [
      { type: 'CONTAINER_ID', container_id: containerId },
      ...s.texts.map((t) => stdinIo(t)),
      stdinIo(''),
    ];
    const body = Buffer.concat(
      records.map((r) =>
        frameRecord(encodeCall({ type: 'ATTACH_CONTAINER_INPUT', attach_container_input: r }, s.encoding)),
      ),
    );
    const media = s.encoding === 'json' ? 'application/json' : 'application/x-protobuf';
    const input = {
      ...plainCall(port, body, 'application/json', [['Message-Content-Type', media]], 'application/recordio'),
      hold: false,
      framing: s.chunked ? ('chunked' as const) : ('length' as const),
    };
    const typed = await send(input, options.timeoutMs);
    options.stats.recordAs('agent interactive input', typed);
    if (typed.status !== 200) throw fail('expected 200 to the input', input, typed);
    for (let i = 0; i < 20 && session.check.ended !== true; i++) {
      guard(ctx, index, () => ctx.running.advance(100));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (session.check.problem !== undefined || !session.check.ended)
      throw fail(`its output stream did not end well: ${session.check.problem ?? 'no end'}`, launch, session);
    if (session.check.output !== s.texts.join(''))
      throw fail(
        `its output was ${JSON.stringify(session.check.output)}, its input ${JSON.stringify(s.texts.join(''))}`,
        launch,
        session,
      );
  } finally {
    session.held.destroy();
    options.stats.streamRead(session.check);
  }
  const waitCall = {
    ...plainCall(port, { type: 'WAIT_CONTAINER', wait_container: { container_id: containerId } }, 'application/json'),
    hold: false,
  };
  const waited = await send(waitCall, options.timeoutMs);
  options.stats.recordAs('agent interactive wait', waited);
  if (waited.status !== 200 || JSON.parse(waited.body.toString('utf8')).wait_container?.exit_status !== 0)
    throw fail('expected 200 and exit status 0', waitCall, waited);
  options.stats.exact += 3;
}

const stdinIo = (text: string) => ({
  type: 'PROCESS_IO',
  process_io: { type: 'DATA', data: { type: 'STDIN', data: Buffer.from(text).toString('base64') } },
});

/** An agent Call as JSON or protobuf bytes. */
function encodeCall(call: object, encoding: 'json' | 'protobuf'): Buffer {
  const text = JSON.stringify(call);
  if (encoding === 'json') return Buffer.from(text);
  const decoded = decodeJson<object>(AGENT_CALL_TYPE, text);
  if (!decoded.ok) throw new Error(`an agent Call that does not convert: ${decoded.error}`);
  return Buffer.from(encodeProto(AGENT_CALL_TYPE, decoded.value));
}

function where(ctx: Context, index: number): string {
  const steps = ctx.input.steps.length;
  const at =
    index < 0 ? 'before the first step' : index >= steps ? 'the final checks' : `step ${index + 1} of ${steps}`;
  return `agent operator fuzz, cluster seed ${ctx.input.clusterSeed}, ${at}`;
}

const guard = (ctx: Context, index: number, apply: () => void) => guardStep(ctx, where(ctx, index), apply);
const checkFailure = (ctx: Context, index: number) => checkAnyFailure(ctx, where(ctx, index), 'session output stream');
const heldStreamsBroken = (ctx: Context) => heldBroken(ctx, 'session output stream');
const toggleAgent = (ctx: Context, index: number, agent: number, recover: 'reconnect' | 'cleanup') =>
  restartOrCrash(ctx, where(ctx, index), agent, recover);
const toggleLink = (ctx: Context, index: number, agent: number) => cutOrHeal(ctx, where(ctx, index), agent);
