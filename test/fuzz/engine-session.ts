/**
 * One container engine fuzz run: a fresh cluster on 127.0.0.1 (two agents,
 * virtual time, a generated seed), a framework running long plain and
 * DOCKER tasks on both (`task-host.ts`), then the generated steps:
 * requests to the engine's Unix socket (`engine-requests.ts`), one at a
 * time or in bursts; exec starts, their streams written to, half-closed,
 * read as time moves, held or dropped; whole execs as a client runs them
 * (create, start, inspect); moves of virtual time; agents crashed and
 * restarted; tasks killed and launched. Every answer is judged:
 *
 *   every request   answered (but one whose declared body never comes, or
 *                   which the client gave up on), 200, 201, 400, 404 or 409,
 *                   413 or 431 past a limit, 408 only for a body that never
 *                   comes, never a 5xx; the process stays up
 *   JSON answers    JSON; an error's is `{"message": <one line>}`; a 201's
 *                   `{"Id": <64 hex digits>}`; an inspect's `Running` a
 *                   boolean and `ExitCode` null or a number
 *   a start         200 and the exec's stream (multiplexed frames of stdout
 *                   and stderr without a terminal, each with its 8-byte
 *                   head, raw with one), 404 or 409 with a JSON message
 *
 * At the end the invariants hold, the engine still answers its ping, a new
 * exec runs `echo` to its end and inspects with ExitCode 0, and a fresh
 * SUBSCRIBE still gets offers.
 */
import net from 'node:net';
import fc from 'fast-check';
import type { ClusterFailure } from '../../src/runtime/driver.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import {
  checkFailure as checkAnyFailure,
  dropStreams,
  guardStep,
  logOf,
  toggleAgent as restartOrCrash,
} from './cluster-faults.js';
import {
  engineBodyBytes,
  engineRequestSpec,
  execCycle,
  renderEngineRequest,
  startSpec,
  type EngineRequestSpec,
  type StartSpec,
} from './engine-requests.js';
import type { Json } from './mutate.js';
import {
  closeCluster,
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
import { TaskHost } from './task-host.js';
import { send, type WireRequest, type WireResponse } from './transport.js';
import { bodyNeverComes, engineVerdict, ExecStream } from './engine-judge.js';

type ExecCycle = typeof execCycle extends fc.Arbitrary<infer T> ? T : never;

export type EngineStep =
  | { readonly kind: 'request'; readonly spec: EngineRequestSpec }
  | { readonly kind: 'burst'; readonly specs: readonly EngineRequestSpec[] }
  | { readonly kind: 'start'; readonly spec: StartSpec }
  | { readonly kind: 'exec'; readonly cycle: ExecCycle }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'release' }
  | { readonly kind: 'agent'; readonly agent: number; readonly recover: 'reconnect' | 'cleanup' }
  | { readonly kind: 'launch' }
  | { readonly kind: 'kill' };

export interface EngineRunInput {
  readonly clusterSeed: number;
  readonly steps: readonly EngineStep[];
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const step: fc.Arbitrary<EngineStep> = fc.oneof(
  w(
    20,
    engineRequestSpec.map((spec): EngineStep => ({ kind: 'request', spec })),
  ),
  w(
    2,
    fc.array(engineRequestSpec, { minLength: 2, maxLength: 5 }).map((specs): EngineStep => ({ kind: 'burst', specs })),
  ),
  w(
    5,
    startSpec.map((spec): EngineStep => ({ kind: 'start', spec })),
  ),
  w(
    5,
    execCycle.map((cycle): EngineStep => ({ kind: 'exec', cycle })),
  ),
  w(
    3,
    fc
      .oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(5_000, 60_000))
      .map((ms): EngineStep => ({ kind: 'advance', ms })),
  ),
  w(1, fc.constant<EngineStep>({ kind: 'release' })),
  w(
    1,
    fc.record({
      kind: fc.constant('agent' as const),
      agent: fc.nat({ max: 1 }),
      recover: fc.constantFrom('reconnect' as const, 'cleanup' as const),
    }),
  ),
  w(1, fc.constant<EngineStep>({ kind: 'launch' })),
  w(1, fc.constant<EngineStep>({ kind: 'kill' })),
);

export function engineRunInput(maxSteps: number): fc.Arbitrary<EngineRunInput> {
  return fc.record({
    clusterSeed: fc.nat(),
    steps: fc.array(step, { minLength: 1, maxLength: maxSteps, size: 'max' }),
  });
}

interface Context {
  readonly input: EngineRunInput;
  readonly running: RunningCluster;
  readonly host: TaskHost;
  readonly socketPath: string;
  readonly logLines: string[];
  readonly seen: { failure?: ClusterFailure };
  /** Exec streams kept open; `check` is unused (they are no event streams). */
  readonly held: { readonly socket: net.Socket; readonly check: undefined; readonly exec: ExecStream }[];
  readonly cut: Set<string>;
}

export async function runEngineOnce(input: EngineRunInput, options: RunOptions): Promise<void> {
  const { logger, lines } = errorLog();
  const seen: Context['seen'] = {};
  const start = startCluster({
    port: 0,
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
    logger,
    onFailure: (f) => (seen.failure = f),
  });
  const running = await within(start, 10_000, () => `cluster seed ${input.clusterSeed}: starting the cluster`);
  const host = new TaskHost(running, options.timeoutMs);
  const ctx: Context = {
    input,
    running,
    host,
    socketPath: running.engineSocket!,
    logLines: lines,
    seen,
    held: [],
    cut: new Set(),
  };
  options.stats.runs++;
  const run = async () => {
    await host.begin((ms) => guard(ctx, -1, () => running.advance(ms)), where(ctx, -1));
    for (const [index, s] of input.steps.entries()) await runStep(ctx, index, s, options);
    await finalChecks(ctx, options);
  };
  await guardedRun(options, run, async (failed) => {
    host.close();
    dropStreams(ctx.held.splice(0), options);
    await closeCluster(running, failed, () => where(ctx, input.steps.length), options);
  });
}

async function runStep(ctx: Context, index: number, s: EngineStep, options: RunOptions): Promise<void> {
  options.watchdog?.note(`${where(ctx, index)}: ${JSON.stringify(s).slice(0, 4_000)}`);
  switch (s.kind) {
    case 'advance':
      guard(ctx, index, () => ctx.running.advance(s.ms));
      break;
    case 'release':
      dropStreams(ctx.held.splice(0), options);
      break;
    case 'agent':
      restartOrCrash(ctx, where(ctx, index), s.agent, s.recover);
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
    case 'burst': {
      const specs = s.kind === 'request' ? [s.spec] : s.specs;
      const wires = specs.map((spec) => renderEngineRequest(spec, ctx.socketPath, ctx.host.resolver(0)));
      options.watchdog?.note(`${where(ctx, index)}:\n${wires.map(describeRequest).join('\n')}`);
      // A request whose declared body never comes has no answer to wait for.
      const answers = await Promise.all(
        wires.map((wire) => send(wire, bodyNeverComes(wire) ? 200 : options.timeoutMs)),
      );
      answers.forEach((res, i) => {
        judge(ctx, index, wires[i]!, res, options);
      });
      break;
    }
    case 'start':
      await startExec(ctx, index, s.spec, options);
      break;
    case 'exec':
      await runExec(ctx, index, s.cycle, options);
      break;
  }
  await settle();
  checkFailure(ctx, index);
}

function judge(ctx: Context, index: number, wire: WireRequest, res: WireResponse, options: RunOptions): void {
  options.stats.recordAs(
    `engine ${wire.method.slice(0, 10)} ${wire.target
      .split('?')[0]!
      .replace(/[0-9a-f]{12,64}/g, '<id>')
      .slice(0, 50)}`,
    res,
  );
  const broken = engineVerdict(wire, res);
  if (res.status === 201) {
    const id = (JSON.parse(res.body.toString('utf8')) as { Id?: string }).Id;
    if (typeof id === 'string') ctx.host.execs.push(id);
  }
  if (broken === undefined) return;
  const kind: FailureKind =
    res.outcome === 'timeout' || res.followUp === 'timeout'
      ? 'hang'
      : (res.status ?? 0) >= 500
        ? 'unexpected 5xx'
        : 'other';
  throw new FuzzFailure(`${where(ctx, index)}: ${broken}\n${describe(wire, res)}${logOf(ctx)}`, kind);
}

/** POST /exec/{id}/start on a connection of its own: the head judged, then the stream read while time moves. */
async function startExec(ctx: Context, index: number, spec: StartSpec, options: RunOptions): Promise<ExecStream> {
  const tokens = ctx.host.resolver(0);
  const body = engineBodyBytes(spec.body, tokens);
  const target = tokens.resolveText(`${spec.prefix}/exec/${spec.exec}/start`);
  const head = `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const socket = net.connect(ctx.socketPath);
  const exec = new ExecStream(socket);
  socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body, Buffer.from(spec.input, 'utf8')]));
  if (spec.end) socket.end();
  const what = () => `${where(ctx, index)}: POST ${target} ${JSON.stringify(body.toString('utf8').slice(0, 200))}`;
  try {
    await within(exec.head, options.timeoutMs, what);
    // The exec runs in cluster time: some of it, its output read as it comes.
    for (let i = 0; i < 5 && !exec.closed; i++) {
      guard(ctx, index, () => ctx.running.advance(1_000));
      await settle();
    }
  } catch (error) {
    socket.destroy();
    throw error;
  }
  options.stats.cases++;
  const problem = exec.problem();
  if (problem !== undefined) {
    socket.destroy();
    throw new FuzzFailure(`${what()}: ${problem}${logOf(ctx)}`);
  }
  if (spec.hold && !exec.closed) ctx.held.push({ socket, check: undefined, exec });
  else socket.destroy();
  return exec;
}

/** A whole exec, as a client runs one: create, start (input, half-close), then inspect until it has ended. */
async function runExec(ctx: Context, index: number, cycle: ExecCycle, options: RunOptions): Promise<void> {
  const create = request(ctx, 'POST', `/containers/${cycle.container}/exec`, {
    ...(cycle.create as object),
    Tty: cycle.tty,
    AttachStdin: true,
  });
  const created = await send(create, options.timeoutMs);
  judge(ctx, index, create, created, options);
  if (created.status !== 201) return;
  const id = (JSON.parse(created.body.toString('utf8')) as { Id: string }).Id;
  const exec = await startExec(
    ctx,
    index,
    {
      exec: id,
      prefix: '/v1.43',
      body: { kind: 'json', value: { Detach: false, Tty: cycle.tty }, json: [], bytes: [] },
      input: cycle.input,
      end: cycle.end,
      hold: false,
    },
    options,
  );
  const inspect = request(ctx, 'GET', `/exec/${id}/json`);
  const inspected = await send(inspect, options.timeoutMs);
  judge(ctx, index, inspect, inspected, options);
  const state = JSON.parse(inspected.body.toString('utf8')) as { Running?: boolean; ExitCode?: number | null };
  // An exec whose stream closed has ended: its exit code is known by then, as the agent's helper expects.
  if (exec.closed && exec.started && typeof state.ExitCode !== 'number') {
    throw new FuzzFailure(
      `${where(ctx, index)}: an exec whose stream closed inspects as ${inspected.body.toString('utf8')}${logOf(ctx)}`,
    );
  }
}

function request(ctx: Context, method: string, path: string, body?: Json | object): WireRequest {
  const payload =
    body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(ctx.host.resolver(0).resolveJson(body as Json)));
  return {
    port: 0,
    socketPath: ctx.socketPath,
    method,
    target: ctx.host.resolver(0).resolveText(path),
    version: 'HTTP/1.1',
    headers: [
      ['Host', 'localhost'],
      ...(body === undefined ? [] : ([['Content-Type', 'application/json']] as [string, string][])),
    ],
    body: payload,
    framing: 'length',
    followUp: false,
    hold: false,
    abort: 'no',
    operator: false,
  };
}

/** The end: invariants; the engine answers; a new exec runs to its end with ExitCode 0; a fresh SUBSCRIBE gets offers. */
async function finalChecks(ctx: Context, options: RunOptions): Promise<void> {
  const end = ctx.input.steps.length;
  options.watchdog?.note(`${where(ctx, end)}`);
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  dropStreams(ctx.held.splice(0), options);
  for (const [agent, { id }] of ctx.running.agents.entries()) {
    if (ctx.running.driver.read((view) => view.agentNode(id)?.state === 'crashed'))
      restartOrCrash(ctx, where(ctx, end), agent, 'reconnect');
  }
  for (let i = 0; i < 3; i++) {
    guard(ctx, end, () => ctx.running.advance(60_000));
    await settle();
  }
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
  const fail = (what: string, kind?: FailureKind) => new FuzzFailure(`${where(ctx, end)}: ${what}${logOf(ctx)}`, kind);
  const ping = await send(request(ctx, 'GET', '/_ping'), options.timeoutMs);
  if (ping.status !== 200 || ping.body.toString('utf8') !== 'OK')
    throw fail(`GET /_ping afterwards got ${ping.outcome} ${ping.status ?? ''}`);
  await within(
    anExecRuns(ctx, options, fail),
    options.timeoutMs * 3,
    () => `${where(ctx, end)}: a new exec afterwards`,
  );
  await ctx.host.declineAll();
  const client = await freshSubscription(ctx.running, {}, options.timeoutMs, fail);
  client.disconnect();
  guard(ctx, end, () => ctx.running.driver.input((c) => c.checkAllInvariants()));
  checkFailure(ctx, end);
}

async function anExecRuns(ctx: Context, options: RunOptions, fail: (what: string) => FuzzFailure): Promise<void> {
  const end = ctx.input.steps.length;
  if (!(await ctx.host.launch((ms) => guard(ctx, end, () => ctx.running.advance(ms)))))
    throw fail('a new exec afterwards: no offer came');
  const name = ctx.running.driver.read((view) => view.engineContainers()[0]?.name);
  if (name === undefined) throw fail('a new exec afterwards: no DOCKER task runs');
  const created = await send(
    request(ctx, 'POST', `/containers/${name}/exec`, { Cmd: ['sh', '-c', 'echo after'], AttachStdout: true }),
    options.timeoutMs,
  );
  if (created.status !== 201)
    throw fail(`a new exec afterwards: create got ${created.status} ${created.body.toString('utf8')}`);
  const id = (JSON.parse(created.body.toString('utf8')) as { Id: string }).Id;
  const exec = await startExec(
    ctx,
    end,
    {
      exec: id,
      prefix: '',
      body: { kind: 'json', value: { Detach: false }, json: [], bytes: [] },
      input: '',
      end: true,
      hold: false,
    },
    options,
  );
  if (!exec.stdout().includes('after'))
    throw fail(`a new exec afterwards: its output was ${JSON.stringify(exec.stdout())}`);
  const inspected = await send(request(ctx, 'GET', `/exec/${id}/json`), options.timeoutMs);
  if (JSON.parse(inspected.body.toString('utf8')).ExitCode !== 0)
    throw fail(`a new exec afterwards: inspect got ${inspected.body.toString('utf8')}`);
}

const guard = (ctx: Context, index: number, apply: () => void) => guardStep(ctx, where(ctx, index), apply);
const checkFailure = (ctx: Context, index: number) => checkAnyFailure(ctx, where(ctx, index), 'exec stream');

function where(ctx: Context, index: number): string {
  const steps = ctx.input.steps.length;
  const at =
    index < 0 ? 'before the first step' : index >= steps ? 'the final checks' : `step ${index + 1} of ${steps}`;
  return `engine fuzz, cluster seed ${ctx.input.clusterSeed}, ${at}`;
}
