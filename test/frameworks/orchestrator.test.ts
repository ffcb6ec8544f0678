/**
 * The orchestration framework end to end: a cluster of the process with
 * engine containers, the framework subscribed over the public scheduler
 * API. Its parts start in order at their counts as engine containers with
 * their resources, ports, labels and constraints; scaling kills extras and
 * starts more; a failed task is replaced; a restarted framework fails over
 * to its id and recovers its tasks from the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningCluster } from '../../src/start/cluster.js';
import { FAILOVER_TIMEOUT_SECONDS } from '../../src/frameworks/orchestrator/framework.js';
import type { OrchestratorService } from '../../src/frameworks/orchestrator/service.js';
import { MemoryStore } from '../../src/frameworks/orchestrator/store.js';
import { runningAtMaster, startOrchCluster, startService, testConfig, until } from './orch-harness.js';

let cluster: RunningCluster;
let service: OrchestratorService;
const store = new MemoryStore();

const counts = (): Record<string, number> => runningAtMaster(cluster, service.orchestrator.frameworkId!);
const expectCounts = (want: Record<string, number>, what: string): Promise<void> =>
  until(what, () => JSON.stringify(counts()) === JSON.stringify(want));

beforeAll(async () => {
  cluster = await startOrchCluster(3);
  const config = testConfig(cluster, {
    ORCH_AGENT_COUNT: '2',
    ORCH_SERVER_CONSTRAINT: cluster.agents[1]!.hostname,
    ORCH_AGENT_LABELS: '[{"key":"zone","value":"a"}]',
    ORCH_AGENT_MEM: '256',
    PORTRANGE_FROM: '31100',
    PORTRANGE_TO: '31200',
  });
  service = await startService(config, store);
});
afterAll(async () => {
  await service?.close();
  await cluster?.close();
});

describe('the orchestration framework on a cluster', () => {
  it('subscribes with its name, role, webui_url and a failover timeout', () => {
    const info = cluster.driver.read((v) => v.framework(service.orchestrator.frameworkId!)?.info);
    expect(info).toMatchObject({
      name: 'm3s',
      user: 'root',
      webuiUrl: service.url,
      failoverTimeoutMs: FAILOVER_TIMEOUT_SECONDS * 1000,
    });
  });

  it('starts the datastore, the server and the agents at their counts, as engine containers', async () => {
    await expectCounts({ server: 1, agent: 2, datastore: 1 }, 'every part running');
    const containers = cluster.driver.read((v) => v.engineContainers());
    expect(containers).toHaveLength(4);
    expect(containers.map((c) => c.image).sort()).toEqual([
      'avhost/ubuntu-m3s:latest',
      'avhost/ubuntu-m3s:latest',
      'avhost/ubuntu-m3s:latest',
      'mariadb:latest',
    ]);
    const o = service.orchestrator;
    const server = o.live('server')[0]!;
    // The server on the host its constraint names; every port from the configured range.
    expect(server.hostname).toBe(cluster.agents[1]!.hostname);
    for (const t of o.tasks.values())
      for (const p of t.ports) expect(p).toBeGreaterThanOrEqual(31100), expect(p).toBeLessThanOrEqual(31200);
    const agentTask = o.live('agent')[0]!;
    const spec = cluster.driver.read((v) => v.framework(o.frameworkId!)!.tasks.get(agentTask.taskId)!.spec);
    expect(spec.labels).toContainEqual({ key: 'zone', value: 'a' });
    expect(spec.resources).toBeDefined();
  });

  it('scales the agents down and up', async () => {
    await service.orchestrator.scale('agent', 0);
    await expectCounts({ server: 1, agent: 0, datastore: 1 }, 'agents scaled to 0');
    await service.orchestrator.scale('agent', 3);
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'agents scaled to 3');
  });

  it('replaces a task that fails', async () => {
    const victim = service.orchestrator.live('agent')[0]!.taskId;
    cluster.driver.input((c) =>
      c.inject({ type: 'fail_task', exitCode: 1, taskId: victim, frameworkId: service.orchestrator.frameworkId! }),
    );
    await until('the failed task forgotten', () => !service.orchestrator.tasks.has(victim));
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'a replacement running');
    expect(service.orchestrator.live('agent').map((t) => t.taskId)).not.toContain(victim);
  });

  it('finds at its state check a task the master does not know, and replaces it', async () => {
    const o = service.orchestrator;
    const real = o.live('agent')[0]!;
    // A task it believes running that never reached the master (its launch and every update lost).
    const ghost = { ...real, taskId: 'm3s-agent.ghost', state: 'TASK_RUNNING', killing: false };
    o.tasks.set(ghost.taskId, ghost);
    o.wanted.agent = 4;
    await until('the ghost found lost by reconciliation', () => !o.tasks.has(ghost.taskId));
    await expectCounts({ server: 1, agent: 4, datastore: 1 }, 'a real fourth agent');
    await o.scale('agent', 3);
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'back to three');
  });

  it('sends a kill again at its state check when the first one was lost', async () => {
    const o = service.orchestrator;
    const outcome = cluster.driver.input((c) =>
      c.inject({ type: 'network_rule', rule: { action: 'drop', types: ['KILL_TASK'] } }),
    );
    if (!outcome.ok) throw new Error(outcome.error.message);
    await o.scale('agent', 2);
    const doomed = [...o.tasks.values()].find((t) => t.killing)!;
    // Several state checks pass while every kill is dropped on its way to the agent.
    await new Promise((r) => setTimeout(r, 700));
    expect(o.tasks.has(doomed.taskId)).toBe(true);
    expect(runningAtMaster(cluster, o.frameworkId!).agent).toBe(3);
    cluster.driver.input((c) => c.inject({ type: 'remove_network_rule', ruleId: outcome.value.ruleId! }));
    await until('the task killed', () => !o.tasks.has(doomed.taskId));
    await expectCounts({ server: 1, agent: 2, datastore: 1 }, 'two agents');
    await o.scale('agent', 3);
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'three agents again');
  });

  it('subscribes again with its id when its event stream breaks', async () => {
    const id = service.orchestrator.frameworkId!;
    const stream = () => cluster.driver.read((v) => v.framework(id)?.streamId);
    const before = stream();
    cluster.driver.input((c) => c.inject({ type: 'drop_framework_connection', frameworkId: id }));
    await until(
      'subscribed on a new stream',
      () => cluster.driver.read((v) => v.framework(id)?.state) === 'subscribed' && stream() !== before,
    );
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'the parts still running');
  });

  it('restarts: fails over to its id and recovers its tasks from the store', async () => {
    const id = service.orchestrator.frameworkId!;
    const before = [...service.orchestrator.tasks.keys()].sort();
    await service.close();
    await until(
      'the master sees it disconnected',
      () => cluster.driver.read((v) => v.framework(id)?.state) === 'disconnected',
    );
    service = await startService(service.orchestrator.config, store);
    await until('subscribed again', () => service.orchestrator.frameworkId === id);
    expect([...service.orchestrator.tasks.keys()].sort()).toEqual(before);
    await until('every task reconciled running', () =>
      [...service.orchestrator.tasks.values()].every((t) => t.state === 'TASK_RUNNING'),
    );
    expect(counts()).toEqual({ server: 1, agent: 3, datastore: 1 });
    expect(cluster.driver.read((v) => v.engineContainers()).length).toBe(5);
  });

  it('replaces a task that failed while it was down, once restarted and reconciled', async () => {
    const id = service.orchestrator.frameworkId!;
    const victim = service.orchestrator.live('agent')[0]!.taskId;
    await service.close();
    await until('disconnected', () => cluster.driver.read((v) => v.framework(id)?.state) === 'disconnected');
    cluster.driver.input((c) => c.inject({ type: 'fail_task', exitCode: 3, taskId: victim, frameworkId: id }));
    service = await startService(service.orchestrator.config, store);
    expect(service.orchestrator.tasks.has(victim)).toBe(true);
    await until('the failure learnt', () => !service.orchestrator.tasks.has(victim));
    await expectCounts({ server: 1, agent: 3, datastore: 1 }, 'a replacement running');
  });
});

describe('a part whose host constraint no agent satisfies', () => {
  it('never starts, and neither do the parts that wait for it; the status says so', async () => {
    const other = await startService(
      testConfig(cluster, {
        FRAMEWORK_NAME: 'm3s-pinned',
        ORCH_SERVER_CONSTRAINT: 'nowhere.example',
        ORCH_AGENT_MEM: '64',
        ORCH_SERVER_MEM: '64',
        DS_MEM: '64',
      }),
      new MemoryStore(),
    );
    try {
      const running = () => runningAtMaster(cluster, other.orchestrator.frameworkId!);
      await until('the datastore running', () => running().datastore === 1);
      // Several state checks (300 ms apart) later, still no server and no agent was launched.
      await new Promise((r) => setTimeout(r, 1_200));
      expect(running()).toEqual({ server: 0, agent: 0, datastore: 1 });
      expect([...other.orchestrator.tasks.values()].map((t) => t.part)).toEqual(['datastore']);
      expect(other.orchestrator.stateOf('server')).toBe('');
    } finally {
      await other.orchestrator.teardown();
      await other.close();
    }
  });
});

describe("the cluster's protocol-misuse report", () => {
  it('has nothing on either framework: no decline loop, no stale stream id, no unacknowledged update', () => {
    expect(cluster.misuse().frameworks.filter((f) => f.misuses.length > 0)).toEqual([]);
  });
});
