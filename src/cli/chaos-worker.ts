/**
 * A worker process of `clustersim chaos --workers K`: it loads the scenario
 * file named by its argument, then runs each schedule its parent sends on a
 * cluster of its own and sends back the outcome. It ends when its parent
 * lets go of it.
 */
import { runSchedule } from '../scenario/chaos-record.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { runHere, type WorkerReply, type WorkerTask } from './chaos-pool.js';

const scenario = loadScenario(process.argv[2]!);
const reply = (message: WorkerReply): void => {
  process.send!(message);
};

process.on('message', (task: WorkerTask) => {
  runSchedule(scenario, task.schedule, runHere).then(
    (outcome) => reply({ index: task.index, outcome }),
    (error: unknown) =>
      reply({
        index: task.index,
        error: error instanceof Error ? error.message : String(error),
        scenarioError: error instanceof ScenarioError,
      }),
  );
});
process.on('disconnect', () => process.exit(0));
