/**
 * The core alone, no HTTP: one framework on a three-agent cluster in
 * virtual time, launching `sleep 1` tasks into every offer and
 * acknowledging every update, as fast as the wall clock allows. Counts
 * task lifecycles (launch to acknowledged TASK_FINISHED), scheduler events
 * and trace entries per wall second. The outbox is drained after every
 * input, as the HTTP layer does.
 */
import { scalarMilli } from '../../src/core/model/resources.js';
import type { OfferView, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';
import { CoreBench, parsed } from './core-harness.js';
import { progress } from './stats.js';

const TASK_RESOURCES = 'cpus:1;mem:128';

export interface CoreResult {
  readonly checkInvariants: boolean;
  readonly wallSeconds: number;
  readonly virtualSeconds: number;
  readonly lifecycles: number;
  readonly events: number;
  readonly traceEntries: number;
}

/** Queues what the scheduler must react to: it reacts after the input that produced it has returned. */
class Queue {
  readonly todo: SchedulerEvent[] = [];
  events = 0;
  finished = 0;
  readonly consume = (event: SchedulerEvent): void => {
    this.events++;
    if (event.type === 'UPDATE' && event.status.state === 'TASK_FINISHED') this.finished++;
    if (event.type === 'OFFERS' || (event.type === 'UPDATE' && event.status.uuid !== undefined)) this.todo.push(event);
  };
}

export function benchCoreLifecycles(seconds: number, checkInvariants: boolean): CoreResult {
  progress(`core lifecycles: ${seconds} s, invariants ${checkInvariants ? 'on' : 'off'}`);
  const bench = new CoreBench({ agents: 3, checkInvariants });
  const { cluster } = bench;
  const taskResources = parsed(TASK_RESOURCES);
  const queue = new Queue();
  bench.subscribe(queue.consume);
  let taskSeq = 0;
  const launchInto = (offer: OfferView) => {
    const fit = Math.min(
      Math.floor(scalarMilli(offer.resources, 'cpus') / 1000),
      Math.floor(scalarMilli(offer.resources, 'mem') / 128_000),
    );
    const tasks: TaskSpec[] = Array.from({ length: fit }, () => {
      const taskId = `t${++taskSeq}`;
      return {
        taskId,
        name: taskId,
        agentId: offer.agentId,
        resources: taskResources,
        command: { shell: true, value: 'sleep 1', arguments: [] },
        labels: [],
      };
    });
    const filters = { refuseMs: 0 };
    if (tasks.length === 0) bench.call({ type: 'DECLINE', offerIds: [offer.id], filters });
    else bench.call({ type: 'ACCEPT', offerIds: [offer.id], operations: [{ type: 'LAUNCH', tasks }], filters });
  };

  const startMs = performance.now();
  const endMs = startMs + seconds * 1000;
  const startVirtualMs = cluster.now();
  const startTrace = cluster.trace.length;
  const startEvents = queue.events;
  while (performance.now() < endMs) {
    const event = queue.todo.shift();
    if (event?.type === 'OFFERS') for (const offer of event.offers) launchInto(offer);
    else if (event?.type === 'UPDATE') {
      const { agentId, taskId, uuid } = event.status;
      bench.call({ type: 'ACKNOWLEDGE', agentId: agentId!, taskId, uuid: uuid! });
    } else if (!bench.step()) {
      throw new Error('core workload stalled: no timer pending and nothing to react to');
    }
  }
  const wallSeconds = (performance.now() - startMs) / 1000;
  return {
    checkInvariants,
    wallSeconds,
    virtualSeconds: (cluster.now() - startVirtualMs) / 1000,
    lifecycles: queue.finished,
    events: queue.events - startEvents,
    traceEntries: cluster.trace.length - startTrace,
  };
}
