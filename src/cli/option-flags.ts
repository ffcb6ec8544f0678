/**
 * `clustersim up`'s words for the library's: a StartError names the
 * options of `startCluster()` (`agentResources`, `idleTimeoutSeconds`),
 * and the command says its flags instead (`--agent-resources`,
 * `--idle-timeout`).
 */
import { StartError } from '../start/errors.js';
import { FLAG_ROWS } from '../start/option-table.js';

const FLAGS: ReadonlyMap<string, string> = new Map(FLAG_ROWS.map((row) => [row.name, `--${row.flag}`]));

/** The flag of a library option (`heartbeatIntervalSeconds` is `--heartbeat-interval`, option-table.ts); none for the library's own. */
export function flagOf(option: string): string | undefined {
  return FLAGS.get(option);
}

/** A refused start in one line: the library's reason, in terms of the flag that chose what it names. */
export function refusal(error: unknown): string {
  if (!(error instanceof StartError)) return `cannot start: ${(error as Error).message}`;
  const flag = error.option === undefined ? undefined : flagOf(error.option);
  if (flag === undefined || error.message.includes(flag)) return error.message;
  const prefix = `${error.option}: `;
  return error.message.startsWith(prefix)
    ? `${flag}: ${error.message.slice(prefix.length)}`
    : `${error.message} (${flag})`;
}
