import { Cluster } from '../../src/core/cluster.js';
import { parseResources, type Resources } from '../../src/core/resources.js';
import type { EventSink, FrameworkInfo, SchedulerEvent, Subscription, TaskSpec, TaskStatus } from '../../src/core/types.js';

export function resources(text: string): Resources {
  const parsed = parseResources(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

export function makeCluster(options: { agents?: number; seed?: string | number; taskLaunchDelayMs?: number } = {}): Cluster {
  const cluster = new Cluster({
    seed: options.seed ?? 1,
    recordTrace: true,
    master: { hostname: 'localhost', ip: '127.0.0.1', port: 5050, version: '1.11.0', taskLaunchDelayMs: options.taskLaunchDelayMs ?? 0 },
  });
  for (let i = 0; i < (options.agents ?? 1); i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources('cpus:4;mem:8192;disk:16384;ports:[31000-32000]'),
      attributes: [{ name: 'rack', type: 'TEXT', text: `r${i + 1}` }],
    });
  }
  cluster.loop.runDue();
  return cluster;
}

export class RecordingSink implements EventSink {
  readonly events: SchedulerEvent[] = [];
  closed = false;
  send(event: SchedulerEvent): void {
    if (this.closed) throw new Error('send after close');
    this.events.push(event);
  }
  close(): void {
    this.closed = true;
  }
  of<T extends SchedulerEvent['type']>(type: T): Extract<SchedulerEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<SchedulerEvent, { type: T }> => e.type === type);
  }
  updates(): TaskStatus[] {
    return this.of('UPDATE').map((e) => e.status);
  }
  lastOffers() {
    const offers = this.of('OFFERS');
    return offers[offers.length - 1]?.offers ?? [];
  }
}

export function frameworkInfo(extra: Partial<FrameworkInfo> = {}): FrameworkInfo {
  return { user: 'root', name: 'test', failoverTimeoutMs: 0, checkpoint: false, roles: [], capabilities: [], labels: [], ...extra };
}

export function subscribe(cluster: Cluster, info: Partial<FrameworkInfo> = {}, extra: Partial<Subscription> = {}) {
  const sink = new RecordingSink();
  const sub = cluster.input(() =>
    cluster.master.subscribe({ info: frameworkInfo(info), suppressedRoles: [], ...extra }, sink),
  );
  return { sink, ...sub };
}

export function commandTask(taskId: string, agentId: string, command: string, res = 'cpus:1;mem:128'): TaskSpec {
  return { taskId, name: taskId, agentId, resources: resources(res), command: { shell: true, value: command, arguments: [] }, labels: [] };
}
