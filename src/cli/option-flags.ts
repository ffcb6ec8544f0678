/**
 * `clustersim up`'s words for the library's: a StartError names the
 * options of `startCluster()` (`agentResources`, `idleTimeoutSeconds`),
 * and the command says its flags instead (`--agent-resources`,
 * `--idle-timeout`).
 */
import type { StartError } from '../start-options.js';

/** The flag of a library option: kebab case, without the unit its name ends with. */
export function flagOf(option: string): string {
  return `--${option.replace(/(Seconds|MiB|Ms)$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** The error's message with each option it names (the first time) given as its flag. */
export function flagMessage(error: StartError): string {
  let message = error.message;
  for (const option of error.options) {
    message = message.replace(new RegExp(`(?<![\\w-])${option}(?![\\w])`), flagOf(option));
  }
  return message;
}
