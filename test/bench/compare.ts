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
 * OFFERS of a SUBSCRIBE, BENCH_STARTUP_RUNS (20) starts per round and side;
 * BENCH_COMPARE_ROUNDS rounds (default 5).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StartSample } from './compare-start.js';
import {
  type BuiltTree,
  buildCurrent,
  CompareError,
  currentRoot,
  prepareRefTree,
  type RefTree,
  refTreeDir,
  removeRefTree,
  resolveRef,
  stopRunningStep,
  trackChild,
} from './compare-tree.js';
import { num, percentile, progress, sortedCopy, table } from './stats.js';

export const COMPARE_PARTS = ['start'] as const;
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

const START_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'compare-start.ts');

/** One round of one side: a fresh node process starting `runs` clusters from the given build. */
function startRound(entry: string, runs: number, cwd: string): Promise<StartSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', START_SCRIPT, entry, String(runs)], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as StartSample);
      reject(new CompareError(`the start measurement of ${entry} failed (exit code ${code}):\n${err.trimEnd()}`));
    });
  });
}

interface SideFigures {
  readonly all: number[];
  readonly roundMedians: number[];
}

function addRound(figures: SideFigures, sample: readonly number[]): void {
  figures.all.push(...sample);
  figures.roundMedians.push(percentile(sortedCopy(sample), 0.5));
}

function medianOf(sample: readonly number[]): number {
  return percentile(sortedCopy(sample), 0.5);
}

function rangeText(sample: readonly number[]): string {
  const s = sortedCopy(sample);
  return `${num(s[0] ?? Number.NaN, 1)}-${num(s[s.length - 1] ?? Number.NaN, 1)}`;
}

async function comparePartStart(root: string, ref: RefTree, now: BuiltTree, refName: string): Promise<string[]> {
  const rounds = envCount('BENCH_COMPARE_ROUNDS', 5);
  const runs = envCount('BENCH_STARTUP_RUNS', 20);
  const empty = (): SideFigures => ({ all: [], roundMedians: [] });
  const figures = { ref: { resolve: empty(), offers: empty() }, now: { resolve: empty(), offers: empty() } };
  for (let round = 0; round < rounds; round++) {
    for (const side of roundOrder(round)) {
      progress(`start, round ${round + 1} of ${rounds}: ${side}, ${runs} starts`);
      const sample = await startRound(side === 'ref' ? ref.entry : now.entry, runs, root);
      addRound(figures[side].resolve, sample.resolveMs);
      addRound(figures[side].offers, sample.offersMs);
    }
  }
  const row = (name: string, key: 'resolve' | 'offers') => {
    const [r, n] = [figures.ref[key], figures.now[key]];
    return [
      name,
      num(medianOf(r.all), 1),
      num(medianOf(n.all), 1),
      ratioText(medianOf(n.all), medianOf(r.all)),
      rangeText(r.roundMedians),
      rangeText(n.roundMedians),
    ];
  };
  return [
    '',
    `start: startCluster({ port: 0, agents: 3, seed: 1, time: 'realtime' }), then a SUBSCRIBE over HTTP read to its first OFFERS;`,
    `${rounds} rounds of a fresh process per side starting ${runs} clusters, sides interleaved (ref, now; now, ref; ...);`,
    `medians of all ${num(rounds * runs)} starts of each side, and the range of the rounds' medians. Lower is better:`,
    'now / ref below 1 means now starts faster',
    table(
      ['ms, lower is better', `ref ${refName}`, 'now', 'now / ref', 'ref rounds', 'now rounds'],
      [row('startCluster() resolved', 'resolve'), row('first OFFERS, from the start', 'offers')],
    ),
  ];
}

function envCount(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new CompareError(`${name} must be a positive integer, got '${raw}'`);
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
    if (args.parts.includes('start')) out.push(...(await comparePartStart(root, ref, now, args.ref)));
    return out;
  } finally {
    stopListening();
    progress('removing the temporary work tree');
    removeRefTree(root, dir);
  }
}
