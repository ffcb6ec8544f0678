/**
 * `clustersim replay <trace.jsonl>`: re-runs a recorded trace in the core
 * (no sockets, no wall clock) and compares the trace it writes with the
 * file entry by entry. Prints `replay: N entries, no divergence (hash H)`
 * and exits 0, or the first divergence (seq, time, the line expected and
 * the line produced) and exits 1; a file it cannot read exits 2.
 */
import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import type { Argv } from 'yargs';
import { parseTraceLine, replay, ReplayError, type ReplayResult, type TraceLine } from '../scenario/replay.js';

export interface ReplayArgs {
  trace: string;
  quiet: boolean;
  invariants: boolean;
}

export function replayOptions(y: Argv): Argv<ReplayArgs> {
  return y
    .positional('trace', {
      type: 'string',
      demandOption: true,
      describe:
        "the trace's JSON lines: GET /sim/v1/trace of a cluster that records (virtual time, or --record-trace), or a run's --trace file; - for standard input",
    })
    .option('quiet', { type: 'boolean', default: false, describe: 'no progress line on standard error' })
    .option('invariants', {
      type: 'boolean',
      default: true,
      describe:
        'check the invariants after every input; --no-invariants is faster and gives the same trace, but misses a broken invariant',
    })
    .example(
      '$0 replay run.jsonl',
      'replays run.jsonl and reports the first divergence, if any',
    ) as unknown as Argv<ReplayArgs>;
}

/** How often the progress line is written, in entries. */
const PROGRESS_EVERY = 100_000;

export async function runReplay(args: ReplayArgs): Promise<void> {
  const progress = args.quiet
    ? {}
    : {
        onProgress: (n: number) => process.stderr.write(`replay: ${n} entries, no divergence so far\r`),
        progressEvery: PROGRESS_EVERY,
      };
  const invariants = { checkInvariants: args.invariants };
  let result: ReplayResult;
  try {
    result = await replay(readTrace(args.trace), { ...progress, ...invariants });
  } catch (error) {
    if (
      !(error instanceof ReplayError) &&
      !(error instanceof SyntaxError) &&
      (error as NodeJS.ErrnoException).code === undefined
    )
      throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // A file that cannot be read is named with the reason, as every command names one; a bad one with what is wrong in it.
    const why = code === undefined ? (error as Error).message : `cannot be read (${code})`;
    process.stderr.write(`clustersim replay: ${args.trace}: ${why}\n`);
    process.exitCode = 2;
    return;
  }
  if (!args.quiet && result.entries >= PROGRESS_EVERY) process.stderr.write('\n');
  process.stdout.write(`${report(result)}\n`);
  process.exitCode = result.divergence === undefined ? 0 : 1;
}

export function report(result: ReplayResult): string {
  const d = result.divergence;
  if (d === undefined) return `replay: ${result.entries} entries, no divergence (hash ${result.hash})`;
  return [
    `replay: diverged at entry ${d.seq} (time ${d.timeMs} ms), after ${result.entries} entries that agree`,
    `  expected: ${d.expected ?? '(the file ends here)'}`,
    `  produced: ${d.produced ?? '(nothing: the replay wrote no such entry)'}`,
  ].join('\n');
}

/** The file's entries, one per non-empty line; a line that is not one stops the replay, naming it. */
async function* readTrace(file: string): AsyncIterable<TraceLine> {
  const input = file === '-' ? process.stdin : createReadStream(file, { encoding: 'utf8' });
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    const line = parseTraceLine(text);
    if (typeof line === 'string') throw new ReplayError(`line ${n}: ${line}`);
    yield line;
  }
}
