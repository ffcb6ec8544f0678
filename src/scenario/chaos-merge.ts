/**
 * Shards of one fault-schedule search joined: the JSON lines each
 * `clustersim chaos --shard I/N --json FILE` wrote, read back, checked to be
 * the N disjoint slices of one search (one scenario file, one seed, one
 * count of runs, every slice once), and summed up into one summary.
 */
import type { RunRecord, ShardRecord } from './chaos-record.js';

export interface ShardOutput {
  /** Where the lines came from, for messages. */
  readonly name: string;
  readonly text: string;
}

export type Merged =
  | { readonly ok: true; readonly lines: readonly string[]; readonly failing: number }
  | { readonly ok: false; readonly error: string };

interface Parsed {
  readonly name: string;
  readonly shard: ShardRecord;
  readonly runs: readonly RunRecord[];
}

/** One shard's output, or the one-line reason it is not one. */
function parse(output: ShardOutput): Parsed | string {
  const shards: ShardRecord[] = [];
  const runs: RunRecord[] = [];
  const lines = output.text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let record: RunRecord | ShardRecord;
    try {
      record = JSON.parse(line) as RunRecord | ShardRecord;
    } catch {
      return `${output.name}:${i + 1}: not a JSON line`;
    }
    if (record.kind === 'run') runs.push(record);
    else if (record.kind === 'shard') shards.push(record);
    else return `${output.name}:${i + 1}: neither a run nor a shard line`;
  }
  if (shards.length !== 1)
    return `${output.name}: ${shards.length} shard lines, not 1: not the whole --json output of one clustersim chaos`;
  return { name: output.name, shard: shards[0]!, runs };
}

const searchOf = (s: ShardRecord): string => {
  const count = s.shard.split('/')[1];
  return `${s.file}, seed ${s.seed}, ${s.runs} runs, ${count === '1' ? 'unsharded' : `${count} shards`}`;
};

/** Why the shards are not the disjoint slices of one search, or undefined. */
function inconsistency(parsed: readonly Parsed[]): string | undefined {
  const first = parsed[0]!;
  const count = Number(first.shard.shard.split('/')[1]);
  const seen = new Map<string, string>();
  const schedules = new Map<number, string>();
  for (const p of parsed) {
    if (searchOf(p.shard) !== searchOf(first.shard))
      return `${p.name} is of another search (${searchOf(p.shard)}) than ${first.name} (${searchOf(first.shard)})`;
    const before = seen.get(p.shard.shard);
    if (before !== undefined) return `${before} and ${p.name} are both shard ${p.shard.shard}`;
    seen.set(p.shard.shard, p.name);
    for (const r of p.runs) {
      const other = schedules.get(r.schedule);
      if (other !== undefined) return `schedule ${r.schedule} is in both ${other} and ${p.name}: the shards overlap`;
      schedules.set(r.schedule, p.name);
    }
  }
  const missing = Array.from({ length: count }, (_, i) => `${i + 1}/${count}`).filter((s) => !seen.has(s));
  if (missing.length > 0) return `shard ${missing.join(', ')} missing (of ${searchOf(first.shard)})`;
  return undefined;
}

/** The shards joined, in schedule order, as the summary's lines. */
export function mergeShards(outputs: readonly ShardOutput[]): Merged {
  const parsed: Parsed[] = [];
  for (const output of outputs) {
    const p = parse(output);
    if (typeof p === 'string') return { ok: false, error: p };
    parsed.push(p);
  }
  if (parsed.length === 0) return { ok: false, error: 'no shard outputs given' };
  const error = inconsistency(parsed);
  if (error !== undefined) return { ok: false, error };
  const runs = parsed.flatMap((p) => p.runs).sort((a, b) => a.schedule - b.schedule);
  const count = (verdict: RunRecord['verdict']) => runs.filter((r) => r.verdict === verdict).length;
  const { file, seed } = parsed[0]!.shard;
  const lines = [
    `${file}: ${runs.length} runs under random faults (seed ${seed}, ${parsed.length} shards): ${count('pass')} passed, ${count('fail')} failed, ${count('stopped')} stopped`,
  ];
  for (const r of runs.filter((r) => r.verdict !== 'pass')) {
    const why = r.verdict === 'fail' ? (r.failed?.[0] ?? 'FAIL') : `STOPPED ${r.reason ?? ''}`;
    lines.push(`  schedule ${r.schedule}: ${why}; replay: ${r.replay}`);
  }
  for (const p of [...parsed].sort((a, b) => a.shard.shard.localeCompare(b.shard.shard, 'en', { numeric: true }))) {
    const s = p.shard.shrunk;
    if (s !== undefined)
      lines.push(
        `  shard ${p.shard.shard}: schedule ${s.schedule} shrunk to ${s.out}; replay: ${s.replay}${s.report === undefined ? '' : `; report: ${s.report}`}`,
      );
  }
  return { ok: true, lines, failing: count('fail') + count('stopped') };
}
