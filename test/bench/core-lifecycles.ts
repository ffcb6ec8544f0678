/**
 * The core alone, no HTTP: one framework on a three-agent cluster in
 * virtual time, launching `sleep 1` tasks into every offer and
 * acknowledging every update, as fast as the wall clock allows. Counts
 * task lifecycles (launch to acknowledged TASK_FINISHED), scheduler events
 * and trace entries per wall second.
 */
import { Cluster } from '../../src/core/cluster.js';
import { parseResources, scalarMilli, type Resources } from '../../src/core/resources.js';
import type { EventSink, OfferView, SchedulerCall, SchedulerEvent, TaskSpec } from '../../src/core/types.js';
import { progress } from './stats.js';

const AGENT_RESOURCES = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';
const TASK_RESOURCES = 'cpus:1;mem:128';

export interface CoreResult {
  readonly checkInvariants: boolean;
  readonly wallSeconds: number;
  readonly virtualSeconds: number;
  readonly lifecycles: number;
  readonly events: number;
  readonly traceEntries: number;
}

function parsed(text: string): Resources {
  const r = parseResources(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

/** Queues what the scheduler must react to; the core must not be re-entered from `send`. */
class QueueSink implements EventSink {
  readonly todo: SchedulerEvent[] = [];
  events = 0;
  finished = 0;
  send(event: SchedulerEvent): void {
    this.events++;
    if (event.type === 'UPDATE' && event.status.state === 'TASK_FINISHED') this.finished++;
    if (event.type === 'OFFERS' || (event.type === 'UPDATE' && event.status.uuid !== undefined)) this.todo.push(event);
  }
  close(): void {}
}

function buildCluster(checkInvariants: boolean): Cluster {
  const cluster = new Cluster({
    seed: 1,
    checkInvariants,
    master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0' },
  });
  const resources = parsed(AGENT_RESOURCES);
  for (let i = 0; i < 3; i++) {
    cluster.addAgent({ hostname: `agent${i + 1}`, ip: '127.0.0.1', port: 5051 + i, resources, attributes: [] });
  }
  cluster.loop.runDue();
  return cluster;
}

export function benchCoreLifecycles(seconds: number, checkInvariants: boolean): CoreResult {
  progress(`core lifecycles: ${seconds} s, invariants ${checkInvariants ? 'on' : 'off'}`);
  const cluster = buildCluster(checkInvariants);
  const taskResources = parsed(TASK_RESOURCES);
  const sink = new QueueSink();
  const info = { user: 'bench', name: 'bench', failoverTimeoutMs: 0, checkpoint: false, roles: [], capabilities: [], labels: [] };
  const { frameworkId, streamId } = cluster.input(() => cluster.master.subscribe({ info, suppressedRoles: [] }, sink));
  const call = (c: SchedulerCall) => {
    const outcome = cluster.input(() => cluster.master.call(frameworkId, streamId, c));
    if (!outcome.ok) throw new Error(`${c.type} failed: ${outcome.error.message}`);
  };
  let taskSeq = 0;
  const launchInto = (offer: OfferView) => {
    const fit = Math.min(Math.floor(scalarMilli(offer.resources, 'cpus') / 1000), Math.floor(scalarMilli(offer.resources, 'mem') / 128_000));
    const tasks: TaskSpec[] = Array.from({ length: fit }, () => {
      const taskId = `t${++taskSeq}`;
      return { taskId, name: taskId, agentId: offer.agentId, resources: taskResources, command: { shell: true, value: 'sleep 1', arguments: [] }, labels: [] };
    });
    const filters = { refuseMs: 0 };
    if (tasks.length === 0) call({ type: 'DECLINE', offerIds: [offer.id], filters });
    else call({ type: 'ACCEPT', offerIds: [offer.id], operations: [{ type: 'LAUNCH', tasks }], filters });
  };

  const startMs = performance.now();
  const endMs = startMs + seconds * 1000;
  const startVirtualMs = cluster.loop.now();
  const startTrace = cluster.trace.length;
  const startEvents = sink.events;
  while (performance.now() < endMs) {
    const event = sink.todo.shift();
    if (event?.type === 'OFFERS') for (const offer of event.offers) launchInto(offer);
    else if (event?.type === 'UPDATE') {
      const { agentId, taskId, uuid } = event.status;
      call({ type: 'ACKNOWLEDGE', agentId: agentId!, taskId, uuid: uuid! });
    } else {
      const due = cluster.loop.nextDueMs();
      if (due === undefined) throw new Error('core workload stalled: no timer pending and nothing to react to');
      cluster.advance(due - cluster.loop.now());
    }
  }
  const wallSeconds = (performance.now() - startMs) / 1000;
  return {
    checkInvariants,
    wallSeconds,
    virtualSeconds: (cluster.loop.now() - startVirtualMs) / 1000,
    lifecycles: sink.finished,
    events: sink.events - startEvents,
    traceEntries: cluster.trace.length - startTrace,
  };
}
