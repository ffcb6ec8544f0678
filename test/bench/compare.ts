/**
 * `npm run bench -- compare <git-ref> [part...]`: the same figures measured
 * on the current work tree ("now") and on an earlier commit ("ref") in one
 * run, interleaved, with the ratio of each. Both sides are measured from
 * their built `dist/index.js`, each round in a fresh process per side, so
 * that both start cold, as a test does, and share the machine's load alike.
 * Rounds alternate the order (ref, now; now, ref; ...) so a drift in the
 * machine's load weighs on both sides alike.
 *
 * Parts: start (the default): startCluster() of 3 agents and the first
 * OFFERS of a SUBSCRIBE, BENCH_STARTUP_RUNS (20) starts per round and side,
 * BENCH_COMPARE_ROUNDS rounds (default 5). calls: DECLINE/ACCEPT calls/s and
 * their ratio to a bare fastify route, BENCH_COMPARE_CALLS_ROUNDS rounds
 * (default 3) of BENCH_SECONDS after BENCH_WARMUP_SECONDS with
 * BENCH_CONNECTIONS connections, as the calls part of the bench.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type BuiltTree,
  buildCurrent,
  CompareError,
  currentRoot,
  prepareRefTree,
  refTreeDir,
  removeRefTree,
  resolveRef,
  stopRunningStep,
  trackChild,
} from './compare-tree.js';
import { num, percentile, progress, sortedCopy, table } from './stats.js';

export const COMPARE_PARTS = ['start', 'calls'] as const;
export type ComparePart = (typeof COMPARE_PARTS)[number];

export interface CompareArgs {
  readonly ref: string;
  readonly parts: readonly ComparePart[];
}

const USAGE = `usage: npm run bench -- compare <git-ref> [${COMPARE_PARTS.join('|')}...]`;

/** The ref and the parts (start when none is named) from the words after `compare`. */
export function parseCompareArgs(words: readonly string[]): CompareArgs {
  const [ref, ...named] = words.flatMap((w) => w.split(',')).filter((w) => w.trim() !== '');
  if (ref === undefined) throw new CompareError(`compare needs a git ref; ${USAGE}`);
  const unknown = named.filter((n) => !(COMPARE_PARTS as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new CompareError(`unknown compare part(s) ${unknown.join(', ')}; expected ${COMPARE_PARTS.join(', ')}`);
  const parts = named.length === 0 ? ['start' as const] : COMPARE_PARTS.filter((p) => named.includes(p));
  return { ref, parts };
}

/** now / ref as `1.23x`, '-' when either is missing or the reference is zero. */
export function ratioText(now: number, ref: number): string {
  if (!Number.isFinite(now) || !Number.isFinite(ref) || ref === 0) return '-';
  return `${num(now / ref, 2)}x`;
}

type Side = 'ref' | 'now';
/** The order of the sides in each round: ref first in even rounds, now first in odd ones. */
export function roundOrder(round: number): readonly [Side, Side] {
  return round % 2 === 0 ? ['ref', 'now'] : ['now', 'ref'];
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** One round of one side: a fresh node process running `script`, whose last stdout line is its figures as JSON. */
function runSide(script: string, args: readonly string[], cwd: string): Promise<Record<string, number[]>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, script), ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    trackChild(child);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Record<string, number[]>);
      reject(new CompareError(`${script} ${args.join(' ')} failed (exit code ${code}; its errors above)`));
    });
  });
}

/** A figure of a part: the key of its values in a side's JSON, how it is printed, which way is better. */
interface Figure {
  readonly key: string;
  readonly name: string;
  readonly better: 'lower' | 'higher';
  readonly decimals: number;
}

/** Each side's values of each figure: all of them, and each round's median. */
type Collected = Record<Side, Map<string, { all: number[]; roundMedians: number[] }>>;

async function interleave(
  part: string,
  rounds: number,
  measure: (side: Side) => Promise<Record<string, number[]>>,
): Promise<Collected> {
  const collected: Collected = { ref: new Map(), now: new Map() };
  for (let round = 0; round < rounds; round++) {
    for (const side of roundOrder(round)) {
      progress(`${part}, round ${round + 1} of ${rounds}: ${side}`);
      for (const [key, values] of Object.entries(await measure(side))) {
        const figure = collected[side].get(key) ?? { all: [], roundMedians: [] };
        figure.all.push(...values);
        figure.roundMedians.push(medianOf(values));
        collected[side].set(key, figure);
      }
    }
  }
  return collected;
}

function plural(count: number, noun: string): string {
  return `${num(count)} ${noun}${count === 1 ? '' : 's'}`;
}

function medianOf(sample: readonly number[]): number {
  return percentile(sortedCopy(sample), 0.5);
}

function rangeText(sample: readonly number[], decimals: number): string {
  const s = sortedCopy(sample);
  return `${num(s[0] ?? Number.NaN, decimals)}-${num(s[s.length - 1] ?? Number.NaN, decimals)}`;
}

/** Medians of each side over all its values, their ratio, and the range of each side's round medians. */
function compareTable(figures: readonly Figure[], collected: Collected, refName: string): string {
  const rows = figures.map(({ key, name, better, decimals }) => {
    const [r, n] = [collected.ref.get(key), collected.now.get(key)];
    const [refMedian, nowMedian] = [medianOf(r?.all ?? []), medianOf(n?.all ?? [])];
    return [
      name,
      num(refMedian, decimals),
      num(nowMedian, decimals),
      ratioText(nowMedian, refMedian),
      better,
      rangeText(r?.roundMedians ?? [], decimals),
      rangeText(n?.roundMedians ?? [], decimals),
    ];
  });
  return table(['figure', `ref ${refName}`, 'now', 'now / ref', 'better', 'ref rounds', 'now rounds'], rows);
}

const START_FIGURES: readonly Figure[] = [
  { key: 'resolveMs', name: 'startCluster() resolved, ms', better: 'lower', decimals: 1 },
  { key: 'offersMs', name: 'first OFFERS from the start, ms', better: 'lower', decimals: 1 },
];

async function comparePartStart(root: string, sides: Record<Side, BuiltTree>, refName: string): Promise<string[]> {
  const rounds = envNumber('BENCH_COMPARE_ROUNDS', 5, true);
  const runs = envNumber('BENCH_STARTUP_RUNS', 20, true);
  const collected = await interleave('start', rounds, (side) =>
    runSide('compare-start.ts', [sides[side].entry, String(runs)], root),
  );
  return [
    '',
    `start: startCluster({ port: 0, agents: 3, seed: 1, time: 'realtime' }), then a SUBSCRIBE over HTTP read to its`,
    `first OFFERS; ${plural(rounds, 'round')} of a fresh process per side starting ${plural(runs, 'cluster')}; medians of all ${num(rounds * runs)} starts`,
    "of each side, and the range of the rounds' medians",
    compareTable(START_FIGURES, collected, refName),
  ];
}

const CALLS_FIGURES: readonly Figure[] = [
  { key: 'clusterCallsPerSecond', name: 'clustersim DECLINE/ACCEPT, calls/s', better: 'higher', decimals: 0 },
  { key: 'bareCallsPerSecond', name: 'bare fastify route, calls/s', better: 'higher', decimals: 0 },
  { key: 'ratio', name: 'ratio clustersim / bare, by calls/s', better: 'higher', decimals: 2 },
  { key: 'clusterCpuUsPerCall', name: 'clustersim server thread, cpu us/call', better: 'lower', decimals: 0 },
];

async function comparePartCalls(root: string, sides: Record<Side, BuiltTree>, refName: string): Promise<string[]> {
  const rounds = envNumber('BENCH_COMPARE_CALLS_ROUNDS', 3, true);
  const seconds = envNumber('BENCH_SECONDS', 3, false);
  const warmupSeconds = envNumber('BENCH_WARMUP_SECONDS', 2, false);
  const connections = envNumber('BENCH_CONNECTIONS', 12, true);
  const args = [warmupSeconds * 1000, seconds * 1000, connections].map(String);
  const collected = await interleave('calls', rounds, (side) =>
    runSide('compare-calls.ts', [sides[side].entry, ...args], root),
  );
  return [
    '',
    `calls: DECLINE/ACCEPT on 3 agents, then the bare fastify route, ${connections} keep-alive connections, ${seconds} s after`,
    `${warmupSeconds} s warm-up each (npm run bench -- calls), the server on a worker thread; ${plural(rounds, 'round')} of a fresh`,
    'process per side; medians of the rounds, and their range',
    compareTable(CALLS_FIGURES, collected, refName),
  ];
}

function envNumber(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!(value > 0) || (integer && !Number.isInteger(value)))
    throw new CompareError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  return value;
}

/** Removes the temporary tree on Ctrl-C or a termination signal too, then exits as the signal would have. */
function onSignalsRemove(root: string, dir: string): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return; // the terminal and tsx's relay both deliver Ctrl-C
    stopping = true;
    progress(`${signal}: removing the temporary work tree`);
    void stopRunningStep().then(() => {
      removeRefTree(root, dir);
      process.exit(128 + (os.constants.signals[signal] ?? 1));
    });
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.off(s, handler);
  };
}

/** Runs the comparison and returns the lines for stdout. */
export async function runCompare(words: readonly string[]): Promise<string[]> {
  const args = parseCompareArgs(words);
  const root = currentRoot();
  resolveRef(root, args.ref); // fails before anything is built when the ref does not exist
  const dir = refTreeDir();
  const stopListening = onSignalsRemove(root, dir);
  try {
    const ref = await prepareRefTree(root, args.ref, dir);
    const now = await buildCurrent(root);
    const head = resolveRef(root, 'HEAD').commit.slice(0, 7);
    const cpus = os.cpus();
    const out = [
      `clustersim bench compare: node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${os.platform()}-${os.arch()}`,
      `ref: ${args.ref}${ref.commit.startsWith(args.ref) ? '' : ` = ${ref.commit.slice(0, 7)}`} '${ref.subject}' (dependencies: ${ref.install})`,
      `now: the current work tree at ${head}, uncommitted changes included; each side built with its own build script`,
    ];
    const sides = { ref, now };
    if (args.parts.includes('start')) out.push(...(await comparePartStart(root, sides, args.ref)));
    if (args.parts.includes('calls')) out.push(...(await comparePartCalls(root, sides, args.ref)));
    return out;
  } finally {
    stopListening();
    progress('removing the temporary work tree');
    removeRefTree(root, dir);
  }
}
