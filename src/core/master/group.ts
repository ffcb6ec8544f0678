/**
 * Masters with a leader, as upstream runs them under ZooKeeper: N master
 * processes contend, in the order they joined; the first one up leads and
 * is the cluster's master (the network node `master`), the others stand by
 * (the HTTP layer has them redirect every request to the leader).
 *
 *   leading --crash--> down --restart--> standby (a contender again, last in line)
 *   standby --crash--> down
 *   standby --elected--> leading
 *
 * When the leader dies its process and everything it held in memory go
 * (its timers, frameworks, offers, tasks; its subscribers' streams break);
 * only its registry (registry.ts) is left. Its ZooKeeper session expires
 * `electionDelayMs` later (`--zk_session_timeout`, 10 s), and then the
 * first contender that is up is elected: a new master process with a new
 * id, built from the registry (recovery.ts). Every agent's detector learns
 * of it and the agent re-registers with what it runs; frameworks must
 * SUBSCRIBE again, with their framework id. While no master leads,
 * messages to the master are lost.
 */
import type { SimContext } from '../network/context.js';
import { TimerScope } from '../kernel/event-loop.js';
import type { Master } from './master.js';
import type { MasterOptions } from './ops.js';
import { recoverFromRegistry } from './recovery.js';
import { Registry } from './registry.js';
import { MASTER_NODE } from '../model/messages.js';
import type { Outbox } from '../network/outbox.js';
import { Rng } from '../kernel/rng.js';

/** `--zk_session_timeout`: how long a dead leader's session outlives it, and so the election after it. */
export const DEFAULT_ELECTION_DELAY_MS = 10_000;

/**
 * Why every subscriber's stream of a dead leader ends. It ends as the
 * connections of a process that exited do (upstream's leader exits when it
 * dies or loses its ZooKeeper session: `EXIT(EXIT_FAILURE) << "Lost
 * leadership... committing suicide!"`): the kernel closes them, with no
 * last chunk of the chunked body, so a client sees a broken stream (Node's
 * http: 'aborted', no 'end'; Go: unexpected EOF), never a clean end.
 */
export const LEADER_LOST = 'Master failed over';

export type SeatState = 'leading' | 'standby' | 'down';

/** One master process of the group: its place, its port and whether it runs. */
export interface MasterSeat {
  readonly index: number;
  readonly port: number;
  readonly state: SeatState;
}

interface Seat {
  readonly index: number;
  port: number;
  state: SeatState;
}

export interface MasterGroupOptions {
  readonly seed: string;
  readonly count: number;
  readonly electionDelayMs: number;
  /** Starts a master process with its context (its own timers, and streams of its own for a later leader). */
  readonly create: (ctx: SimContext, options: MasterOptions) => Master;
  /** A new leader was elected: the agents' detectors learn of it. */
  readonly elected: (master: Master) => void;
}

export class MasterGroup {
  readonly #seats: Seat[];
  /** Indices in the order they joined the election (ZooKeeper's sequence). */
  #contenders: number[];
  #leader: Master | undefined;
  /** The leader, or the last one while none leads (the read model shows it). */
  #last: Master;
  #scope: TimerScope;
  #registry = Registry.EMPTY;
  /** The dead leader's session has expired: the first contender up is elected as soon as there is one. */
  #vacant = false;
  #generation = 0;

  constructor(
    private readonly ctx: SimContext,
    private readonly masterOptions: MasterOptions,
    private readonly outbox: Outbox,
    private readonly options: MasterGroupOptions,
  ) {
    const base = masterOptions.port;
    this.#seats = Array.from({ length: Math.max(1, options.count) }, (_, index) => ({
      index,
      port: base === 0 ? 0 : base + index,
      state: index === 0 ? 'leading' : 'standby',
    }));
    this.#contenders = this.#seats.map((s) => s.index);
    this.#scope = new TimerScope(ctx.loop);
    // The first leader draws from the cluster's own streams, so that a cluster of one master replays as it always has.
    this.#leader = this.#last = options.create({ ...ctx, loop: this.#scope }, masterOptions);
    ctx.network.attach(this.#leader);
  }

  get leader(): Master | undefined {
    return this.#leader;
  }

  /** The leading master, or the one that led last while an election is on. */
  get current(): Master {
    return this.#last;
  }

  seats(): MasterSeat[] {
    return this.#seats.map((s) => ({ ...s }));
  }

  leaderIndex(): number | undefined {
    return this.#seats.find((s) => s.state === 'leading')?.index;
  }

  has(index: number): boolean {
    return Number.isInteger(index) && index >= 0 && index < this.#seats.length;
  }

  /** A master's listener is bound: the leader puts its port in its MasterInfo. */
  bindPort(index: number, port: number): void {
    const seat = this.#seats[index]!;
    seat.port = port;
    if (seat.state === 'leading') this.#leader?.bindPort(port);
  }

  /** The master process dies; a leader's death starts the way to a new election. A master down stays so. */
  crash(index: number): void {
    const seat = this.#seats[index]!;
    if (seat.state === 'down') return;
    const wasLeader = seat.state === 'leading';
    seat.state = 'down';
    this.#contenders = this.#contenders.filter((i) => i !== index);
    this.ctx.trace.append('master:crash', { index, leader: wasLeader });
    if (!wasLeader || this.#leader === undefined) return;
    const dead = this.#leader;
    this.#registry = Registry.of(dead, dead.recovery.recovered);
    this.#scope.close();
    for (const fw of dead.frameworks.values())
      if (fw.connectionId !== undefined) this.outbox.close(fw.connectionId, LEADER_LOST, true);
    dead.feed.closeAll(LEADER_LOST);
    this.ctx.network.setUp(MASTER_NODE, false);
    this.#leader = undefined;
    this.#vacant = false;
    this.ctx.loop.schedule(this.options.electionDelayMs, 'master:session-expired', () => {
      this.#vacant = true;
      this.#elect();
    });
  }

  /** A master process that was down starts again, as a contender behind the others. */
  restart(index: number): void {
    const seat = this.#seats[index]!;
    if (seat.state !== 'down') return;
    seat.state = 'standby';
    this.#contenders.push(index);
    this.ctx.trace.append('master:restart', { index });
    this.#elect();
  }

  #elect(): void {
    if (this.#leader !== undefined || !this.#vacant) return;
    const index = this.#contenders.find((i) => this.#seats[i]!.state === 'standby');
    if (index === undefined) return;
    const seat = this.#seats[index]!;
    seat.state = 'leading';
    this.#vacant = false;
    this.#generation++;
    this.#scope = new TimerScope(this.ctx.loop);
    const rng = new Rng(this.options.seed, `master-${this.#generation}`);
    const master = this.options.create(
      { ...this.ctx, rng, loop: this.#scope },
      { ...this.masterOptions, port: seat.port },
    );
    this.ctx.trace.append('master:elected', { index, masterId: master.info.id, generation: this.#generation });
    recoverFromRegistry(master, this.#registry);
    this.ctx.network.attach(master);
    this.ctx.network.setUp(MASTER_NODE, true);
    this.#leader = this.#last = master;
    this.options.elected(master);
  }
}
