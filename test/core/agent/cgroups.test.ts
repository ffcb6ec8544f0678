/**
 * The cgroup memory model of the agents' containers: memory curves from
 * task labels, the control files of each cgroups version, the OOM kill at
 * the computed instant, and UPDATE_CONTAINER_MEMORY_LIMIT as a core input.
 */
import { describe, expect, it } from 'vitest';
import type { AgentFlags } from '../../../src/core/agent/flags.js';
import { formatBytes, V1_UNLIMITED } from '../../../src/core/agent/cgroups.js';
import {
  bytesAt,
  firstExceeding,
  MIB,
  parseMemoryCurve,
  shifted,
  type MemoryCurve,
} from '../../../src/core/process/memory-curve.js';
import { scalarMilli } from '../../../src/core/model/resources.js';
import type { TaskSpec } from '../../../src/core/model/types.js';
import { commandTask, connect, defaultExecutor, makeCluster, traceKinds } from '../helpers.js';

function curve(text: string): MemoryCurve {
  const parsed = parseMemoryCurve(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed.curve;
}

const withMemory = (task: TaskSpec, label: string): TaskSpec => ({
  ...task,
  labels: [{ key: 'memory', value: label }],
});

/** One agent, one framework, one command task with `mem` MiB and a memory label; its container id and start time. */
function running(
  label: string | undefined,
  mem = 64,
  flags: Partial<AgentFlags> = {},
  limits?: Record<string, number>,
) {
  const cluster = makeCluster({ agents: 1, agentFlags: flags });
  const s = connect(cluster, { checkpoint: true, failoverTimeoutMs: 3_600_000 });
  const offer = s.firstOffer();
  let task = commandTask('t', offer.agentId, 'sleep 3600', `cpus:0.5;mem:${mem}`);
  if (label !== undefined) task = withMemory(task, label);
  if (limits !== undefined) task = { ...task, limits };
  s.accept(offer.id, [task]);
  const startMs = cluster.now();
  s.acknowledgeAll();
  const node = cluster.view.agentNode(offer.agentId)!;
  const containerId = node.executors()[0]!.containerId;
  const files = () => node.cgroups.view(containerId)?.files;
  return { cluster, s, agentId: offer.agentId, containerId, startMs, files, node };
}

describe('memory curves from the memory label', () => {
  it('reads constant, growing and spike terms, which add up', () => {
    const c = curve('constant:64,growing:16+10/s,spike:512@30s/5s');
    expect(bytesAt(c, 0)).toBe((64 + 16) * MIB);
    expect(bytesAt(c, 1_000)).toBe((64 + 16 + 10) * MIB);
    expect(bytesAt(c, 30_000)).toBe((64 + 16 + 300 + 512) * MIB);
    expect(bytesAt(c, 35_000)).toBe((64 + 16 + 350) * MIB);
    expect(bytesAt(curve('spike:1.5@2m'), 120_000)).toBe(1.5 * MIB);
    expect(bytesAt(curve('growing:60/m'), 500)).toBe(0.5 * MIB);
  });

  it('refuses what does not parse, saying which term', () => {
    for (const bad of [
      '',
      'constant',
      'constant:x',
      'growing:10',
      'growing:10/d',
      'spike:5',
      'spike:5@3',
      'spike:5@3s/x',
      'leak:10',
      'constant:-1',
    ]) {
      const parsed = parseMemoryCurve(bad);
      expect('error' in parsed, bad).toBe(true);
    }
  });

  it('finds the first millisecond over a limit, on a slope and at a step', () => {
    const growing = shifted(curve('growing:10/s'), 1_000);
    // 96 MiB is reached exactly at 9.6 s after the start, and passed one millisecond later.
    expect(firstExceeding(growing, 96 * MIB, 0)).toBe(1_000 + 9_601);
    expect(bytesAt(growing, 1_000 + 9_600)).toBe(96 * MIB);
    const spike = curve('constant:10,spike:100@5s/1s');
    expect(firstExceeding(spike, 50 * MIB, 0)).toBe(5_000);
    expect(firstExceeding(spike, 50 * MIB, 6_000)).toBeUndefined();
    expect(firstExceeding(spike, 5 * MIB, 123)).toBe(123);
    expect(firstExceeding(growing, Infinity, 0)).toBeUndefined();
    // A slow slope: 1 MiB an hour, still exact to the millisecond.
    const slow = curve('growing:1/h');
    const at = firstExceeding(slow, MIB, 0)!;
    expect(bytesAt(slow, at)).toBeGreaterThan(MIB);
    expect(bytesAt(slow, at - 1)).toBeLessThanOrEqual(MIB);
  });
});

describe('the control files of a container', () => {
  it('v2 (default): memory.max and memory.low from the task and its command executor', () => {
    const { files } = running('constant:40', 64);
    const bytes = String(96 * MIB);
    expect(files()).toEqual({ 'memory.current': String(40 * MIB), 'memory.low': bytes, 'memory.max': bytes });
  });

  it('v1: memory.limit_in_bytes and memory.soft_limit_in_bytes', () => {
    const { files } = running(undefined, 64, { cgroups: 'v1' });
    const bytes = String(96 * MIB);
    expect(files()).toEqual({
      'memory.limit_in_bytes': bytes,
      'memory.soft_limit_in_bytes': bytes,
      'memory.usage_in_bytes': '0',
    });
  });

  it('TaskInfo.limits raise the hard limit; Infinity makes it unlimited', () => {
    expect(running(undefined, 64, {}, { mem: 256 }).files()?.['memory.max']).toBe(String((256 + 32) * MIB));
    expect(running(undefined, 64, {}, { mem: 256 }).files()?.['memory.low']).toBe(String(96 * MIB));
    expect(running(undefined, 64, {}, { mem: Infinity }).files()?.['memory.max']).toBe('max');
    expect(running(undefined, 64, { cgroups: 'v1' }, { mem: Infinity }).files()?.['memory.limit_in_bytes']).toBe(
      V1_UNLIMITED,
    );
  });

  it('has no memory files without memory isolation, or on v2 without the controller delegated', () => {
    expect(running(undefined, 64, { memoryIsolation: false }).files()).toEqual({});
    expect(running(undefined, 64, { memoryControllerDelegated: false }).files()).toEqual({});
    expect(
      Object.keys(running(undefined, 64, { cgroups: 'v1', memoryControllerDelegated: false }).files()!),
    ).toHaveLength(3);
  });

  it('a task group shares its executor container: limits follow the tasks that start and end', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    const executor = defaultExecutor('group', 'cpus:0.1;mem:32');
    const long = commandTask('long', offer.agentId, 'sleep 3600', 'cpus:0.1;mem:100');
    const short = commandTask('short', offer.agentId, 'sleep 5', 'cpus:0.1;mem:50');
    s.launchGroup(offer.id, executor, [long, short]);
    s.acknowledgeAll();
    const node = cluster.view.agentNode(offer.agentId)!;
    const id = node.executors()[0]!.containerId;
    const before = node.cgroups.view(id)!.hardLimitBytes;
    expect(before).toBeGreaterThanOrEqual(150 * MIB);
    cluster.advance(5_000);
    s.acknowledgeAll();
    expect(s.states('short').at(-1)).toBe('TASK_FINISHED');
    expect(before - node.cgroups.view(id)!.hardLimitBytes).toBe(50 * MIB);
  });
});

describe('the OOM killer', () => {
  it('kills a growing task the millisecond it passes its hard limit, with the memory limitation', () => {
    const { cluster, s, startMs } = running('growing:10/s', 64);
    cluster.advance(9_600);
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    cluster.advance(1);
    expect(cluster.now()).toBe(startMs + 9_601);
    const failed = s.sink.updates().find((u) => u.state === 'TASK_FAILED')!;
    expect(failed).toMatchObject({ taskId: 't', source: 'SOURCE_AGENT', reason: 'REASON_CONTAINER_LIMITATION_MEMORY' });
    expect(failed.message).toMatch(
      /^Memory limit exceeded: Requested: 96MB Maximum Used: \d+B\n\nMEMORY STATISTICS: \nanon \d+\n$/,
    );
    expect(scalarMilli(failed.limitation!, 'mem')).toBe(96_010);
    expect(traceKinds(cluster)).toContain('container:oom');
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FAILED']);
    cluster.checkAllInvariants();
    // The task's resources are free again, and the agent runs no container.
    s.acknowledgeAll();
    expect(
      cluster.view
        .agentNode(failed.agentId!)!
        .executors()
        .filter((e) => e.alive),
    ).toEqual([]);
  });

  it('a spike above the limit kills when it starts; one below does not', () => {
    const over = running('constant:10,spike:200@30s/1s', 64);
    over.cluster.advance(29_999);
    expect(over.s.states('t').at(-1)).toBe('TASK_RUNNING');
    over.cluster.advance(1);
    expect(over.s.states('t').at(-1)).toBe('TASK_FAILED');
    const under = running('constant:10,spike:50@30s/1s', 64);
    under.cluster.advance(60_000);
    expect(under.s.states('t').at(-1)).toBe('TASK_RUNNING');
  });

  it('enforces nothing without memory isolation', () => {
    const { cluster, s } = running('growing:100/s', 64, { memoryIsolation: false });
    cluster.advance(600_000);
    expect(s.states('t').at(-1)).toBe('TASK_RUNNING');
    expect(traceKinds(cluster)).not.toContain('container:oom');
  });

  it('a label that does not parse uses no memory and is reported', () => {
    const { cluster, s, files } = running('leak:10', 64);
    cluster.advance(60_000);
    expect(s.states('t').at(-1)).toBe('TASK_RUNNING');
    expect(files()?.['memory.current']).toBe('0');
    expect(traceKinds(cluster)).toContain('task:memory-label-invalid');
  });
});

describe('UPDATE_CONTAINER_MEMORY_LIMIT', () => {
  it('raises and lowers both files (v2), and a limit below usage kills at once', () => {
    const { cluster, s, agentId, containerId, files } = running('constant:50', 64);
    const unallocated = cluster.view.unallocated(agentId);
    const taskResources = s.framework!.tasks.get('t')!.spec.resources;
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 512)).toEqual({ ok: true, value: undefined });
    expect(files()).toMatchObject({ 'memory.max': String(512 * MIB), 'memory.low': String(512 * MIB) });
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 60.5).ok).toBe(true);
    expect(files()).toMatchObject({ 'memory.max': String(60.5 * MIB), 'memory.low': String(60.5 * MIB) });
    // The master's books and the task's resources do not move.
    expect(cluster.view.unallocated(agentId)).toEqual(unallocated);
    expect(s.framework!.tasks.get('t')!.spec.resources).toEqual(taskResources);
    expect(s.states('t').at(-1)).toBe('TASK_RUNNING');
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 49).ok).toBe(true);
    const failed = s.sink.updates().find((u) => u.state === 'TASK_FAILED')!;
    expect(failed.reason).toBe('REASON_CONTAINER_LIMITATION_MEMORY');
    expect(failed.message).toMatch(/^Memory limit exceeded: Requested: 49MB Maximum Used: 50MB/);
    expect(scalarMilli(failed.limitation!, 'mem')).toBe(50_000);
  });

  it('v1: memory.limit_in_bytes and memory.soft_limit_in_bytes; at least 32 MiB', () => {
    const { cluster, agentId, containerId, files } = running(undefined, 64, { cgroups: 'v1' });
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 1024).ok).toBe(true);
    expect(files()).toMatchObject({
      'memory.limit_in_bytes': String(1024 * MIB),
      'memory.soft_limit_in_bytes': String(1024 * MIB),
    });
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 1).ok).toBe(true);
    expect(files()).toMatchObject({ 'memory.limit_in_bytes': String(32 * MIB) });
    // Past what the kernel's page counter holds: unlimited.
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 1e300).ok).toBe(true);
    expect(files()).toMatchObject({
      'memory.limit_in_bytes': V1_UNLIMITED,
      'memory.soft_limit_in_bytes': V1_UNLIMITED,
    });
  });

  it('moves the OOM instant of a growing task', () => {
    const { cluster, s, agentId, containerId, startMs } = running('growing:10/s', 64);
    cluster.advance(5_000);
    cluster.updateContainerMemoryLimit(agentId, containerId, 200);
    cluster.advance(10_000);
    expect(s.states('t').at(-1)).toBe('TASK_RUNNING');
    cluster.advance(5_001);
    expect(s.states('t').at(-1)).toBe('TASK_FAILED');
    expect(cluster.now()).toBe(startMs + 20_001);
  });

  it('refuses what is not a running task container of this agent', () => {
    const { cluster, agentId, containerId } = running(undefined, 64);
    const other = cluster.addAgent({ hostname: 'b', ip: '127.0.0.1', port: 5999, resources: [], attributes: [] });
    expect(cluster.updateContainerMemoryLimit(other.id, containerId, 100)).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: `Container ${containerId} cannot be found` },
    });
    expect(cluster.updateContainerMemoryLimit(agentId, 'nope', 100).ok).toBe(false);
    const named = (id: string) => {
      const outcome = cluster.updateContainerMemoryLimit(agentId, id, 100);
      return outcome.ok ? 'ok' : `${outcome.error.code}: ${outcome.error.message}`;
    };
    // A command task's executor is named after the task.
    expect(named('t')).toBe(`INVALID: 't' is an executor id, not the ContainerID of a running task container`);
    expect(named(`cluster-${containerId}`)).toMatch(/^INVALID: .* is an engine container name/);
  });

  it('fails (500) without memory isolation, or on v2 without the controller delegated', () => {
    const off = running(undefined, 64, { memoryIsolation: false });
    expect(off.cluster.updateContainerMemoryLimit(off.agentId, off.containerId, 100)).toMatchObject({
      ok: false,
      error: { code: 'FAILED' },
    });
    const undelegated = running(undefined, 64, { memoryControllerDelegated: false });
    const outcome = undelegated.cluster.updateContainerMemoryLimit(undelegated.agentId, undelegated.containerId, 100);
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: 'FAILED', message: expect.stringContaining('not delegated') },
    });
  });

  it('is lost when the agent restarts: the limits are computed from the tasks again', () => {
    const { cluster, s, agentId, containerId, node } = running('constant:50', 64);
    cluster.updateContainerMemoryLimit(agentId, containerId, 512);
    expect(node.cgroups.view(containerId)?.hardLimitBytes).toBe(512 * MIB);
    cluster.crashAgent(agentId);
    expect(cluster.updateContainerMemoryLimit(agentId, containerId, 512)).toMatchObject({
      ok: false,
      error: { code: 'UNAVAILABLE' },
    });
    cluster.restartAgent(agentId);
    cluster.advance(1_000);
    expect(node.cgroups.view(containerId)?.hardLimitBytes).toBe(96 * MIB);
    expect(s.states('t').at(-1)).toBe('TASK_RUNNING');
  });
});

describe('the override and the agent lifecycle', () => {
  it('is lost when the agent re-registers after losing its master', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster, { capabilities: ['PARTITION_AWARE'] });
    const offer = s.firstOffer();
    s.accept(offer.id, [withMemory(commandTask('t', offer.agentId, 'sleep 36000', 'cpus:0.5;mem:64'), 'constant:50')]);
    s.acknowledgeAll();
    const node = cluster.view.agentNode(offer.agentId)!;
    const id = node.executors()[0]!.containerId;
    cluster.updateContainerMemoryLimit(offer.agentId, id, 400);
    cluster.partition(offer.agentId, 'master');
    cluster.advance(80_000);
    expect(node.cgroups.view(id)?.hardLimitBytes).toBe(400 * MIB);
    cluster.heal(offer.agentId, 'master');
    cluster.advance(5_000);
    expect(traceKinds(cluster)).toContain('agent:master-lost');
    expect(node.state).toBe('active');
    expect(node.cgroups.view(id)?.hardLimitBytes).toBe(96 * MIB);
  });

  it('the same seed and inputs give the same trace, OOM kills included', () => {
    const run = () => {
      const { cluster, agentId, containerId } = running('growing:3/s,spike:40@20s/2s', 64);
      cluster.advance(4_000);
      cluster.updateContainerMemoryLimit(agentId, containerId, 70);
      cluster.advance(60_000);
      return cluster.trace.entries().map((e) => JSON.stringify(e));
    };
    const first = run();
    expect(first.some((e) => e.includes('container:oom'))).toBe(true);
    expect(run()).toEqual(first);
  });
});

it('prints bytes as upstream does', () => {
  expect([0, 100, 1024, 1536, 96 * MIB, 3 * 1024 * MIB].map(formatBytes)).toEqual([
    '0B',
    '100B',
    '1KB',
    '1536B',
    '96MB',
    '3GB',
  ]);
});
