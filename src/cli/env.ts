/**
 * Flags from the environment: `CLUSTERSIM_AGENTS=3` is `--agents 3`,
 * `CLUSTERSIM_AGENT_PORT=31000` is `--agent-port 31000` (the name after the
 * prefix, `_` as `-`, any case), for every flag of every command; a flag on
 * the command line wins. A variable that names no flag of the command run
 * is ignored rather than refused as an unknown flag would be: another
 * command's variable (`CLUSTERSIM_CONFIG` is `orch`'s) may be set in the
 * same shell. One a slip away from a flag of the command run
 * (`CLUSTERSIM_AGNETS`) is a typo, though: it is still ignored, with a
 * warning on stderr that names the variable meant.
 */
import type { Argv, MiddlewareFunction } from 'yargs';
import { nearest } from '../runtime/spelling.js';

export const ENV_PREFIX = 'CLUSTERSIM';

export function flagsFromEnvironment<T>(
  y: Argv<T>,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Argv<T> {
  // yargs hands a middleware the command's own instance too (its types do not say so): its options are the flags known.
  const dropUnknown = (
    argv: Record<string, unknown>,
    command: { getOptions(): { key: Record<string, unknown> } },
  ): void => {
    const known = new Set(Object.keys(command.getOptions().key));
    for (const name of Object.keys(env)) {
      if (!name.startsWith(`${ENV_PREFIX}_`)) continue;
      const flag = name
        .slice(ENV_PREFIX.length + 1)
        .toLowerCase()
        .replace(/_/g, '-');
      if (known.has(flag)) continue;
      const meant = nearest(
        flag,
        [...known].filter((k) => /^[a-z][a-z0-9-]+$/.test(k)),
      );
      if (meant !== undefined)
        warn(`clustersim: ${name} names no flag, and is ignored (did you mean ${variableOf(meant)}?)`);
      delete argv[flag];
      delete argv[flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())];
    }
  };
  return y.env(ENV_PREFIX).middleware(dropUnknown as unknown as MiddlewareFunction<T>, true);
}

/** The variable of a flag: `agent-port` is `CLUSTERSIM_AGENT_PORT`. */
export function variableOf(flag: string): string {
  return `${ENV_PREFIX}_${flag.toUpperCase().replace(/-/g, '_')}`;
}
