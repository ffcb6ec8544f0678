/**
 * `clustersim chaos-merge <files..>`: the JSON lines of the shards of one
 * fault-schedule search (`clustersim chaos --shard I/N --json FILE`) joined
 * into one summary: the counts, each failing schedule with the command that
 * runs it again, and the shrunk schedules the shards wrote out. Exit code
 * 0 when every run passed, 1 when one failed or stopped, 2 when the files
 * are not the disjoint shards of one search (said in one line).
 */
import { readFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { mergeShards, type ShardOutput } from '../scenario/chaos-merge.js';

export interface ChaosMergeArgs {
  files: string[];
}

export function chaosMergeOptions(yargs: Argv): Argv<ChaosMergeArgs> {
  return yargs
    .positional('files', {
      type: 'string',
      array: true,
      demandOption: true,
      describe: 'The --json outputs of the shards, one file each',
    })
    .example(
      '$0 chaos-merge shard-*.jsonl',
      'One summary of every shard of a search',
    ) as unknown as Argv<ChaosMergeArgs>;
}

export function runChaosMerge(args: ChaosMergeArgs): void {
  const outputs: ShardOutput[] = [];
  for (const name of args.files) {
    try {
      outputs.push({ name, text: readFileSync(name, 'utf8') });
    } catch (error) {
      return refuse(`${name}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  const merged = mergeShards(outputs);
  if (!merged.ok) return refuse(merged.error);
  for (const line of merged.lines) process.stdout.write(`${line}\n`);
  process.exitCode = merged.failing > 0 ? 1 : 0;
}

function refuse(message: string): void {
  process.stderr.write(`clustersim chaos-merge: ${message}\n`);
  process.exitCode = 2;
}
