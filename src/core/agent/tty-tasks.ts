/**
 * A command task launched with a TTY (`container.tty_info`): its process
 * runs in the small shell inside its executor's container, as a nested
 * container of the same id, so that `task attach` reaches it through the
 * ContainerID its statuses carry. When the command exits, the task ends
 * with its code; a KILL_CONTAINER fails it with the signal.
 */
import type { SimExecutor, SimTask } from './executor.js';
import { commandArgv, parentContainer, type ContainerHost, type NestedContainers } from './nested-containers.js';

/** Starts the task's process; false when its executor's container is gone. */
export function launchTtyTask(
  host: ContainerHost,
  nested: NestedContainers,
  executor: SimExecutor,
  task: SimTask,
): boolean {
  const parent = parentContainer(host, executor.containerId);
  if (!parent.ok) return false;
  const { containerId } = executor;
  const launch = { containerId, parentId: containerId, argv: commandArgv(task.spec.command), tty: true };
  const hooks = {
    exited: (code: number) => executor.alive && executor.taskRanOut(task, code),
    killed: (signal: number) =>
      executor.alive && executor.failTask(task.spec.taskId, 128 + signal, `Command terminated with signal ${signal}`),
  };
  return nested.launch(launch, parent.value, undefined, hooks).ok;
}
