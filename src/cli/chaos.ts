/**
 * `clustersim chaos <file> --runs N`: the scenario under random fault
 * schedules; on a failing expectation, the schedule shrunk to a minimal one
 * and written out as a scenario file, with the command that replays it.
 */
import { writeFileSync } from 'node:fs';
import type { Argv } from 'yargs';
import { describeSchedule, scenarioWithSchedule, searchFaults } from '../scenario/chaos.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import type { Scenario } from '../scenario/scenario.js';
import { textReport } from '../scenario/report.js';
import { runScenario } from '../scenario/runner.js';
import type { TimelineEntry } from '../scenario/scenario.js';
import { startScenarioCluster, startScenarioService } from '../start/scenario.js';
import { COUNT, numberFlag } from './flags.js';

export interface ChaosArgs {
  file: string;
  runs: number;
  seed: number;
  out: string | undefined;
}

export function chaosOptions(yargs: Argv): Argv<ChaosArgs> {
  return yargs
    .positional('file', { type: 'string', demandOption: true, describe: 'The scenario file' })
    .option(
      'runs',
      numberFlag('runs', COUNT, { default: 20, describe: 'Random schedules to try (shrinking runs come on top)' }),
    )
    .option(
      'seed',
      numberFlag('seed', { whole: true }, { default: 1, describe: 'The seed the schedules are drawn from' }),
    )
    .option('out', {
      type: 'string',
      describe: 'Where the minimal failing scenario goes (default NAME-chaos-SEED.yaml in the current directory)',
    })
    .example(
      '$0 chaos scenarios/steady-state.yaml --runs 50',
      'Fifty random schedules of faults',
    ) as unknown as Argv<ChaosArgs>;
}

export async function runChaos(args: ChaosArgs): Promise<void> {
  let scenario: Scenario;
  try {
    scenario = loadScenario(args.file);
    if (scenario.time === 'realtime')
      throw new ScenarioError(`${args.file}: runs in real time (an external framework): chaos needs virtual time`);
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    process.stderr.write(`clustersim: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  const outcome = await searchFaults(scenario, {
    runs: args.runs,
    seed: args.seed,
    run: (s) =>
      runScenario(s, {
        start: (request) => startScenarioCluster(request),
        startService: startScenarioService,
        lenientFaults: true,
      }),
    onRun: (n, schedule, result) =>
      process.stderr.write(
        `run ${n}: ${describeSchedule(schedule)}: ${result === undefined ? 'STOPPED' : result.passed ? 'pass' : 'FAIL'}\n`,
      ),
  }).catch((error: unknown) => {
    if (!(error instanceof ScenarioError)) throw error;
    process.stderr.write(`clustersim: ${error.message}\n`);
    process.exitCode = 2;
    return undefined;
  });
  if (outcome === undefined) return;
  const found = `(found in ${outcome.runs} runs, seed ${args.seed}, shrunk)`;
  // A minimal schedule is written out as a scenario that replays it.
  const writeOut = (schedule: readonly TimelineEntry[], lines: readonly string[]): void => {
    const out = args.out ?? `${scenario.name}-chaos-${args.seed}.yaml`;
    writeFileSync(out, scenarioWithSchedule(scenario, schedule, args.seed));
    for (const line of [...lines, `written to ${out}`, `replay: clustersim run ${out}`])
      process.stdout.write(`${line}\n`);
    process.exitCode = 1;
  };
  if (outcome.stopped !== undefined) {
    const { schedule, reason } = outcome.stopped;
    return writeOut(schedule, [
      `${args.file}: a schedule of ${schedule.length} fault entries stops the run ${found}: ${reason}`,
    ]);
  }
  if (outcome.failure === undefined) {
    process.stdout.write(
      `${args.file}: ${outcome.runs} runs under random faults (seed ${args.seed}), every expectation held\n`,
    );
    return;
  }
  const { schedule, result } = outcome.failure;
  const failed = textReport(result)
    .slice(1, -1)
    .filter((line) => !line.includes('PASS'));
  writeOut(schedule, [
    `${args.file}: a schedule of ${schedule.length} fault entries makes it fail ${found}:`,
    ...failed,
  ]);
}
