/**
 * What the dashboard's browser tests do as a scheduler: a small task to
 * launch, and every status update acknowledged as it comes.
 */
import type { JsonEvent, SchedulerClient } from '../../src/client/scheduler-client.js';

/** A task of half a cpu and 64 MiB on the offer's agent, `nightly-report` unless named. */
export function sleepTask(offer: JsonEvent, command: string, id = 'nightly-report'): object {
  const role = offer.allocation_info?.role as string;
  const scalar = (name: string, value: number) => ({
    name,
    type: 'SCALAR',
    scalar: { value },
    allocation_info: { role },
  });
  return {
    name: 'report',
    task_id: { value: id },
    agent_id: offer.agent_id,
    resources: [scalar('cpus', 0.5), scalar('mem', 64)],
    command: { value: command },
  };
}

/** Acknowledges every status update with a uuid as it comes, recording its state, until the stream closes. */
export async function acknowledgeAll(client: SchedulerClient, acked: string[]): Promise<void> {
  while (!client.closed) {
    const update = await client.next('UPDATE', 60_000).catch(() => undefined);
    if (update === undefined) return;
    const status = update.update.status;
    if (status.uuid === undefined) continue;
    acked.push(status.state as string);
    await client.call({
      type: 'ACKNOWLEDGE',
      acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
    });
  }
}
