/**
 * A worker process of `clustersim chaos` and `clustersim run --seeds`
 * (scenario-pool.ts): it loads the scenario file named by its argument,
 * then makes each run its parent sends on a cluster of its own and sends
 * back the outcome. It ends when its parent lets go of it.
 */
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { runTask, type WorkerReply, type WorkerTask } from './scenario-pool.js';

const scenario = loadScenario(process.argv[2]!);
const reply = (message: WorkerReply): void => {
  process.send!(message);
};

process.on('message', ({ index, task }: WorkerTask) => {
  runTask(scenario, task).then(
    (outcome) => reply({ index, outcome }),
    (error: unknown) =>
      reply({
        index,
        error: error instanceof Error ? error.message : String(error),
        scenarioError: error instanceof ScenarioError,
      }),
  );
});
process.on('disconnect', () => process.exit(0));
