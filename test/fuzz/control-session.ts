/**
 * One fuzz run of the control API (`/sim/v1/`): a fresh cluster in virtual
 * time (two agents, a generated seed, its inputs recorded), the live
 * framework of the master fuzz, then the generated steps: control requests
 * alone or in bursts (faults, clock moves, runs, resets, snapshots and
 * restores, the trace and its events), scheduler and operator requests of
 * the master fuzz now and then (so that tasks run for the faults to hit),
 * and moves of virtual time.
 *
 * The control API changes the cluster on purpose, so the end is defined
 * for a cluster in any state it may leave: the invariants hold; the lasting
 * faults are undone through the control API itself (every master that is
 * down restarted, every link cut healed, every network rule removed, every
 * agent that is down restarted), each such call answered 200, 404 or 409;
 * two minutes of cluster time pass by `POST /sim/v1/advance`, and the
 * clock says so; the invariants hold again, and a new scheduler
 * subscribes to the leader and gets OFFERS.
 */
import fc from 'fast-check';
import { CALL_TYPE, token } from './calls.js';
import { LiveFramework } from './live.js';
import { CONTROL_PATHS, controlRequestSpec } from './control-requests.js';
import type { Json } from './mutate.js';
import {
  assemble,
  render,
  requestSpec,
  resolveJsonWith,
  SCHEDULER_PATHS,
  type RequestSpec,
  type TokenResolver,
} from './requests.js';
import { describe, describeRequest, FuzzFailure, settle, verdict, within, type RunOptions } from './session.js';
import {
  advance,
  checkCluster,
  freshSubscriber,
  guard,
  logOf,
  requests,
  runGuarded,
  serviceSteps,
  serviceVerdict,
  startRun,
  w,
  where,
  type ServiceRun,
  type ServiceStep,
  type Surface,
} from './service-session.js';
import { plainWire, send, type WireRequest, type WireResponse } from './transport.js';

export type ControlStep = ServiceStep | { readonly kind: 'scheduler'; readonly spec: RequestSpec };

export interface ControlRunInput {
  readonly clusterSeed: number;
  readonly steps: readonly ControlStep[];
}

// An allocation interval, an election (10 s), a heartbeat, a ping timeout, an agent's reregistration.
const advanceMs = fc.oneof(
  fc.integer({ min: 0, max: 2_000 }),
  fc.constantFrom(1_000, 5_000, 10_000, 15_000, 60_000, 600_000),
);

/** A task launched on the live framework's first offer, long-running, for the faults of tasks and executors to hit. */
const launch: fc.Arbitrary<RequestSpec> = fc.nat({ max: 99 }).map((n) => {
  const scalar = (name: string, value: number) => ({ name, type: 'SCALAR', scalar: { value } });
  const task = {
    name: 'task',
    task_id: { value: `ctl-${n}` },
    agent_id: { value: token.offerAgent(0) },
    resources: [scalar('cpus', 0.1), scalar('mem', 32)],
    command: { value: 'sleep 3600' },
  };
  const call = {
    type: 'ACCEPT',
    framework_id: { value: token.framework },
    accept: {
      offer_ids: [{ value: token.offer(0) }],
      operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }],
    },
  };
  return assemble({
    server: 0,
    method: 'POST',
    target: SCHEDULER_PATHS[0]!,
    headers: [
      [
        ['Content-Type', 'application/json'],
        ['Mesos-Stream-Id', token.stream],
      ],
    ],
    body: { kind: 'call', message: CALL_TYPE, encoding: 'json', call, json: [], proto: [], bytes: [] },
    framing: 'length',
    version: 'HTTP/1.1',
    host: 'normal',
    followUp: false,
    abort: 'no',
  });
});

export function controlRunInput(maxSteps: number): fc.Arbitrary<ControlRunInput> {
  const scheduler = fc.oneof(w(1, requestSpec), w(2, launch)).map((spec): ControlStep => ({ kind: 'scheduler', spec }));
  const step = fc.oneof(
    w(3, serviceSteps(controlRequestSpec, advanceMs, maxSteps)),
    w(1, fc.array(scheduler, { minLength: 1, maxLength: 3 })),
  );
  return fc.record({
    clusterSeed: fc.nat(),
    // Runs of control steps with a few scheduler requests between them, cut to the length of a run.
    steps: fc
      .array(step, { minLength: 1, maxLength: 4 })
      .map((parts): ControlStep[] => parts.flat().slice(0, maxSteps))
      .filter((s) => s.length > 0),
  });
}

/** What the run learnt from the answers: the snapshots taken, the links cut, the network rules added. */
interface Learnt {
  readonly snapshots: string[];
  readonly cuts: [string, string][];
  maxRule: number;
}

/** The live framework's tokens, and `@@snapshot:<i>` for the snapshots taken. */
class ControlTokens implements TokenResolver {
  constructor(
    private readonly live: LiveFramework,
    private readonly learnt: Learnt,
  ) {}

  resolveText(text: string, frameworkId?: string): string {
    const snapshots = text.replace(/@@snapshot:(\d+)/g, (_, i: string) => {
      const taken = this.learnt.snapshots;
      return taken.length === 0 ? `snapshot-${Number(i) + 1}` : taken[Number(i) % taken.length]!;
    });
    return this.live.resolveText(snapshots, frameworkId);
  }

  resolveJson(value: Json): Json {
    return resolveJsonWith(value, (text) => this.resolveText(text));
  }
}

export async function runControlOnce(input: ControlRunInput, options: RunOptions): Promise<void> {
  const run = await startRun(`control fuzz, cluster seed ${input.clusterSeed}`, input.steps.length, {
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
  });
  const live = new LiveFramework(run.running, options.timeoutMs);
  const learnt: Learnt = { snapshots: [], cuts: [], maxRule: 0 };
  const port = new URL(run.running.masterUrl).port;
  // Whether the master was down at some point of the step: a master down closes every connection but the control API's.
  let down = false;
  const masterDown = () => run.running.driver.read((view) => view.masterSeats()[0]?.state === 'down');
  const surface: Surface = {
    ports: () => [Number(port)],
    tokens: new ControlTokens(live, learnt),
    judge: (_spec, wire, res) => controlVerdict(wire, res),
    expected5xx: (_spec, status, body) => status === 503 && body === 'No leader elected',
    closeExpected: (_spec, wire) => (down || masterDown()) && !servedWhenDown(wire.target),
    seen: (_spec, wire, res) => learn(learnt, wire, res),
    kind: (spec) => `control ${spec.method} ${spec.target.split('?')[0]!.slice(0, 40)}${faultType(spec)}`,
  };
  await runGuarded(
    run,
    options,
    async () => {
      for (const [index, s] of input.steps.entries()) {
        await keepLive(run, live, index, options);
        down = masterDown();
        if (s.kind === 'advance') await advance(run, index, s.ms, options);
        else if (s.kind === 'scheduler') await schedulerRequest(run, surface, index, s.spec, options);
        else await requests(run, surface, index, s.kind === 'request' ? [s.spec] : s.specs, options);
        await settle();
        checkCluster(run, index);
      }
      live.close();
      await finalChecks(run, learnt, options);
    },
    async () => live.close(),
  );
}

/** ` <type>` of a fault's body, for the counts by kind. */
function faultType(spec: RequestSpec): string {
  const call = spec.body.kind === 'call' ? spec.body.call : undefined;
  const type = call !== null && typeof call === 'object' && !Array.isArray(call) ? call['type'] : undefined;
  return typeof type === 'string' && spec.target.includes('faults') ? ` ${type.slice(0, 20)}` : '';
}

/** What a master serves while its process is down: the control API below its prefix, `/health` and `/version` (master/leader-gate.ts). */
function servedWhenDown(target: string): boolean {
  const path = `/${target
    .split('?', 1)[0]!
    .split('/')
    .filter((p) => p !== '')
    .join('/')}`;
  return /^\/sim\/v1\/./.test(path) || ['/health', '/version', '/master/health'].includes(path);
}

/** The live framework subscribes again when its stream ended (a reset, a restore, a failover), if a leader is there to take it. */
async function keepLive(run: ServiceRun, live: LiveFramework, index: number, options: RunOptions): Promise<void> {
  if (run.running.driver.read((view) => view.leaderIndex()) === undefined) return;
  // A refusal is no fault here: a fault may have just cut the master off; the final checks subscribe for real.
  await within(
    live.ensure().catch(() => undefined),
    options.timeoutMs * 2,
    () => `${where(run, index)}: the live subscription`,
  );
}

/** A request of the master fuzz, judged as the master fuzz judges it; while no master leads, a close or `503 No leader elected` is the answer. */
async function schedulerRequest(
  run: ServiceRun,
  surface: Surface,
  index: number,
  spec: RequestSpec,
  options: RunOptions,
): Promise<void> {
  const leaderless = run.running.driver.read((view) => view.leaderIndex()) === undefined;
  const wire = render(spec, surface.tokens, surface.ports());
  options.watchdog?.note(`${where(run, index)}:\n${describeRequest(wire)}`);
  const res = await send(wire, options.timeoutMs);
  options.stats.record(spec, res);
  if (res.held !== undefined) run.held.push(res.held);
  const excused =
    leaderless &&
    (res.outcome === 'closed' || (res.status === 503 && res.body.toString('utf8') === 'No leader elected'));
  const broken = excused ? undefined : verdict(spec, wire, res);
  if (broken !== undefined) {
    const kind =
      res.outcome === 'timeout' || res.followUp === 'timeout'
        ? 'hang'
        : (res.status ?? 0) >= 500
          ? 'unexpected 5xx'
          : 'other';
    throw new FuzzFailure(`${where(run, index)}: ${broken}\n${describe(wire, res)}${logOf(run)}`, kind);
  }
}

/** The control API's own rules: a JSON object in a 200 of a call, a stream in a 200 of the trace or its events. */
export function controlVerdict(wire: WireRequest, res: WireResponse): string | undefined {
  const status = res.status ?? 0;
  if (status >= 200 && status < 300 && status !== 200) return `answered ${status}`;
  if (status !== 200 || wire.method === 'HEAD') return undefined;
  // The master routes a path below an endpoint's to the endpoint, as upstream's does; empty segments count for nothing.
  const [sim, v1, route] = wire.target
    .split('?', 1)[0]!
    .split('/')
    .filter((p) => p !== '');
  if (sim !== 'sim' || v1 !== 'v1') return `answered 200 to a path the control API does not serve`;
  if (route === undefined || !Object.hasOwn(CONTROL_PATHS, route))
    return `answered 200 to a path the control API does not serve`;
  if (route === 'trace' || route === 'events')
    return res.stream ? undefined : `a 200 of /sim/v1/${route} without a stream`;
  if (!/^application\/json\b/.test(res.headers['content-type'] ?? ''))
    return `a 200 with Content-Type ${res.headers['content-type']}, not application/json`;
  try {
    const value: unknown = JSON.parse(res.body.toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return 'a 200 whose body is not a JSON object';
  } catch {
    return 'a 200 whose body is not JSON';
  }
  return undefined;
}

/** Snapshot ids, links cut and network rules, from the calls the control API took. */
function learn(learnt: Learnt, wire: WireRequest, res: WireResponse): void {
  if (res.status !== 200 || wire.method !== 'POST') return;
  let answer: Record<string, unknown>;
  let body: Record<string, unknown>;
  try {
    answer = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
    body = JSON.parse(wire.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return;
  }
  if (typeof answer['snapshot_id'] === 'string' && !learnt.snapshots.includes(answer['snapshot_id']))
    learnt.snapshots.push(answer['snapshot_id']);
  // A rule added has the next id; a removal echoes whatever id it was given.
  if (answer['type'] === 'network_rule' && typeof answer['rule_id'] === 'number')
    learnt.maxRule = Math.max(learnt.maxRule, answer['rule_id']);
  if (answer['type'] === 'partition') {
    const nodes = Array.isArray(body['nodes']) ? body['nodes'] : [body['agent_id'], 'master'];
    if (nodes.every((n): n is string => typeof n === 'string')) learnt.cuts.push([nodes[0]!, nodes[1]!]);
  }
}

/** Sends a control call as an ordinary client would, and judges the answer: one of `allowed`, and by every rule of the API. */
async function control(
  run: ServiceRun,
  path: string,
  call: object,
  allowed: readonly number[],
  options: RunOptions,
): Promise<WireResponse> {
  const port = Number(new URL(run.running.masterUrl).port);
  const body = Buffer.from(path === 'clock' ? '' : JSON.stringify(call));
  const wire = plainWire(
    port,
    path === 'clock' ? 'GET' : 'POST',
    `/sim/v1/${path}`,
    [
      ['Host', `127.0.0.1:${port}`],
      ['Content-Type', 'application/json'],
    ],
    body,
  );
  options.watchdog?.note(`${where(run, run.steps)}:\n${describeRequest(wire)}`);
  const res = await send(wire, options.timeoutMs);
  const broken =
    serviceVerdict(wire, res, () => false) ??
    controlVerdict(wire, res) ??
    (allowed.includes(res.status ?? 0) ? undefined : `answered ${res.status}, not ${allowed.join(' or ')}`);
  if (broken !== undefined) {
    throw new FuzzFailure(
      `${where(run, run.steps)}: undoing the faults: ${broken}\n${describe(wire, res)}${logOf(run)}`,
      res.outcome === 'timeout' ? 'hang' : 'other',
    );
  }
  checkCluster(run, run.steps);
  return res;
}

const UNDONE = [200, 404, 409];

async function finalChecks(run: ServiceRun, learnt: Learnt, options: RunOptions): Promise<void> {
  const end = run.steps;
  const { driver, agents } = run.running;
  options.watchdog?.note(where(run, end));
  guard(run, end, () => driver.input((c) => c.checkAllInvariants()));
  for (const socket of run.held.splice(0)) socket.destroy();
  await settle();
  for (const seat of driver.read((view) => view.masterSeats())) {
    if (seat.state === 'down')
      await control(run, 'faults', { type: 'restart_master', master: seat.index }, UNDONE, options);
  }
  for (const [a, b] of learnt.cuts)
    await control(run, 'faults', { type: 'heal', nodes: [a, b] }, [...UNDONE, 400], options);
  for (const { id } of agents) await control(run, 'faults', { type: 'heal', agent_id: id }, UNDONE, options);
  for (let rule = 1; rule <= learnt.maxRule; rule++)
    await control(run, 'faults', { type: 'remove_network_rule', rule_id: rule }, UNDONE, options);
  for (const { id } of agents) {
    if (driver.read((view) => view.agentProcessState(id)) === 'crashed')
      await control(run, 'faults', { type: 'restart_agent', agent_id: id }, UNDONE, options);
  }
  const before = clockOf(await control(run, 'clock', {}, [200], options));
  for (let i = 0; i < 2; i++) await control(run, 'advance', { ms: 60_000 }, [200], options);
  const after = clockOf(await control(run, 'clock', {}, [200], options));
  if (after < before + 120_000)
    throw new FuzzFailure(
      `${where(run, end)}: two minutes advanced, and the clock went from ${before} to ${after} ms${logOf(run)}`,
    );
  guard(run, end, () => driver.input((c) => c.checkAllInvariants()));
  if (driver.read((view) => view.leaderIndex()) === undefined)
    throw new FuzzFailure(`${where(run, end)}: no master leads after every master was restarted${logOf(run)}`);
  await freshSubscriber(run, options);
}

function clockOf(res: WireResponse): number {
  return Number((JSON.parse(res.body.toString('utf8')) as { time_ms: unknown }).time_ms);
}
