/**
 * Soak: a cluster under the load its limits are for, run by hand
 * (`npx tsx test/bench/soak.ts`; not part of `npm test` or `npm run bench`).
 *
 * It starts `clustersim up` from the sources in a child process (so that
 * its RSS is the server's alone) and, for SOAK_SECONDS (default 60), holds:
 *
 *   - SOAK_FRAMEWORKS (5,000) frameworks, each subscribed with a one-year
 *     failover timeout and then dropped: they stay registered
 *   - SOAK_STALLED (50) stalled consumers: subscribed, never reading their
 *     stream, and pumped with reconciliation answers (SOAK_RECONCILE_CALLS
 *     RECONCILEs of SOAK_RECONCILE_TASKS unknown tasks, 3 x 250 UPDATEs of
 *     800 bytes per consumer per second) so that bytes pile up; one the server
 *     cuts comes back on the same framework id, so 50 are held throughout
 *   - SOAK_IDLE (1,000) idle connections: half never send a byte, half idle
 *     after one keep-alive /health; one the server closes is opened again
 *   - one subscriber that reads: it declines every offer for 1 s and counts
 *     the OFFERS and HEARTBEATs it gets
 *
 * Every few seconds it prints the server's RSS against a ceiling: the RSS of
 * the idle cluster, plus the stream buffer budget, plus SOAK_HEADROOM_MIB
 * (default 256) for what the load costs besides the bytes buffered. On a
 * 2-core Linux machine that was about 50 MiB for the frameworks and sockets,
 * and up to 190 MiB V8 had not given back yet: freed buffers of cut streams
 * (collected only once external memory has grown by tens of MiB), heap
 * garbage of the pump (50 to 100 MiB), and the allocator's free pages. RSS
 * then held at 330 to 370 MiB for a minute; with the budget out of the way
 * (SOAK_STREAM_BUDGET_MIB=4096, whose own ceiling is that much higher) it
 * climbed to 590 MiB within 20 s, past the default ceiling (about 430 MiB),
 * on its way to 50 streams of 16 MiB each.
 *
 * It fails (exit code 1) if the RSS passes the ceiling, or if the reading
 * subscriber got no OFFERS or no HEARTBEAT in the last reporting window.
 * The cluster's limits are the defaults, except those the load needs
 * (frameworks, connections), given in CLUSTER_FLAGS.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { DEFAULT_LIMITS } from '../../src/start/cluster.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number, got ${raw}`);
  return value;
}

const SECONDS = envNumber('SOAK_SECONDS', 60);
const FRAMEWORKS = envNumber('SOAK_FRAMEWORKS', 5000);
const STALLED = envNumber('SOAK_STALLED', 50);
const IDLE = envNumber('SOAK_IDLE', 1000);
/** UPDATEs per RECONCILE, and RECONCILEs per stalled consumer per second. */
const RECONCILE_TASKS = envNumber('SOAK_RECONCILE_TASKS', 250);
const RECONCILE_CALLS = envNumber('SOAK_RECONCILE_CALLS', 3);
const ID_LENGTH = 240;
const HEADROOM_MIB = envNumber('SOAK_HEADROOM_MIB', 256);
const REPORT_EVERY_MS = 5_000;
const ONE_YEAR_SECONDS = 365 * 24 * 3600;
/** The cluster's stream buffer budget; a large one shows what the budget saves. */
const BUDGET_MIB = envNumber('SOAK_STREAM_BUDGET_MIB', DEFAULT_LIMITS.streamBufferBudgetMiB);

/** The defaults, but room for the load: every framework, every connection held at once. */
const CLUSTER_FLAGS = [
  '--agents',
  '3',
  '--heartbeat-interval',
  '5',
  '--max-frameworks',
  String(FRAMEWORKS + STALLED + 100),
  '--max-connections',
  String(IDLE + STALLED + 200),
  '--stream-buffer-budget',
  String(BUDGET_MIB),
  '--log-level',
  'warn',
];

// ---- the cluster ----

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  /** Warn lines the server logged, parsed. */
  readonly logs: Record<string, unknown>[];
}

async function startServer(): Promise<Server> {
  const args = ['--import', 'tsx', 'src/cli/main.ts', 'up', '--port', '0', ...CLUSTER_FLAGS];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let pending = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
      else if (line.trim() !== '') process.stderr.write(`server: ${line}\n`);
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const m = /master at (http:\/\/\S+)/.exec(stdout);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`clustersim up exited with ${code}`)));
  });
  return { child, url, port: Number(new URL(url).port), logs };
}

/** Resident set size of a process, in MiB (`ps` reports KiB). */
function rssMib(pid: number): number {
  const kib = Number(
    execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
      .toString()
      .trim(),
  );
  return kib / 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function getJson(url: string): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(JSON.parse(text) as Record<string, number>));
      })
      .on('error', reject);
  });
}

// ---- the load ----

const subscribeBody = (info: Record<string, unknown>): string =>
  JSON.stringify({
    type: 'SUBSCRIBE',
    subscribe: { framework_info: { user: 'soak', ...info }, suppressed_roles: ['*'] },
  });

interface Subscribed {
  readonly socket: net.Socket;
  readonly frameworkId: string;
  readonly streamId: string;
}

/**
 * SUBSCRIBE on a raw connection, reading only as far as the SUBSCRIBED
 * event; the caller then drops the connection or stops reading it.
 */
function subscribeRaw(port: number, info: Record<string, unknown>): Promise<Subscribed> {
  const body = subscribeBody(info);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /api/v1/scheduler HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (!text.startsWith('HTTP/1.1 200')) {
        if (text.includes('\r\n\r\n')) fail(new Error(`SUBSCRIBE refused: ${text.split('\r\n')[0]}`));
        return;
      }
      const streamId = /mesos-stream-id: ([^\r\n]+)/i.exec(text)?.[1];
      const frameworkId = /"framework_id":\{"value":"([^"]+)"/.exec(text)?.[1];
      if (streamId === undefined || frameworkId === undefined) return;
      socket.off('data', onData);
      resolve({ socket, frameworkId, streamId });
    };
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.on('data', onData);
    socket.on('error', fail);
  });
}

/** Runs `task` for 0..count-1, `width` at a time. */
async function inParallel(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

async function registerFrameworks(port: number): Promise<void> {
  const t0 = performance.now();
  await inParallel(FRAMEWORKS, 32, async (i) => {
    const { socket } = await subscribeRaw(port, { name: `parked-${i}`, failover_timeout: ONE_YEAR_SECONDS });
    socket.destroy();
  });
  log(`${FRAMEWORKS} frameworks subscribed and dropped in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** A consumer that never reads its stream; pumped with reconciliation answers, back on its own id when cut. */
class StalledConsumer {
  #current: Subscribed | undefined;
  #resubscribing: Promise<void> | undefined;
  cuts = 0;
  readonly #tasks: string;

  constructor(
    private readonly port: number,
    private readonly name: string,
    private readonly calls: http.Agent,
  ) {
    // Long ids (the most the master accepts) make each UPDATE about 800 bytes:
    // the buffers fill with fewer events, so less of the server's work is
    // encoding garbage that its RSS would show too.
    const pad = (text: string) => text.padEnd(ID_LENGTH, '.');
    const tasks = Array.from({ length: RECONCILE_TASKS }, (_, i) => ({
      task_id: { value: pad(`${name}-lost-${i}-`) },
      agent_id: { value: pad(`${name}-gone-`) },
    }));
    this.#tasks = JSON.stringify(tasks);
  }

  async subscribe(): Promise<void> {
    const id = this.#current === undefined ? {} : { id: { value: this.#current.frameworkId } };
    this.#current?.socket.destroy();
    const subscribed = await subscribeRaw(this.port, { name: this.name, failover_timeout: ONE_YEAR_SECONDS, ...id });
    // Never read again: the server's bytes pile up in its buffers.
    subscribed.socket.pause();
    this.#current = subscribed;
  }

  /** One RECONCILE; a 403 means the server cut the stream, so subscribe again (once, whatever else is in flight). */
  async pump(): Promise<void> {
    if (this.#resubscribing !== undefined) return this.#resubscribing;
    const current = this.#current!;
    const body = `{"type":"RECONCILE","framework_id":{"value":"${current.frameworkId}"},"reconcile":{"tasks":${this.#tasks}}}`;
    const status = await post(this.port, body, { 'mesos-stream-id': current.streamId }, this.calls);
    // An answer about a stream already replaced says nothing new.
    if (current !== this.#current || this.#resubscribing !== undefined) return;
    if (status === 403) {
      this.cuts++;
      this.#resubscribing = this.subscribe().finally(() => (this.#resubscribing = undefined));
      await this.#resubscribing;
    } else if (status !== 202) throw new Error(`RECONCILE answered ${status}`);
  }

  close(): void {
    this.#current?.socket.destroy();
  }
}

function post(port: number, body: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/v1/scheduler',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** IDLE connections held open: one the server closes is counted and opened again. */
class IdleConnections {
  readonly #open = new Set<net.Socket>();
  closedByServer = { silent: 0, keepAlive: 0 };
  #stopped = false;

  constructor(private readonly port: number) {}

  get open(): number {
    return this.#open.size;
  }

  async fill(): Promise<void> {
    await inParallel(IDLE, 50, (i) => this.#openOne(i % 2 === 0 ? 'silent' : 'keepAlive'));
  }

  #openOne(kind: 'silent' | 'keepAlive'): Promise<void> {
    return new Promise((resolve) => {
      const socket = net.connect(this.port, '127.0.0.1', () => {
        if (kind === 'keepAlive') socket.write('GET /health HTTP/1.1\r\nHost: soak\r\n\r\n');
        resolve();
      });
      socket.on('data', () => {});
      socket.on('error', () => resolve());
      this.#open.add(socket);
      socket.once('close', () => {
        this.#open.delete(socket);
        if (this.#stopped) return;
        this.closedByServer[kind]++;
        // Not at once: a listener at its cap closes a new connection straight away.
        setTimeout(() => void this.#openOne(kind), 100);
      });
    });
  }

  close(): void {
    this.#stopped = true;
    for (const socket of this.#open) socket.destroy();
  }
}

/** The subscriber that reads: declines every offer for 1 s, so offers keep coming. */
async function readingSubscriber(url: string): Promise<{ client: SchedulerClient; counts: Map<string, number> }> {
  const client = new SchedulerClient(url);
  const counts = new Map<string, number>();
  const answer = await client.subscribe({ user: 'soak', name: 'reader' });
  if (answer.status !== 200) throw new Error(`reader SUBSCRIBE answered ${answer.status}: ${answer.body}`);
  await client.next('SUBSCRIBED');
  void (async () => {
    for (;;) {
      const event = await client.next(undefined, 3_600_000).catch(() => undefined);
      if (event === undefined) return;
      counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
      if (event.type !== 'OFFERS') continue;
      const offerIds = (event.offers.offers as { id: unknown }[]).map((o) => o.id);
      void client
        .call({ type: 'DECLINE', decline: { offer_ids: offerIds, filters: { refuse_seconds: 1 } } })
        .catch(() => undefined);
    }
  })();
  return { client, counts };
}

// ---- the run ----

const t0 = performance.now();
function log(line: string): void {
  process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
}

interface Load {
  readonly server: Server;
  readonly stalled: StalledConsumer[];
  readonly idle: IdleConnections;
  readonly reader: { client: SchedulerClient; counts: Map<string, number> };
  readonly calls: http.Agent;
}

async function buildLoad(server: Server): Promise<Load> {
  const reader = await readingSubscriber(server.url);
  await registerFrameworks(server.port);
  const calls = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const stalled = Array.from({ length: STALLED }, (_, i) => new StalledConsumer(server.port, `stalled-${i}`, calls));
  await inParallel(stalled.length, 10, (i) => stalled[i]!.subscribe());
  log(`${STALLED} stalled consumers subscribed`);
  const idle = new IdleConnections(server.port);
  await idle.fill();
  log(`${idle.open} idle connections open`);
  return { server, stalled, idle, reader, calls };
}

/** Pumps the stalled consumers once a second and reports every few seconds; true if every check held. */
async function soak(load: Load, ceilingMib: number): Promise<boolean> {
  const { server, stalled, idle, reader } = load;
  const end = performance.now() + SECONDS * 1000;
  let nextReport = performance.now() + REPORT_EVERY_MS;
  let last = new Map(reader.counts);
  let peak = 0;
  let lastWindowServed = false;
  while (performance.now() < end) {
    const round = performance.now();
    await inParallel(stalled.length * RECONCILE_CALLS, 8, (i) => stalled[i % stalled.length]!.pump());
    const rss = rssMib(server.child.pid!);
    peak = Math.max(peak, rss);
    if (performance.now() >= nextReport) {
      nextReport += REPORT_EVERY_MS;
      const metrics = await getJson(`${server.url}/metrics/snapshot`);
      const delta = (type: string) => (reader.counts.get(type) ?? 0) - (last.get(type) ?? 0);
      lastWindowServed = delta('OFFERS') > 0 && delta('HEARTBEAT') > 0;
      const cuts = server.logs.filter((l) => String(l.msg).startsWith('event stream cut')).length;
      log(
        `rss ${rss.toFixed(0)} MiB (ceiling ${ceilingMib.toFixed(0)}) | frameworks ${metrics['master/frameworks_active']} active, ` +
          `${metrics['master/frameworks_inactive']} inactive | idle open ${idle.open}, closed by server ` +
          `${idle.closedByServer.silent} silent + ${idle.closedByServer.keepAlive} keep-alive | stalled streams cut ${cuts} | ` +
          `reader: ${delta('OFFERS')} OFFERS, ${delta('HEARTBEAT')} HEARTBEAT`,
      );
      last = new Map(reader.counts);
    }
    await sleep(Math.max(0, 1000 - (performance.now() - round)));
  }
  log(`peak rss ${peak.toFixed(0)} MiB, ceiling ${ceilingMib.toFixed(0)} MiB`);
  const ok = peak <= ceilingMib && lastWindowServed && !reader.client.closed;
  return ok;
}

function summary(load: Load): void {
  const cuts = load.server.logs.filter((l) => String(l.msg).startsWith('event stream cut'));
  const byBudget = cuts.filter((l) => 'budgetBytes' in l).length;
  log(
    `stream cuts logged: ${cuts.length} (${byBudget} by the ${BUDGET_MIB} MiB budget, ${cuts.length - byBudget} by the per-stream limit)`,
  );
  if (cuts[0] !== undefined) log(`first cut: ${JSON.stringify(cuts[0])}`);
  const refused = load.server.logs.filter((l) => String(l.msg).startsWith('connection refused')).length;
  log(`connection-limit log lines: ${refused}`);
  log(`reader totals: ${[...load.reader.counts].map(([type, n]) => `${n} ${type}`).join(', ')}`);
}

async function main(): Promise<void> {
  log(`soak: ${SECONDS} s, ${FRAMEWORKS} frameworks, ${STALLED} stalled consumers, ${IDLE} idle connections`);
  const server = await startServer();
  await sleep(1000);
  const baseline = rssMib(server.child.pid!);
  const ceilingMib = baseline + BUDGET_MIB + HEADROOM_MIB;
  log(
    `cluster at ${server.url} (pid ${server.child.pid}), idle rss ${baseline.toFixed(0)} MiB, flags ${CLUSTER_FLAGS.join(' ')}`,
  );
  let load: Load | undefined;
  let ok = false;
  try {
    load = await buildLoad(server);
    log(`holding the load; rss ${rssMib(server.child.pid!).toFixed(0)} MiB`);
    ok = await soak(load, ceilingMib);
    summary(load);
  } finally {
    load?.idle.close();
    for (const consumer of load?.stalled ?? []) consumer.close();
    load?.reader.client.disconnect();
    load?.calls.destroy();
    server.child.kill('SIGTERM');
  }
  log(ok ? 'soak: PASS' : 'soak: FAIL');
  process.exitCode = ok ? 0 : 1;
}

await main();
