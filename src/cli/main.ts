#!/usr/bin/env node
/** The `clustersim` command line. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { taskCommands } from './task.js';
import { runUp, upOptions } from './up.js';
import { chaosOptions, runChaos, type ChaosArgs } from './chaos.js';
import { chaosMergeOptions, runChaosMerge, type ChaosMergeArgs } from './chaos-merge.js';
import { runCheckDeterminism, runOptions, runRun, type CheckArgs, type RunArgs } from './run.js';
import { replayOptions, runReplay } from './replay.js';
import { serveCommands, workflowCommands } from './workflow.js';
import { orchCommands, serveOrchestrator } from './orch.js';
import { flagsFromEnvironment } from './env.js';
import { failOnUsage, parseOrExplain, type CommandTree } from './flags.js';

/** Every command and subcommand, so that a mistyped one is named as a command, not a flag. */
const COMMANDS: CommandTree = {
  up: {},
  run: {},
  'check-determinism': {},
  chaos: {},
  'chaos-merge': {},
  task: { list: {}, exec: {} },
  replay: {},
  serve: { workflow: {}, orchestrator: {} },
  workflow: { run: {} },
  orch: { list: {}, kubeconfig: {}, scale: {}, status: {}, version: {} },
};

const argv = hideBin(process.argv);
const cli = flagsFromEnvironment(yargs(argv))
  .parserConfiguration({ 'populate--': true })
  .scriptName('clustersim')
  .usage('$0 <command> [options]')
  .command('up', 'Start a cluster: a master and its agents, serving the HTTP APIs', upOptions, runUp)
  .command(
    'run <files..>',
    'Run scenario files in virtual time: each expectation with PASS or FAIL, and the command that replays the run',
    runOptions,
    (args) => runRun(args as unknown as RunArgs),
  )
  .command(
    'check-determinism <files..>',
    'Run each scenario twice with one seed and compare the traces',
    (y) =>
      y
        .positional('files', { type: 'string', array: true, demandOption: true, describe: 'Scenario files' })
        .option('seed', { requiresArg: true, type: 'string', describe: "The seed (default the file's)" }),
    (args) => runCheckDeterminism(args as unknown as CheckArgs),
  )
  .command(
    'chaos <file>',
    'Run a scenario under random fault schedules; shrink a failing one and write it out as a scenario',
    chaosOptions,
    (args) => runChaos(args as unknown as ChaosArgs),
  )
  .command(
    'chaos-merge <files..>',
    'Join the --json outputs of the shards of one chaos search into one summary',
    chaosMergeOptions,
    (args) => runChaosMerge(args as unknown as ChaosMergeArgs),
  )
  .command('task', 'The tasks of a running cluster: list them, or run a command inside one', taskCommands)
  .command(
    'replay <trace>',
    'Re-run a recorded trace in the core and report the first divergence, if any',
    replayOptions,
    runReplay,
  )
  .command('serve', 'Run a bundled framework against a master: serve workflow, serve orchestrator', (y) =>
    serveOrchestrator(serveCommands(y)),
  )
  .command('workflow', "The workflow service's container operator: run one task through its API", workflowCommands)
  .command('orch', "The orchestration framework's plugin: list, kubeconfig, scale, status, version", orchCommands)
  .demandCommand(1, 'Name a command; see --help')
  .strict()
  .help()
  .alias('help', 'h')
  .version()
  .epilogue(
    'Docs: README.md and docs/ (every command and option: docs/cli.md). A run in virtual time (up --time virtual) replays from its --seed and --epoch.',
  );
await parseOrExplain(failOnUsage(cli, COMMANDS, argv));
