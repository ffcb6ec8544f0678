#!/usr/bin/env node
/** The `clustersim` command line. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runUp, upOptions } from './up.js';

await yargs(hideBin(process.argv))
  .scriptName('clustersim')
  .usage('$0 <command> [options]')
  .command('up', 'Start a cluster: a master and its agents, serving the HTTP APIs', upOptions, runUp)
  .demandCommand(1, 'Name a command; see --help')
  .strict()
  .help()
  .alias('help', 'h')
  .version()
  .epilogue('Docs: README.md. Every run replays from its --seed.')
  .parseAsync();
