import { describe, expect, it } from 'vitest';
import { Cluster, DEFAULT_EPOCH_MS } from '../../../src/core/cluster.js';
import { ranges, scalar, set } from '../../../src/core/model/resources.js';
import type { FrameworkInfo, SchedulerCall, TaskSpec } from '../../../src/core/model/types.js';
import {
  attributesObject,
  decodeQuery,
  renderFrameworks,
  renderSlaves,
  renderState,
  renderTasks,
  renderVersion,
  resourceJson,
  resourcesSummary,
  tasksQuery,
  toV0Json,
} from '../../../src/wire/v0/index.js';
import { commandTask, makeCluster, resources, subscribe } from '../../core/helpers.js';

// The renderers wrap doubles in `Double`; tests read the parsed text, where
// every value is a plain number again, loosely.
type Loose = Record<string, any>;
const plain = (value: unknown): Loose => JSON.parse(toV0Json(value)) as Loose;
const EPOCH_S = DEFAULT_EPOCH_MS / 1000;

/** A cluster with one subscribed framework and its first offer. */
function started(info: Partial<FrameworkInfo> = {}, agents = 1) {
  const cluster = makeCluster({ agents });
  const sub = subscribe(cluster, info);
  const call = (c: SchedulerCall) => cluster.call(sub.frameworkId, sub.streamId, c);
  /** Launches on the newest offer, declining the rest of it without a filter. */
  const launch = (spec: (agentId: string) => TaskSpec) => {
    const [offer] = sub.sink.lastOffers();
    const outcome = call({
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [spec(offer!.agentId)] }],
      filters: { refuseMs: 0 },
    });
    expect(outcome.ok).toBe(true);
    return offer!;
  };
  const ackAll = () => {
    for (;;) {
      const pending = sub.sink.updates().filter((u) => u.uuid !== undefined && !acked.has(u.uuid));
      if (pending.length === 0) return;
      for (const u of pending) {
        acked.add(u.uuid!);
        call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid! });
      }
    }
  };
  const acked = new Set<string>();
  return { cluster, ...sub, call, launch, ackAll };
}

/** The endpoint text parses to what plain `JSON.stringify` writes, doubles included. */
const roundTrips = (value: object) => expect(plain(value)).toEqual(JSON.parse(JSON.stringify(value)));

describe('v0 building blocks', () => {
  it('summarises resources with the four fixed names first', () => {
    const summary = plain(resourcesSummary(resources('cpus:4;mem:8192;disk:16384;ports:[31000-32000]')));
    expect(summary).toEqual({ cpus: 4, gpus: 0, mem: 8192, disk: 16384, ports: '[31000-32000]' });
    expect(Object.keys(summary)).toEqual(['cpus', 'gpus', 'mem', 'disk', 'ports']);
    expect(plain(resourcesSummary([]))).toEqual({ cpus: 0, gpus: 0, mem: 0, disk: 0 });
  });

  it('sums over roles, merges ranges and sets, and keeps other scalars', () => {
    const bag = [
      scalar('cpus', 1.5),
      scalar('cpus', 0.25, 'web'),
      ranges('ports', [[32005, 32010]]),
      ranges('ports', [[31000, 32000]], 'web'),
      set('zones', ['b', 'a']),
      scalar('bandwidth', 100),
    ];
    const summary = plain(resourcesSummary(bag));
    expect(summary).toEqual({
      cpus: 1.75,
      gpus: 0,
      mem: 0,
      disk: 0,
      bandwidth: 100,
      ports: '[31000-32000, 32005-32010]',
      zones: '{a, b}',
    });
    expect(Object.keys(summary)).toEqual(['cpus', 'gpus', 'mem', 'disk', 'bandwidth', 'ports', 'zones']);
  });

  it('renders attributes by type', () => {
    expect(
      plain(
        attributesObject([
          { name: 'rack', type: 'TEXT', text: 'r1' },
          { name: 'level', type: 'SCALAR', milli: 2500 },
          {
            name: 'slots',
            type: 'RANGES',
            ranges: [
              [1, 4],
              [8, 9],
            ],
          },
          { name: 'gpus', type: 'SET', set: ['k80', 'v100'] },
        ]),
      ),
    ).toEqual({ rack: 'r1', level: 2.5, slots: '[1-4, 8-9]', gpus: '{k80, v100}' });
  });

  it('renders a full Resource in protobuf JSON', () => {
    expect(plain(resourceJson({ ...scalar('cpus', 1), allocationRole: 'web' }))).toEqual({
      name: 'cpus',
      type: 'SCALAR',
      scalar: { value: 1 },
      role: '*',
      allocation_info: { role: 'web' },
    });
    const reserved = plain(resourceJson(ranges('ports', [[31000, 31001]], 'db')));
    expect(reserved).toEqual({
      name: 'ports',
      type: 'RANGES',
      ranges: { range: [{ begin: 31000, end: 31001 }] },
      role: 'db',
      reservations: [{ type: 'STATIC', role: 'db' }],
    });
    expect(Object.keys(reserved)).toEqual(['name', 'type', 'ranges', 'role', 'reservations']);
    expect(plain(resourceJson(set('zones', ['a'])))).toMatchObject({ set: { item: ['a'] } });
  });

  it('renders the version', () => {
    const v = plain(renderVersion('1.11.0'));
    expect(Object.keys(v)).toEqual(['version', 'build_date', 'build_time', 'build_user']);
    expect(v.version).toBe('1.11.0');
    expect(typeof v.build_time).toBe('number');
  });
});

describe('/slaves', () => {
  it('shows totals, what is offered and, after a launch, what is used', () => {
    const { cluster, launch } = started({}, 2);
    const [first, second] = cluster.agents;
    let slaves = plain(renderSlaves(cluster.view, {})).slaves as Loose[];
    expect(slaves.map((s) => s.id)).toEqual([first!.id, second!.id]);
    const s0 = slaves[0]!;
    expect(Object.keys(s0)).toEqual([
      'id',
      'hostname',
      'port',
      'attributes',
      'pid',
      'registered_time',
      'resources',
      'used_resources',
      'offered_resources',
      'reserved_resources',
      'unreserved_resources',
      'active',
      'deactivated',
      'version',
      'capabilities',
      'reserved_resources_full',
      'unreserved_resources_full',
      'used_resources_full',
      'offered_resources_full',
    ]);
    expect(s0).toMatchObject({
      hostname: 'agent1',
      port: 5051,
      attributes: { rack: 'r1' },
      pid: 'slave(1)@127.0.0.1:5051',
      registered_time: EPOCH_S,
      resources: { cpus: 4, gpus: 0, mem: 8192, disk: 16384, ports: '[31000-32000]' },
      used_resources: { cpus: 0, mem: 0 },
      offered_resources: { cpus: 4, mem: 8192, ports: '[31000-32000]' },
      reserved_resources: {},
      unreserved_resources: { cpus: 4, mem: 8192 },
      active: true,
      deactivated: false,
      version: '1.11.0',
      reserved_resources_full: {},
      used_resources_full: [],
    });
    expect(s0.capabilities).toContain('MULTI_ROLE');
    expect(s0.unreserved_resources_full).toContainEqual({
      name: 'cpus',
      type: 'SCALAR',
      scalar: { value: 4 },
      role: '*',
    });
    expect(s0.offered_resources_full).toContainEqual({
      name: 'mem',
      type: 'SCALAR',
      scalar: { value: 8192 },
      role: '*',
      allocation_info: { role: '*' },
    });

    const offer = launch((agentId) => commandTask('t1', agentId, 'sleep 100', 'cpus:1;mem:128'));
    slaves = plain(renderSlaves(cluster.view, { slave_id: offer.agentId })).slaves as Loose[];
    expect(slaves).toHaveLength(1);
    const used = slaves[0]!;
    expect(used.used_resources).toEqual({ cpus: 1, gpus: 0, mem: 128, disk: 0 });
    // The rest of the offer went back without a filter and is not offered again before the next allocation.
    expect(used.offered_resources).toEqual({ cpus: 0, gpus: 0, mem: 0, disk: 0 });
    expect(used.used_resources_full).toEqual([
      { name: 'cpus', type: 'SCALAR', scalar: { value: 1 }, role: '*', allocation_info: { role: '*' } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 128 }, role: '*', allocation_info: { role: '*' } },
    ]);
    cluster.advance(1000);
    const again = (plain(renderSlaves(cluster.view, { slave_id: offer.agentId })).slaves as Loose[])[0]!;
    expect(again.offered_resources).toMatchObject({ cpus: 3, mem: 8064, disk: 16384, ports: '[31000-32000]' });
    expect(plain(renderSlaves(cluster.view, { slave_id: 'nope' }))).toEqual({ slaves: [], recovered_slaves: [] });
  });

  it('lists reservations by role', () => {
    const cluster = new Cluster({ master: { hostname: 'm', ip: '127.0.0.1', port: 5050, version: '1.11.0' } });
    cluster.addAgent({
      hostname: 'a',
      ip: '127.0.0.2',
      port: 5051,
      attributes: [],
      resources: resources('cpus:2;cpus(db):1;mem(db):512;mem:1024'),
    });
    const [slave] = plain(renderSlaves(cluster.view, {})).slaves as Loose[];
    expect(slave!.reserved_resources).toEqual({ db: { cpus: 1, gpus: 0, mem: 512, disk: 0 } });
    expect(slave!.unreserved_resources).toEqual({ cpus: 2, gpus: 0, mem: 1024, disk: 0 });
    expect(slave!.reserved_resources_full.db).toContainEqual({
      name: 'cpus',
      type: 'SCALAR',
      scalar: { value: 1 },
      role: 'db',
      reservations: [{ type: 'STATIC', role: 'db' }],
    });
  });
});

const FRAMEWORK_KEYS = [
  'id',
  'name',
  'used_resources',
  'offered_resources',
  'capabilities',
  'hostname',
  'webui_url',
  'active',
  'connected',
  'recovered',
  'user',
  'failover_timeout',
  'checkpoint',
  'registered_time',
  'unregistered_time',
  'resources',
  'role',
  'tasks',
  'unreachable_tasks',
  'completed_tasks',
  'offers',
  'executors',
  'offer_constraints',
];

describe('/frameworks', () => {
  it('renders a subscribed framework with its offers, then its task', () => {
    const { cluster, frameworkId, launch } = started();
    let fw = (plain(renderFrameworks(cluster.view, {})).frameworks as Loose[])[0]!;
    expect(Object.keys(fw)).toEqual(FRAMEWORK_KEYS);
    expect(fw).toMatchObject({
      id: frameworkId,
      name: 'test',
      capabilities: [],
      hostname: '',
      webui_url: '',
      active: true,
      connected: true,
      recovered: false,
      user: 'root',
      failover_timeout: 0,
      checkpoint: false,
      registered_time: EPOCH_S,
      unregistered_time: 0,
      role: '*',
      tasks: [],
      offer_constraints: {},
      used_resources: { cpus: 0 },
      offered_resources: { cpus: 4, mem: 8192 },
      resources: { cpus: 4, mem: 8192 },
    });
    expect(fw.offers).toEqual([
      {
        id: expect.stringMatching(/-O0$/),
        framework_id: frameworkId,
        allocation_info: { role: '*' },
        slave_id: cluster.agents[0]!.id,
        resources: { cpus: 4, gpus: 0, mem: 8192, disk: 16384, ports: '[31000-32000]' },
      },
    ]);

    launch((agentId) => ({ ...commandTask('t1', agentId, 'sleep 100'), labels: [{ key: 'k', value: 'v' }] }));
    fw = (plain(renderFrameworks(cluster.view, { framework_id: frameworkId })).frameworks as Loose[])[0]!;
    expect(fw.used_resources).toEqual({ cpus: 1, gpus: 0, mem: 128, disk: 0 });
    expect(fw.offers).toEqual([]);
    const task = fw.tasks[0] as Loose;
    expect(Object.keys(task)).toEqual([
      'id',
      'name',
      'framework_id',
      'executor_id',
      'slave_id',
      'state',
      'resources',
      'role',
      'statuses',
      'user',
      'labels',
    ]);
    expect(task).toMatchObject({
      id: 't1',
      framework_id: frameworkId,
      executor_id: '',
      state: 'TASK_STARTING',
      role: '*',
      user: 'root',
      resources: { cpus: 1, mem: 128 },
      labels: [{ key: 'k', value: 'v' }],
    });
    expect(task.statuses).toEqual([
      { state: 'TASK_STARTING', timestamp: EPOCH_S, container_status: { container_id: { value: expect.any(String) } } },
    ]);
    roundTrips(renderFrameworks(cluster.view, {}));
    expect(plain(renderFrameworks(cluster.view, { framework_id: 'nope' }))).toEqual({
      frameworks: [],
      completed_frameworks: [],
      unregistered_frameworks: [],
    });
  });

  it('writes roles, principal, labels and constraints when the framework has them', () => {
    const cluster = makeCluster();
    subscribe(
      cluster,
      {
        capabilities: ['MULTI_ROLE'],
        roles: ['web'],
        principal: 'ops',
        labels: [{ key: 'team', value: 'a' }],
        hostname: 'sched',
        webuiUrl: 'http://sched:8080',
        failoverTimeoutMs: 60_000,
        checkpoint: true,
      },
      {
        offerConstraints: {
          web: [[{ selector: { attributeName: 'rack' }, predicate: { kind: 'text_equals', value: 'r1' } }]],
        },
      },
    );
    const fw = (plain(renderFrameworks(cluster.view, {})).frameworks as Loose[])[0]!;
    expect(fw).toMatchObject({
      capabilities: ['MULTI_ROLE'],
      roles: ['web'],
      principal: 'ops',
      labels: [{ key: 'team', value: 'a' }],
      hostname: 'sched',
      webui_url: 'http://sched:8080',
      failover_timeout: 60,
      checkpoint: true,
      offer_constraints: {
        role_constraints: {
          web: {
            groups: [
              {
                attribute_constraints: [
                  { selector: { attribute_name: 'rack' }, predicate: { text_equals: { value: 'r1' } } },
                ],
              },
            ],
          },
        },
      },
    });
    expect(fw).not.toHaveProperty('role');
    expect(Object.keys(fw).indexOf('principal')).toBe(Object.keys(fw).indexOf('unregistered_time') + 1);
    expect(fw.offers[0].allocation_info).toEqual({ role: 'web' });
  });

  it('shows a disconnected framework as neither active nor connected', () => {
    const cluster = makeCluster();
    const { connectionId } = subscribe(cluster, { failoverTimeoutMs: 60_000 });
    cluster.advance(2000);
    cluster.disconnect(connectionId);
    const fw = (plain(renderFrameworks(cluster.view, {})).frameworks as Loose[])[0]!;
    expect(fw).toMatchObject({ active: false, connected: false, unregistered_time: EPOCH_S + 2 });
    expect(fw.offers).toEqual([]);
  });

  it('moves a torn-down framework and its tasks to the completed lists', () => {
    const { cluster, frameworkId, launch, call } = started();
    launch((agentId) => commandTask('t1', agentId, 'sleep 100'));
    cluster.advance(3000);
    call({ type: 'TEARDOWN' });
    const out = plain(renderFrameworks(cluster.view, {}));
    expect(out.frameworks).toEqual([]);
    const fw = out.completed_frameworks[0] as Loose;
    expect(fw).toMatchObject({
      id: frameworkId,
      active: false,
      connected: false,
      unregistered_time: EPOCH_S + 3,
      tasks: [],
      offers: [],
      used_resources: { cpus: 0, mem: 0 },
      offered_resources: { cpus: 0 },
    });
    expect(fw.completed_tasks.map((t: Loose) => [t.id, t.state])).toEqual([['t1', 'TASK_KILLED']]);
    const state = plain(renderState(cluster.view));
    expect(state.completed_frameworks.map((f: Loose) => f.id)).toEqual([frameworkId]);
    expect(state.slaves[0].used_resources).toMatchObject({ cpus: 0, mem: 0 });
  });

  it('lists a custom executor with its spec, resources and role', () => {
    const { cluster, frameworkId, launch } = started();
    const offer = launch((agentId) => ({
      taskId: 't1',
      name: 't1',
      agentId,
      resources: resources('cpus:1;mem:128'),
      labels: [],
      executor: {
        executorId: 'e1',
        type: 'CUSTOM',
        name: 'my executor',
        resources: resources('cpus:0.5;mem:64'),
        command: { shell: true, value: './run', arguments: [] },
      },
    }));
    const fw = (plain(renderFrameworks(cluster.view, {})).frameworks as Loose[])[0]!;
    expect(fw.executors).toEqual([
      {
        executor_id: 'e1',
        name: 'my executor',
        framework_id: frameworkId,
        command: { shell: true, value: './run', argv: [], uris: [] },
        resources: { cpus: 0.5, gpus: 0, mem: 64, disk: 0 },
        role: '*',
        type: 'CUSTOM',
        slave_id: offer.agentId,
      },
    ]);
    expect(fw.tasks[0].executor_id).toBe('e1');
    expect(fw.used_resources).toEqual({ cpus: 1.5, gpus: 0, mem: 192, disk: 0 });
    const slave = (plain(renderSlaves(cluster.view, {})).slaves as Loose[])[0]!;
    expect(slave.used_resources).toEqual({ cpus: 1.5, gpus: 0, mem: 192, disk: 0 });
  });
});

describe('/tasks', () => {
  /** Three tasks launched one second apart: t-a at +0s, t-c at +1s, t-b at +2s. */
  function threeTasks() {
    const env = started();
    for (const id of ['t-a', 't-c', 't-b']) {
      env.launch((agentId) => commandTask(id, agentId, 'sleep 100', 'cpus:0.5;mem:64'));
      env.cluster.advance(1000);
    }
    const ids = (q: Parameters<typeof renderTasks>[1]) =>
      (plain(renderTasks(env.cluster.view, q)).tasks as Loose[]).map((t) => t.id);
    return { ...env, ids };
  }

  it('sorts newest first by default, oldest first with order=asc', () => {
    const { ids } = threeTasks();
    expect(ids({})).toEqual(['t-b', 't-c', 't-a']);
    expect(ids({ order: 'des' })).toEqual(['t-b', 't-c', 't-a']);
    expect(ids({ order: 'asc' })).toEqual(['t-a', 't-c', 't-b']);
  });

  it('pages with limit and offset', () => {
    const { ids } = threeTasks();
    expect(ids({ limit: 2 })).toEqual(['t-b', 't-c']);
    expect(ids({ limit: 1, offset: 1 })).toEqual(['t-c']);
    expect(ids({ offset: 5 })).toEqual([]);
    expect(ids({ limit: 0 })).toEqual([]);
  });

  it('pages by the last of a repeated parameter, as the query decoder reads it', () => {
    const { ids } = threeTasks();
    const query = (text: string) => {
      const params = decodeQuery(`/tasks?${text}`);
      const checked = params.ok ? tasksQuery(params.value) : params;
      if (!checked.ok) throw new Error(checked.error);
      return checked.value;
    };
    expect(ids(query('limit=1&limit=2'))).toEqual(['t-b', 't-c']);
    expect(ids(query('order=des;order=asc&limit=1'))).toEqual(['t-a']);
  });

  it('filters by framework_id and task_id', () => {
    const { ids, frameworkId } = threeTasks();
    expect(ids({ task_id: 't-c' })).toEqual(['t-c']);
    expect(ids({ task_id: 'nope' })).toEqual([]);
    expect(ids({ framework_id: frameworkId })).toHaveLength(3);
    expect(ids({ framework_id: 'nope' })).toEqual([]);
  });

  it('breaks timestamp ties by task id', () => {
    const { cluster, call, sink } = started();
    const [offer] = sink.lastOffers();
    call({
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: ['z', 'x', 'y'].map((id) => commandTask(id, offer!.agentId, 'sleep 9')) }],
      filters: { refuseMs: 0 },
    });
    const ids = (order?: 'asc' | 'des') =>
      (plain(renderTasks(cluster.view, order === undefined ? {} : { order })).tasks as Loose[]).map((t) => t.id);
    expect(ids('asc')).toEqual(['x', 'y', 'z']);
    expect(ids()).toEqual(['z', 'y', 'x']);
  });

  it('keeps finished and acknowledged tasks, with every status', () => {
    const { cluster, launch, ackAll, frameworkId } = started();
    launch((agentId) => commandTask('done', agentId, 'sleep 1'));
    ackAll();
    cluster.advance(1000);
    ackAll();
    const fw = cluster.view.framework(frameworkId)!;
    expect(fw.tasks.size).toBe(0);
    const [task] = plain(renderTasks(cluster.view, {})).tasks as Loose[];
    expect(task).toMatchObject({ id: 'done', state: 'TASK_FINISHED', slave_id: cluster.agents[0]!.id });
    expect(task!.statuses.map((s: Loose) => [s.state, s.timestamp])).toEqual([
      ['TASK_STARTING', EPOCH_S],
      ['TASK_RUNNING', EPOCH_S],
      ['TASK_FINISHED', EPOCH_S + 1],
    ]);
    const rendered = (plain(renderFrameworks(cluster.view, {})).frameworks as Loose[])[0]!;
    expect(rendered.tasks).toEqual([]);
    expect(rendered.completed_tasks.map((t: Loose) => t.id)).toEqual(['done']);
    expect(rendered.used_resources).toMatchObject({ cpus: 0, mem: 0 });
  });
});

describe('/state', () => {
  it('renders the master, its flags, agents and frameworks', () => {
    const { cluster, frameworkId, launch } = started();
    launch((agentId) => commandTask('t1', agentId, 'sleep 100'));
    const state = plain(renderState(cluster.view));
    expect(Object.keys(state)).toEqual([
      'version',
      'build_date',
      'build_time',
      'build_user',
      'start_time',
      'elected_time',
      'id',
      'pid',
      'hostname',
      'capabilities',
      'activated_slaves',
      'deactivated_slaves',
      'unreachable_slaves',
      'leader',
      'leader_info',
      'flags',
      'slaves',
      'recovered_slaves',
      'frameworks',
      'completed_frameworks',
      'orphan_tasks',
      'unregistered_frameworks',
    ]);
    const info = cluster.view.masterInfo;
    expect(state).toMatchObject({
      version: '1.11.0',
      start_time: EPOCH_S,
      elected_time: EPOCH_S,
      id: info.id,
      pid: 'master@127.0.0.1:5050',
      hostname: 'localhost',
      capabilities: ['AGENT_UPDATE', 'AGENT_DRAINING', 'QUOTA_V2'],
      activated_slaves: 1,
      deactivated_slaves: 0,
      unreachable_slaves: 0,
      leader: 'master@127.0.0.1:5050',
      leader_info: { id: info.id, pid: 'master@127.0.0.1:5050', port: 5050, hostname: 'localhost' },
      recovered_slaves: [],
      completed_frameworks: [],
      orphan_tasks: [],
      unregistered_frameworks: [],
    });
    expect(state.flags).toEqual({
      allocation_interval: '1secs',
      executor_shutdown_grace_period: '5secs',
      hostname: 'localhost',
      ip: '127.0.0.1',
      max_completed_frameworks: '50',
      max_completed_tasks_per_framework: '1000',
      min_allocatable_resources: 'cpus:0.01|mem:32',
      port: '5050',
    });
    expect(state.slaves[0]).not.toHaveProperty('used_resources_full');
    expect(state.slaves[0].used_resources).toMatchObject({ cpus: 1, mem: 128 });
    expect(state.frameworks.map((f: Loose) => [f.id, f.tasks.length])).toEqual([[frameworkId, 1]]);
    expect(plain(renderState(cluster.view, { startTimeSeconds: 12.5 })).start_time).toBe(12.5);
    roundTrips(renderState(cluster.view));
  });

  it('lists offer_timeout only when set, in the upstream duration form', () => {
    const cluster = new Cluster({
      master: {
        hostname: 'm',
        ip: '10.0.0.1',
        port: 5055,
        version: '1.11.0',
        offerTimeoutMs: 90_000,
        allocationIntervalMs: 500,
      },
    });
    const flags = plain(renderState(cluster.view)).flags as Loose;
    expect(flags).toMatchObject({
      offer_timeout: '1.5mins',
      allocation_interval: '500ms',
      port: '5055',
      ip: '10.0.0.1',
    });
    expect(Object.keys(flags)).toEqual([...Object.keys(flags)].sort());
  });
});

describe('renderRoles', () => {
  it('lists subscribed roles with their frameworks, allocation and offers', async () => {
    const { renderRoles } = await import('../../../src/wire/v0/index.js');
    const { commandTask, makeCluster, subscribe } = await import('../../core/helpers.js');
    const cluster = makeCluster({ agents: 1 });
    const { sink, frameworkId, streamId } = subscribe(cluster, { capabilities: ['MULTI_ROLE'], roles: ['web'] });
    const [offer] = sink.lastOffers();
    let roles = plain(renderRoles(cluster.view)) as { roles: Record<string, unknown>[] };
    expect(roles.roles).toEqual([
      expect.objectContaining({
        name: 'web',
        weight: 1,
        frameworks: [frameworkId],
        allocated: {},
        offered: { cpus: 4, disk: 16384, mem: 8192 },
      }),
    ]);
    cluster.call(frameworkId, streamId, {
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [commandTask('t1', offer!.agentId, 'sleep 100', 'cpus:1;mem:128')] }],
      filters: { refuseMs: 60_000 },
    });
    roles = plain(renderRoles(cluster.view)) as { roles: Record<string, unknown>[] };
    expect(roles.roles[0]).toMatchObject({
      allocated: { cpus: 1, mem: 128 },
      offered: {},
      quota: { role: 'web', guarantee: {}, limit: {}, consumed: { cpus: 1, mem: 128 } },
    });
  });
});

describe('renderStateSummary', () => {
  it('summarises agents and frameworks with task counts per state', async () => {
    const { renderStateSummary, toV0Json } = await import('../../../src/wire/v0/index.js');
    const { commandTask, makeCluster, subscribe } = await import('../../core/helpers.js');
    const cluster = makeCluster({ agents: 2 });
    const { sink, frameworkId, streamId } = subscribe(cluster);
    const [offer] = sink.lastOffers();
    cluster.call(frameworkId, streamId, {
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [commandTask('t1', offer!.agentId, 'sleep 100')] }],
      filters: { refuseMs: 0 },
    });
    const summary = JSON.parse(toV0Json(renderStateSummary(cluster.view))) as {
      slaves: Record<string, unknown>[];
      frameworks: Record<string, unknown>[];
    };
    expect(summary.slaves).toHaveLength(2);
    const busy = summary.slaves.find((s) => s.id === offer!.agentId)!;
    expect(busy).toMatchObject({ TASK_STARTING: 1, TASK_RUNNING: 0, framework_ids: [frameworkId] });
    expect(Object.keys(busy).slice(0, 3)).toEqual(['id', 'pid', 'hostname']);
    expect(summary.frameworks[0]).toMatchObject({
      id: frameworkId,
      active: true,
      connected: true,
      TASK_STARTING: 1,
      slave_ids: [offer!.agentId],
    });
  });
});
