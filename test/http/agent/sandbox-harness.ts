/**
 * A cluster in virtual time with one framework that launches command
 * tasks, for the sandbox and files API tests: each task's updates are
 * acknowledged as they come, and a launch waits for the state asked.
 */
import { SchedulerClient } from '../../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../../src/start/cluster.js';
import type { Json } from '../operator-harness.js';

export interface SandboxHarness {
  readonly r: RunningCluster;
  readonly client: SchedulerClient;
  readonly frameworkId: string;
  readonly agentId: string;
  readonly agentUrl: string;
  /** Launches a command task on the first offer and waits until it is in `until`. */
  launch(taskId: string, command: string, until?: string, executor?: Json): Promise<void>;
  close(): Promise<void>;
}

const cpusMem = (cpus: number, mem: number) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus } },
  { name: 'mem', type: 'SCALAR', scalar: { value: mem } },
];

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

export async function startSandboxHarness(
  options: StartClusterOptions = {},
  headers: Record<string, string> = {},
): Promise<SandboxHarness> {
  const r = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 7, ...options });
  const client = new SchedulerClient(r.masterUrl, 'json', headers);
  const subscribed = await client.subscribe({ user: 'alice', name: 'sandboxes', principal: 'alice' });
  if (subscribed.status !== 200) throw new Error(`SUBSCRIBE answered ${subscribed.status}`);
  const frameworkId = (await client.next('SUBSCRIBED')).subscribed.framework_id.value as string;
  const nextOffer = async (): Promise<Json> => {
    for (let i = 0; i < 60 && !client.pending.some((e) => e.type === 'OFFERS'); i++) {
      r.advance(1_000);
      await tick();
    }
    return (await client.next('OFFERS', 100)).offers.offers[0];
  };
  const launch = async (taskId: string, command: string, until = 'TASK_RUNNING', executor?: Json) => {
    const offer = await nextOffer();
    const info: Json = {
      name: taskId,
      task_id: { value: taskId },
      agent_id: offer.agent_id,
      resources: cpusMem(0.1, 32),
      ...(executor === undefined ? { command: { value: command } } : { executor }),
    };
    const accept = { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [info] } }] };
    const answer = await client.call({ type: 'ACCEPT', accept });
    if (answer.status !== 202) throw new Error(`ACCEPT answered ${answer.status}`);
    for (;;) {
      const update = client.pending.find((e) => e.type === 'UPDATE' && e.update.status.task_id.value === taskId);
      if (update === undefined) {
        r.advance(100);
        await tick();
        continue;
      }
      client.pending.splice(client.pending.indexOf(update), 1);
      const { status } = update.update;
      if (status.uuid !== undefined)
        await client.call({
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
        });
      if (status.state === until) return;
    }
  };
  return {
    r,
    client,
    frameworkId,
    agentId: r.agents[0]!.id,
    agentUrl: r.agents[0]!.url,
    launch,
    close: () => r.close(),
  };
}
