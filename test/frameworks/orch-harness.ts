/**
 * A cluster of the process with engine containers, and the orchestration
 * framework against it over the public scheduler API, both on loopback
 * ports chosen by the system.
 */
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { loadConfig, type OrchConfig } from '../../src/frameworks/orchestrator/config.js';
import { startOrchestrator, type OrchestratorService } from '../../src/frameworks/orchestrator/service.js';
import type { KeyValueStore } from '../../src/frameworks/orchestrator/store.js';

export async function startOrchCluster(agents = 3): Promise<RunningCluster> {
  return startCluster({ port: 0, host: '127.0.0.1', agents, time: 'realtime', containerizers: 'docker,mesos' });
}

/** The configuration of a test: the cluster's master, a short state check, and the variables given. */
export function testConfig(cluster: RunningCluster, env: Record<string, string> = {}): OrchConfig {
  return loadConfig({
    CLUSTER_MASTER: cluster.masterUrl.replace(/^http:\/\//, ''),
    FRAMEWORK_PORT: '0',
    FRAMEWORK_HOSTNAME: '127.0.0.1',
    HEARTBEAT_INTERVAL: '300ms',
    ...env,
  });
}

export async function startService(config: OrchConfig, store?: KeyValueStore): Promise<OrchestratorService> {
  return startOrchestrator(config, { listen: '127.0.0.1', ...(store === undefined ? {} : { store }), log: () => {} });
}

/** Polls (every 50 ms) until the test holds, or fails after `ms` saying what it waited for. */
export async function until(what: string, test: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Running tasks of the framework as the master's read model has them, by part. */
export function runningAtMaster(cluster: RunningCluster, frameworkId: string): Record<string, number> {
  const counts: Record<string, number> = { server: 0, agent: 0, datastore: 0 };
  cluster.driver.read((view) => {
    for (const t of view.framework(frameworkId)?.tasks.values() ?? []) {
      if (t.state !== 'TASK_RUNNING') continue;
      const part = /-(server|agent|datastore)\./.exec(t.spec.taskId)?.[1];
      if (part !== undefined) counts[part]!++;
    }
  });
  return counts;
}
