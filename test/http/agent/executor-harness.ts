/**
 * A cluster in virtual time whose custom executors are outside processes
 * (`await` or `spawn`), a framework on it, and what tests of the executor
 * API need: launching a task with an ExecutorInfo, acknowledging updates,
 * and a uuid for an executor's update.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ExecutorClient } from '../../../src/client/executor-client.js';
import { SchedulerClient, type Encoding, type JsonEvent } from '../../../src/client/scheduler-client.js';
import type { SchedulerEventOf } from '../../../src/client/protocol.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';

export const cpusMem = (cpus: number, mem: number) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus } },
  { name: 'mem', type: 'SCALAR', scalar: { value: mem } },
];

/** A fresh uuid for an executor's update, as JSON carries bytes (Base64). */
export const newUuid = (): string => randomBytes(16).toString('base64');

export const tick = (ms = 10): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface Harness {
  readonly cluster: RunningCluster;
  readonly scheduler: SchedulerClient;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly agentUrl: string;
  /** Launches one task on a fresh offer, run by the executor `executorId` with `command`; `extra` joins the TaskInfo. */
  launch(
    taskId: string,
    executorId: string,
    command?: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<void>;
  /** An executor client for `executorId` of this framework on the agent. */
  executor(executorId: string, encoding?: Encoding, headers?: Record<string, string>): ExecutorClient;
  /** Acknowledges an UPDATE event the framework received. */
  acknowledge(update: JsonEvent): Promise<void>;
  /** Launches a task, subscribes as its executor, and reports it running (acknowledged). */
  runningTask(taskId: string, executorId: string): Promise<ExecutorClient>;
  close(): Promise<void>;
}

export async function startHarness(
  options: StartClusterOptions,
  framework: Record<string, unknown> = {},
  encoding: Encoding = 'json',
): Promise<Harness> {
  const cluster = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 9, ...options });
  const scheduler = new SchedulerClient(cluster.masterUrl, encoding);
  const executors: ExecutorClient[] = [];
  // A spawned executor runs as its framework's user (--switch-user): the test's own user is one every host has.
  const user = options.customExecutors === 'spawn' ? os.userInfo().username : 'alice';
  expect((await scheduler.subscribe({ user, name: 'executor-api', checkpoint: true, ...framework })).status).toBe(200);
  const frameworkId = (await scheduler.next('SUBSCRIBED')).subscribed.framework_id.value as string;
  const agent = cluster.agents[0]!;
  const harness: Harness = {
    cluster,
    scheduler,
    frameworkId,
    agentId: agent.id,
    agentUrl: agent.url,
    launch: async (taskId, executorId, command = { value: 'run-executor' }, extra = {}) => {
      const offer = await nextOffer(cluster, scheduler);
      const task = {
        name: taskId,
        task_id: { value: taskId },
        agent_id: offer.agent_id,
        resources: cpusMem(0.25, 32),
        executor: { executor_id: { value: executorId }, type: 'CUSTOM', command, resources: cpusMem(0.1, 16) },
        ...extra,
      };
      const accept = {
        offer_ids: [offer.id],
        operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }],
        filters: { refuse_seconds: 0 },
      };
      expect((await scheduler.call({ type: 'ACCEPT', accept })).status).toBe(202);
    },
    executor: (executorId, executorEncoding = 'json', headers = {}) => {
      const client = new ExecutorClient(agent.url, { frameworkId, executorId }, executorEncoding, headers);
      executors.push(client);
      return client;
    },
    acknowledge: async (update) => {
      expect(await scheduler.acknowledge(update as SchedulerEventOf<'UPDATE'>)).toBe(true);
    },
    runningTask: async (taskId, executorId) => {
      await harness.launch(taskId, executorId);
      const executor = harness.executor(executorId);
      await executor.subscribe();
      await executor.next('LAUNCH');
      await executor.update({ task_id: { value: taskId }, state: 'TASK_RUNNING', uuid: newUuid() });
      await harness.acknowledge(await scheduler.nextUpdate(taskId));
      return executor;
    },
    close: async () => {
      for (const e of executors) e.close();
      scheduler.disconnect();
      await cluster.close();
    },
  };
  return harness;
}

/** The next offer, moving virtual time on by allocation intervals until one comes. */
async function nextOffer(cluster: RunningCluster, scheduler: SchedulerClient): Promise<JsonEvent> {
  for (let i = 0; i < 30 && !scheduler.pending.some((e) => e.type === 'OFFERS'); i++) {
    cluster.advance(1_000);
    await tick(5);
  }
  return (await scheduler.next('OFFERS', 100)).offers.offers[0] as JsonEvent;
}

/** A spawned executor's sandbox: upstream's path under the cluster's work directory. */
export function sandboxPath(h: Harness, executorId: string, containerId: string): string {
  return path.join(
    h.cluster.workDir!,
    'slaves',
    h.agentId,
    'frameworks',
    h.frameworkId,
    'executors',
    executorId,
    'runs',
    containerId,
  );
}
