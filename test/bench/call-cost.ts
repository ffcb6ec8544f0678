/**
 * What one scheduler call costs the core, and whether that grows with the
 * cluster: the same call mix on 3 agents and on 10,000, with the invariant
 * check after every input (the default) and without it. Each input checks
 * only the agents it touched, so a call should cost the same on both.
 *
 * The mix is one task's life plus an offer turned down, seven calls that
 * leave allocation to the allocation interval (none runs a pass over all
 * agents inline): ACCEPT launching a task that runs until killed,
 * ACKNOWLEDGE of TASK_STARTING and TASK_RUNNING, RECONCILE of that task and
 * the two before it, KILL of it, ACKNOWLEDGE of TASK_KILLED, DECLINE of
 * another offer. Only the calls are timed, each with its outbox drained.
 * Offers come back when virtual time moves past the allocation interval;
 * that pass over all agents runs untimed whenever the offers run out.
 */
import { MASTER_NODE } from '../../src/core/model/messages.js';
import type { OfferView, SchedulerCall, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';
import { CoreBench, parsed } from './core-harness.js';
import { progress } from './stats.js';

const AGENT_RESOURCES = 'cpus:1;mem:256';
const TASK_RESOURCES = 'cpus:0.1;mem:32';
/** Not a command the simulator knows, so the task runs until killed. */
const LONG_RUNNING = 'python3 -m http.server 8080';
/** Measurements on and off alternate in this many slices, so that a busy spell of the machine hits both alike. */
const SLICES = 10;
export const CALL_TYPES = ['ACCEPT', 'ACKNOWLEDGE', 'RECONCILE', 'KILL', 'DECLINE'] as const;
type CallType = (typeof CALL_TYPES)[number];

export interface CallCostResult {
  readonly agents: number;
  readonly checkInvariants: boolean;
  readonly setupSeconds: number;
  readonly calls: number;
  readonly meanUs: number;
  /** Mean microseconds per call, by call type. */
  readonly byType: ReadonlyMap<CallType, number>;
}

/** What the scheduler holds: offers to use, updates to acknowledge. */
class Holdings {
  readonly offers: OfferView[] = [];
  readonly acks: SchedulerCall[] = [];
  readonly consume = (event: SchedulerEvent): void => {
    if (event.type === 'OFFERS') this.offers.push(...event.offers);
    else if (event.type === 'UPDATE' && event.status.uuid !== undefined) {
      const { agentId, taskId, uuid } = event.status;
      this.acks.push({ type: 'ACKNOWLEDGE', agentId: agentId!, taskId, uuid });
    }
  };
}

/**
 * Agents boot together: a network rule holds their registrations for 1 ms
 * so the master takes them all in one instant with one allocation pass,
 * instead of one pass per agent (quadratic in the agent count).
 */
function build(agents: number, checkInvariants: boolean): CoreBench {
  const every = agents >= 2000 ? 2000 : undefined;
  const bench = new CoreBench({ agents: 0, checkInvariants });
  const ruleId = bench.input((c) =>
    c.addNetworkRule({ to: MASTER_NODE, types: ['REGISTER_AGENT'], action: 'delay', delayMs: 1 }),
  );
  const resources = parsed(AGENT_RESOURCES);
  for (let i = 0; i < agents; i++) {
    bench.input((c) =>
      c.addAgent({ hostname: `agent${i + 1}`, ip: '10.0.0.1', port: 5051 + i, resources, attributes: [] }),
    );
    if (every !== undefined && (i + 1) % every === 0) progress(`  ${i + 1} of ${agents} agents added`);
  }
  bench.input((c) => c.removeNetworkRule(ruleId));
  bench.input((c) => c.advance(1));
  const registered = bench.cluster.view.agentCount();
  if (registered !== agents) throw new Error(`${registered} of ${agents} agents registered`);
  return bench;
}

class Mix {
  readonly #totals = new Map<CallType, { us: number; calls: number }>(CALL_TYPES.map((t) => [t, { us: 0, calls: 0 }]));
  #taskSeq = 0;
  readonly #task = parsed(TASK_RESOURCES);

  constructor(
    private readonly bench: CoreBench,
    private readonly held: Holdings,
  ) {}

  /** Runs the mix until `us` microseconds of calls in all; when offers run out, virtual time moves to the next allocation pass. */
  runUntil(us: number): void {
    let waited = 0;
    while (this.us < us) {
      if (this.held.offers.length >= 2) {
        this.#once(this.held.offers.pop()!, this.held.offers.pop()!);
        waited = 0;
      } else if (++waited > 60) {
        throw new Error('call cost: no offers for 60 s of virtual time');
      } else {
        this.bench.input((c) => c.advance(1000));
      }
    }
  }

  reset(): void {
    for (const total of this.#totals.values()) (total.us = 0), (total.calls = 0);
  }

  get calls(): number {
    let calls = 0;
    for (const total of this.#totals.values()) calls += total.calls;
    return calls;
  }

  get us(): number {
    let us = 0;
    for (const total of this.#totals.values()) us += total.us;
    return us;
  }

  byType(): Map<CallType, number> {
    return new Map([...this.#totals].map(([type, t]) => [type, t.us / t.calls]));
  }

  #once(launchOn: OfferView, decline: OfferView): void {
    const taskId = `task-${++this.#taskSeq}`;
    const spec: TaskSpec = {
      taskId,
      name: taskId,
      agentId: launchOn.agentId,
      resources: this.#task,
      command: { shell: true, value: LONG_RUNNING, arguments: [] },
      labels: [],
    };
    const filters = { refuseMs: 0 };
    this.#timed({ type: 'ACCEPT', offerIds: [launchOn.id], operations: [{ type: 'LAUNCH', tasks: [spec] }], filters });
    this.#acknowledge(2);
    const earlier = [`task-${this.#taskSeq - 1}`, `task-${this.#taskSeq - 2}`].map((id) => ({ taskId: id }));
    this.#timed({ type: 'RECONCILE', tasks: [{ taskId, agentId: launchOn.agentId }, ...earlier] });
    this.#timed({ type: 'KILL', taskId, agentId: launchOn.agentId });
    this.#acknowledge(1);
    this.#timed({ type: 'DECLINE', offerIds: [decline.id], filters });
  }

  /** Acknowledges updates as they come (each acknowledgement releases the task's next update). */
  #acknowledge(expected: number): void {
    for (let i = 0; i < expected; i++) {
      const ack = this.held.acks.shift();
      if (ack === undefined) throw new Error(`expected ${expected} updates to acknowledge, got ${i}`);
      this.#timed(ack);
    }
  }

  #timed(call: SchedulerCall): void {
    const start = performance.now();
    this.bench.call(call);
    const total = this.#totals.get(call.type as CallType)!;
    total.us += (performance.now() - start) * 1000;
    total.calls++;
  }
}

interface Subject {
  readonly checkInvariants: boolean;
  readonly setupSeconds: number;
  readonly mix: Mix;
  readonly held: Holdings;
}

function setUp(agents: number, checkInvariants: boolean): Subject {
  const label = `call cost: ${agents} agents, invariants ${checkInvariants ? 'on' : 'off'}`;
  progress(`${label}, building`);
  const t0 = performance.now();
  const bench = build(agents, checkInvariants);
  const held = new Holdings();
  bench.subscribe(held.consume);
  const setupSeconds = (performance.now() - t0) / 1000;
  progress(`${label}, set up in ${setupSeconds.toFixed(1)} s`);
  return { checkInvariants, setupSeconds, mix: new Mix(bench, held), held };
}

/** Each cluster runs the mix for `us` more microseconds of calls, the two taking turns. */
function interleaved(subjects: readonly Subject[], us: number): void {
  const from = subjects.map((s) => s.mix.us);
  for (let slice = 1; slice <= SLICES; slice++) {
    subjects.forEach((s, i) => {
      s.mix.runUntil(from[i]! + (us * slice) / SLICES);
    });
  }
}

/**
 * Invariants on and off on clusters of `agents`: `seconds` of timed calls
 * each, after a warm-up a third as long.
 */
export function benchCallCost(agents: number, seconds: number): CallCostResult[] {
  const subjects = [setUp(agents, true), setUp(agents, false)];
  progress(`call cost: ${agents} agents, measuring ${seconds} s each, invariants on and off in turns`);
  interleaved(subjects, (seconds * 1e6) / 3);
  for (const s of subjects) s.mix.reset();
  interleaved(subjects, seconds * 1e6);
  return subjects.map(({ checkInvariants, setupSeconds, mix, held }) => {
    if (held.acks.length > 0) throw new Error(`${held.acks.length} updates left unacknowledged`);
    return {
      agents,
      checkInvariants,
      setupSeconds,
      calls: mix.calls,
      meanUs: mix.us / mix.calls,
      byType: mix.byType(),
    };
  });
}
