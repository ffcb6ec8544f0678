/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * function and by area (core, wire, http, fastify, undici, node internals,
 * GC), and the inclusive time of the heaviest project functions.
 *
 *   BENCH_ONLY=calls node --cpu-prof --cpu-prof-dir=prof --import tsx test/bench/run.ts
 *   npx tsx test/bench/profile-summary.ts prof/CPU.*.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';
import { num, table } from './stats.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  for (const dir of ['src/core/', 'src/wire/', 'src/http/', 'src/runtime/', 'src/client/', 'test/bench/']) {
    if (url.includes(`/${dir}`)) return dir.slice(0, -1);
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  if (url.startsWith('node:')) return 'node internals';
  return 'other';
}

function label(frame: CallFrame): string {
  const file = frame.url.replace(/^.*\/(src|test|node_modules)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

function summarise(path: string, top: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    totalUs += dt;
  });

  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    self.set(label(frame), (self.get(label(frame)) ?? 0) + us);
    areas.set(areaOf(frame), (areas.get(areaOf(frame)) ?? 0) + us);
    // Inclusive: every distinct project function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!/\/(src|test\/bench)\//.test(f.url)) continue;
      const l = label(f);
      if (!seen.has(l)) inclusive.set(l, (inclusive.get(l) ?? 0) + us), seen.add(l);
    }
  }
  const pct = (us: number) => `${num((100 * us) / totalUs, 1)}%`;
  const ranked = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => [k, num(us / 1000), pct(us)]);
  return [
    `${path}: ${num(totalUs / 1000)} ms sampled`,
    table(['area (self)', 'ms', 'share'], ranked(areas, 20)),
    '',
    table(['function (self)', 'ms', 'share'], ranked(self, top)),
    '',
    table(['project function (inclusive)', 'ms', 'share'], ranked(inclusive, top)),
  ].join('\n');
}

// `--cpu-prof` under tsx also writes a profile of the loader thread; each file given is summarised.
const args = process.argv.slice(2);
const paths = args.filter((a) => a.endsWith('.cpuprofile'));
const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 25);
if (paths.length === 0) {
  process.stderr.write('usage: profile-summary.ts <file.cpuprofile>... [top]\n');
  process.exitCode = 2;
} else {
  process.stdout.write(`${paths.map((p) => summarise(p, top)).join('\n\n')}\n`);
}
