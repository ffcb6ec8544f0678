#!/usr/bin/env node
/** The `clustersim` command line. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { taskCommands } from './task.js';
import { runUp, upOptions } from './up.js';
import { replayOptions, runReplay } from './replay.js';

await yargs(hideBin(process.argv))
  .parserConfiguration({ 'populate--': true })
  .scriptName('clustersim')
  .usage('$0 <command> [options]')
  .command('up', 'Start a cluster: a master and its agents, serving the HTTP APIs', upOptions, runUp)
  .command('task', 'The tasks of a running cluster: list them, or run a command inside one', taskCommands)
  .command('replay <trace>', 'Re-run a recorded trace in the core and report the first divergence, if any', replayOptions, runReplay)
  .demandCommand(1, 'Name a command; see --help')
  .strict()
  .help()
  .alias('help', 'h')
  .version()
  .epilogue('Docs: README.md. A run in virtual time (up --time virtual) replays from its --seed and --epoch.')
  .parseAsync();
