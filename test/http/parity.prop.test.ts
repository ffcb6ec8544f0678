/**
 * JSON and protobuf are two spellings of one API: the same call sequence,
 * sent once in each encoding to two clusters started alike, must get the
 * same replies, the same events and the same trace. Failures print the
 * fast-check seed and the command that replays them.
 */
import http from 'node:http';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postRaw, SchedulerClient, type CallResult } from '../../src/client/scheduler-client.js';
import { startCluster, type RunningCluster } from '../../src/start/cluster.js';
import { decodeJson, encodeJson } from '../../src/wire/json.js';
import { decodeProto, encodeProto } from '../../src/wire/proto-codec.js';
import { RecordReader } from '../../src/wire/recordio.js';
import { messageType } from '../../src/wire/schema.js';
import { messageArbitrary, withDefaults } from '../wire/message-arbitrary.js';
import {
  firstDifference,
  normaliseType,
  reservePorts,
  runParity,
  type Encoding,
  type Endpoint,
  type JsonMessage,
  type Reply,
  type RunView,
  type Step,
  type WireClient,
} from './parity-harness.js';

/** One line per endpoint; executor and operator endpoints join here. */
const ENDPOINTS: readonly Endpoint[] = [
  { path: '/api/v1/scheduler', callType: 'mesos.v1.scheduler.Call', eventType: 'mesos.v1.scheduler.Event' },
];
const SCHEDULER = ENDPOINTS[0]!;

/** Runs a property; a failure names the seed and path, and how to replay them. */
async function check<T>(name: string, property: fc.IRawProperty<T>, numRuns: number): Promise<void> {
  const replay =
    process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH };
  const details = await fc.check(property, { numRuns, ...replay });
  if (details.failed) {
    const how = `FC_SEED=${details.seed} FC_PATH=${details.counterexamplePath ?? ''} npx vitest run test/http/parity.prop.test.ts -t '${name}'`;
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`${fc.defaultReportMessage(details)}\n${cause}\nreplay: ${how}`);
  }
}

// ---- the scheduler's side of a run, rebuilt from what it has seen and sent ----

interface Model {
  readonly frameworkId: { value: string };
  readonly offers: JsonMessage[];
  readonly tasks: { taskId: string; agentId: string }[];
  readonly executors: { executorId: string; agentId: string }[];
  readonly unacked: { taskId: string; agentId: string; uuid: string }[];
}

function modelOf(view: RunView): Model {
  const subscribed = view.events.find((e) => e.type === 'SUBSCRIBED');
  const used = new Set<string>();
  const acked = new Set<string>();
  const m: Model = {
    frameworkId: { value: subscribed?.subscribed.framework_id.value ?? 'none' },
    offers: [],
    tasks: [],
    executors: [],
    unacked: [],
  };
  for (const call of view.calls) {
    for (const id of call.accept?.offer_ids ?? call.decline?.offer_ids ?? []) used.add(id.value);
    if (call.acknowledge !== undefined) acked.add(call.acknowledge.uuid);
    for (const op of call.accept?.operations ?? []) {
      for (const t of op.launch.task_infos) {
        m.tasks.push({ taskId: t.task_id.value, agentId: t.agent_id.value });
        if (t.executor !== undefined)
          m.executors.push({ executorId: t.executor.executor_id.value, agentId: t.agent_id.value });
      }
    }
  }
  const rescinded = new Set(view.events.filter((e) => e.type === 'RESCIND').map((e) => e.rescind.offer_id.value));
  for (const e of view.events) {
    if (e.type === 'OFFERS')
      m.offers.push(...e.offers.offers.filter((o: JsonMessage) => !used.has(o.id.value) && !rescinded.has(o.id.value)));
    const s = e.type === 'UPDATE' ? e.update.status : undefined;
    if (s?.uuid !== undefined && !acked.has(s.uuid))
      m.unacked.push({ taskId: s.task_id.value, agentId: s.agent_id?.value ?? '', uuid: s.uuid });
  }
  return m;
}

// ---- generated calls ----

const ROLES = ['web', 'batch', 'dev/team-a', 'ops'];
const COMMANDS: readonly JsonMessage[] = [
  { value: 'sleep 3' },
  { value: 'sleep 0.25' },
  { value: 'exit 0' },
  { value: 'exit 7' },
  { value: 'false' },
  { value: 'echo hello && sleep 1' },
  { value: 'sleep 40' },
  { value: 'serve --forever' },
  { shell: false, value: '/bin/sleep', arguments: ['sleep', '2'] },
];
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const pick = <T>(list: readonly T[], n: number): T | undefined => list[n % Math.max(1, list.length)];

const taskArb = fc.record({
  name: fc.string({ unit: 'binary', maxLength: 8 }),
  command: fc.nat(COMMANDS.length - 1),
  executor: fc.option(fc.constantFrom('exec-a', 'exec-b'), { nil: undefined }),
  labels: fc.option(
    fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: fc.string({ unit: 'binary', maxLength: 6 }) }), {
      minLength: 1,
      maxLength: 2,
    }),
    { nil: undefined },
  ),
  data: fc.option(fc.uint8Array({ maxLength: 12 }), { nil: undefined }),
  graceNs: fc.option(fc.integer({ min: 0, max: 20_000_000_000 }), { nil: undefined }),
});
type TaskGen = typeof taskArb extends fc.Arbitrary<infer T> ? T : never;

const refuseArb = fc.option(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 12, noNaN: true }), fc.constant(1e9)), {
  nil: undefined,
});
const taskRefArb = fc.record({ known: fc.boolean(), n: fc.nat(20), withAgent: fc.boolean() });
// ' bad' is not a valid role name: the call is rejected, in both encodings alike.
const rolesArb = fc.subarray(['*', ...ROLES, ' bad'], { maxLength: 2 });

const commandArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('accept' as const),
      n: fc.nat(9),
      tasks: fc.array(taskArb, { maxLength: 3 }),
      refuse: refuseArb,
      aggregate: fc.boolean(),
      greedy: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('decline' as const), n: fc.nat(9), refuse: refuseArb }) },
  fc.record({ t: fc.constant('revive' as const), roles: rolesArb }),
  fc.record({ t: fc.constant('suppress' as const), roles: rolesArb }),
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('kill' as const),
      task: taskRefArb,
      graceNs: fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('ack' as const),
      n: fc.nat(20),
      uuid: fc.uint8Array({ minLength: 16, maxLength: 16 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('reconcile' as const), tasks: fc.array(taskRefArb, { maxLength: 4 }) }),
  },
  fc.record({ t: fc.constant('message' as const), n: fc.nat(9), data: fc.uint8Array({ maxLength: 48 }) }),
  fc.record({
    t: fc.constant('request' as const),
    withAgent: fc.boolean(),
    cpus: fc.double({ min: 0.01, max: 8, noNaN: true }),
  }),
  fc.record({ t: fc.constant('shutdown' as const), n: fc.nat(9) }),
  fc.record({
    t: fc.constant('update' as const),
    name: fc.string({ unit: 'binary', maxLength: 8 }),
    roles: fc.subarray(ROLES, { minLength: 1 }),
    suppress: fc.nat(2),
  }),
);
type Command = typeof commandArb extends fc.Arbitrary<infer T> ? T : never;

const frameworkArb = fc.record({
  multiRole: fc.boolean(),
  roles: fc.subarray(ROLES, { minLength: 1, maxLength: 3 }),
  role: fc.option(fc.constantFrom('*', ...ROLES), { nil: undefined }),
  capabilities: fc.subarray([
    'PARTITION_AWARE',
    'TASK_KILLING_STATE',
    'REVOCABLE_RESOURCES',
    'GPU_RESOURCES',
    'REGION_AWARE',
  ]),
  name: fc.string({ unit: 'binary', maxLength: 12 }),
  user: fc.constantFrom('root', 'nobody', 'ünïcode'),
  failoverTimeout: fc.option(fc.double({ min: 0, max: 3600, noNaN: true }), { nil: undefined }),
  checkpoint: fc.option(fc.boolean(), { nil: undefined }),
  principal: fc.option(fc.constantFrom('ops', 'p/1'), { nil: undefined }),
  suppressed: fc.nat(2),
  hostnameConstraint: fc.boolean(),
});
type FrameworkGen = typeof frameworkArb extends fc.Arbitrary<infer T> ? T : never;

function frameworkRoles(f: FrameworkGen, roles = f.roles): string[] {
  return f.multiRole ? roles : [f.role ?? '*'];
}

function frameworkInfo(f: FrameworkGen, id?: { value: string }, name = f.name, roles = f.roles): JsonMessage {
  return {
    user: f.user,
    name,
    ...(id === undefined ? {} : { id }),
    ...(f.failoverTimeout === undefined ? {} : { failover_timeout: f.failoverTimeout }),
    ...(f.checkpoint === undefined ? {} : { checkpoint: f.checkpoint }),
    ...(f.principal === undefined ? {} : { principal: f.principal }),
    ...(f.multiRole ? { roles } : f.role === undefined ? {} : { role: f.role }),
    capabilities: [...(f.multiRole ? ['MULTI_ROLE'] : []), ...f.capabilities].map((type) => ({ type })),
  };
}

function subscribeCall(f: FrameworkGen): JsonMessage {
  const roles = frameworkRoles(f);
  const hostname = {
    selector: { pseudoattribute_type: 'HOSTNAME' },
    predicate: { text_matches: { regex: '127\\.0\\..*' } },
  };
  return {
    type: 'SUBSCRIBE',
    subscribe: {
      framework_info: frameworkInfo(f),
      suppressed_roles: roles.slice(0, f.suppressed),
      ...(f.hostnameConstraint
        ? {
            offer_constraints: {
              role_constraints: { [roles[0]!]: { groups: [{ attribute_constraints: [hostname] }] } },
            },
          }
        : {}),
    },
  };
}

/** A share of each scalar of the offer, with its allocation info, and one port. */
function taskResources(offer: JsonMessage, parts: number, portIndex: number | undefined): JsonMessage[] {
  const out: JsonMessage[] = [];
  for (const r of offer.resources as JsonMessage[]) {
    const alloc = r.allocation_info === undefined ? {} : { allocation_info: r.allocation_info };
    if (r.type === 'SCALAR') {
      const value = Math.floor((r.scalar.value * 1000) / parts) / 1000;
      if (value > 0) out.push({ name: r.name, type: 'SCALAR', scalar: { value }, ...alloc });
    } else if (r.type === 'RANGES' && portIndex !== undefined) {
      const first = r.ranges.range[0];
      const port = first.begin + portIndex;
      if (port <= first.end)
        out.push({ name: r.name, type: 'RANGES', ranges: { range: [{ begin: port, end: port }] }, ...alloc });
    }
  }
  return out;
}

function taskInfo(gen: TaskGen, offer: JsonMessage, taskId: string, i: number, parts: number): JsonMessage {
  const resources = taskResources(offer, parts, i);
  const runs =
    gen.executor === undefined
      ? { command: COMMANDS[gen.command] }
      : {
          executor: {
            executor_id: { value: gen.executor },
            command: { value: 'my-executor' },
            resources: taskResources(offer, parts, undefined),
          },
        };
  return {
    name: gen.name,
    task_id: { value: taskId },
    agent_id: offer.agent_id,
    resources,
    ...runs,
    ...(gen.labels === undefined ? {} : { labels: { labels: gen.labels } }),
    ...(gen.data === undefined ? {} : { data: base64(gen.data) }),
    ...(gen.graceNs === undefined ? {} : { kill_policy: { grace_period: { nanoseconds: gen.graceNs } } }),
  };
}

function taskRef(m: Model, view: RunView, ref: { known: boolean; n: number; withAgent: boolean }) {
  const known = ref.known ? pick(m.tasks, ref.n) : undefined;
  const taskId = known?.taskId ?? `ghost-${ref.n}`;
  const agentId = known?.agentId ?? pick(view.agentIds, ref.n)!;
  return { task_id: { value: taskId }, ...(ref.withAgent ? { agent_id: { value: agentId } } : {}) };
}

const filters = (refuse: number | undefined) => (refuse === undefined ? {} : { filters: { refuse_seconds: refuse } });

function acceptCall(c: Extract<Command, { t: 'accept' }>, m: Model): JsonMessage {
  const offer = pick(m.offers, c.n);
  if (offer === undefined)
    return { type: 'ACCEPT', accept: { offer_ids: [{ value: 'no-such-offer' }], ...filters(c.refuse) } };
  const partner = c.aggregate
    ? m.offers.find((o) => o !== offer && o.agent_id.value === offer.agent_id.value)
    : undefined;
  // Shares for every task and up to two new executors; a greedy call gives each task the whole
  // offer, so that the second one fails with TASK_ERROR.
  const parts = c.greedy ? 1 : c.tasks.length + 2;
  const tasks = c.tasks.map((gen, i) => taskInfo(gen, offer, `task-${m.tasks.length + i}`, i, parts));
  const operations = tasks.length === 0 ? [] : [{ type: 'LAUNCH', launch: { task_infos: tasks } }];
  const offerIds = [offer.id, ...(partner === undefined ? [] : [partner.id])];
  return { type: 'ACCEPT', accept: { offer_ids: offerIds, operations, ...filters(c.refuse) } };
}

function schedulerCall(c: Command, f: FrameworkGen, view: RunView): JsonMessage {
  const m = modelOf(view);
  const executor = (n: number) => pick(m.executors, n) ?? { executorId: 'exec-none', agentId: view.agentIds[0]! };
  const body = (() => {
    switch (c.t) {
      case 'accept':
        return acceptCall(c, m);
      case 'decline': {
        const offer = pick(m.offers, c.n);
        return {
          type: 'DECLINE',
          decline: { ...(offer === undefined ? {} : { offer_ids: [offer.id] }), ...filters(c.refuse) },
        };
      }
      case 'revive':
      case 'suppress':
        return { type: c.t.toUpperCase(), [c.t]: c.roles.length === 0 ? {} : { roles: c.roles } };
      case 'kill': {
        const policy = c.graceNs === undefined ? {} : { kill_policy: { grace_period: { nanoseconds: c.graceNs } } };
        return { type: 'KILL', kill: { ...taskRef(m, view, c.task), ...policy } };
      }
      case 'ack': {
        const u = pick(m.unacked, c.n) ?? {
          taskId: pick(m.tasks, c.n)?.taskId ?? 'ghost',
          agentId: view.agentIds[0]!,
          uuid: base64(c.uuid),
        };
        return {
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: { value: u.agentId }, task_id: { value: u.taskId }, uuid: u.uuid },
        };
      }
      case 'reconcile':
        return {
          type: 'RECONCILE',
          reconcile: c.tasks.length === 0 ? {} : { tasks: c.tasks.map((r) => taskRef(m, view, r)) },
        };
      case 'message': {
        const e = executor(c.n);
        return {
          type: 'MESSAGE',
          message: { agent_id: { value: e.agentId }, executor_id: { value: e.executorId }, data: base64(c.data) },
        };
      }
      case 'request': {
        const resources = [{ name: 'cpus', type: 'SCALAR', scalar: { value: c.cpus } }];
        return {
          type: 'REQUEST',
          request: { requests: [{ ...(c.withAgent ? { agent_id: { value: view.agentIds[0] } } : {}), resources }] },
        };
      }
      case 'shutdown': {
        const e = executor(c.n);
        return { type: 'SHUTDOWN', shutdown: { executor_id: { value: e.executorId }, agent_id: { value: e.agentId } } };
      }
      case 'update': {
        const roles = frameworkRoles(f, c.roles);
        const info = frameworkInfo(f, m.frameworkId, c.name, c.roles);
        return {
          type: 'UPDATE_FRAMEWORK',
          update_framework: { framework_info: info, suppressed_roles: roles.slice(0, c.suppress) },
        };
      }
    }
  })();
  return { framework_id: m.frameworkId, ...body };
}

const scenarioArb = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  framework: frameworkArb,
  commands: fc.array(fc.tuple(commandArb, fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 }))), {
    minLength: 4,
    maxLength: 18,
  }),
  teardown: fc.boolean(),
});

function stepsOf(s: typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never): Step[] {
  const steps: Step[] = [{ kind: 'subscribe', call: () => subscribeCall(s.framework) }];
  for (const [command, advanceMs] of s.commands) {
    steps.push({ kind: 'call', call: (view) => schedulerCall(command, s.framework, view) });
    if (advanceMs > 0) steps.push({ kind: 'advance', ms: advanceMs });
  }
  if (s.teardown)
    steps.push({ kind: 'call', call: (view) => ({ type: 'TEARDOWN', framework_id: modelOf(view).frameworkId }) });
  return steps;
}

/**
 * The library's SchedulerClient as a harness client. It shares one keep-alive
 * pool across clusters, so back-to-back runs on one port would reuse a socket
 * of the closed server after a TEARDOWN ended the stream: its runs skip TEARDOWN.
 */
function schedulerClient(_endpoint: Endpoint, url: string, encoding: Encoding): WireClient {
  const client = new SchedulerClient(url, encoding);
  const reply = (r: CallResult): Reply => ({
    status: r.status,
    contentType: normaliseType(r.headers['content-type'], encoding),
    body: r.body,
  });
  return {
    get events() {
      return client.pending;
    },
    get closed() {
      return client.closed;
    },
    get streamId() {
      return client.streamId;
    },
    subscribe: async (call) => {
      const { framework_info: info, ...extra } = call.subscribe as JsonMessage;
      return reply(await client.subscribe(info, extra));
    },
    post: async (call) => reply(await client.call(call)),
    disconnect: () => client.disconnect(),
  };
}

describe('scheduler endpoint: a call sequence in JSON and in protobuf', () => {
  it('gets the same replies, the same events and the same trace', { timeout: 60_000 }, async () => {
    const property = fc.asyncProperty(scenarioArb, fc.boolean(), async (s, viaSchedulerClient) => {
      const [json, protobuf] = await runParity({
        endpoint: SCHEDULER,
        agents: 2,
        // Inputs unrecorded: an input's record holds the call as its encoding decoded it (`raw`), which JSON and protobuf word differently.
        start: (ports) =>
          startCluster({
            port: ports.master,
            agentPort: ports.agentBase,
            agents: 2,
            time: 'virtual',
            seed: s.seed,
            recordInputs: false,
          }),
        steps: stepsOf(viaSchedulerClient ? { ...s, teardown: false } : s),
        ...(viaSchedulerClient ? { client: schedulerClient } : {}),
      });
      const difference = firstDifference(json, protobuf);
      if (difference !== undefined) throw new Error(`cluster seed ${s.seed}: ${difference}`);
      expect(json.events[0]?.type).toBe('SUBSCRIBED');
    });
    await check('gets the same replies', property, 100);
  });
});

/** Bytes as plain Uint8Arrays, whatever their subclass, so values compare by content. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return Uint8Array.from(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

describe.each(ENDPOINTS.flatMap((e) => [e.callType, e.eventType]))('%s through both codecs', (typeName) => {
  const type = messageType(typeName);

  it('decodes to the same value from JSON and from protobuf', async () => {
    const property = fc.property(messageArbitrary(type, 4), (msg) => {
      const viaProto = decodeProto<Record<string, unknown>>(typeName, encodeProto(typeName, msg));
      const viaJson = decodeJson<Record<string, unknown>>(typeName, encodeJson(typeName, msg));
      if (!viaProto.ok || !viaJson.ok) throw new Error(`${JSON.stringify(viaProto)} / ${JSON.stringify(viaJson)}`);
      expect(plain(viaProto.value)).toStrictEqual(plain(msg));
      // JSON writes explicit defaults of unset fields and protobuf does not; otherwise the values agree.
      expect(plain(viaJson.value)).toStrictEqual(plain(withDefaults(type, viaProto.value)));
      // Once the defaults are in, protobuf keeps them: the codecs agree exactly.
      expect(plain(decodeProto(typeName, encodeProto(typeName, viaJson.value)))).toStrictEqual(plain(viaJson));
    });
    await check('decodes to the same value', property, 200);
  });
});

describe('application/x-protobuf over HTTP', () => {
  const CALL = 'mesos.v1.scheduler.Call';
  const EVENT = 'mesos.v1.scheduler.Event';
  const subscribe = { type: 'SUBSCRIBE', subscribe: { framework_info: { user: 'root', name: 'protobuf-http' } } };
  const subscribeBytes = Buffer.from(encodeProto(CALL, subscribe));
  let running: RunningCluster;
  let url: URL;

  beforeEach(async () => {
    running = await startCluster({ port: 0, agents: 1, time: 'virtual', seed: 11 });
    url = new URL('/api/v1/scheduler', running.masterUrl);
  });
  afterEach(async () => {
    await running.close();
  });

  interface Opened {
    readonly status: number;
    readonly headers: http.IncomingHttpHeaders;
    readonly body: string;
    readonly records: readonly Buffer[];
  }

  /** POSTs a SUBSCRIBE with an Accept header (one line, several lines, or none) and reads `count` records. */
  function open(accept: string | string[] | undefined, body: Buffer = subscribeBytes, count = 3): Promise<Opened> {
    const contentType = body === subscribeBytes ? 'application/x-protobuf' : 'application/json';
    const headers = { 'content-type': contentType, ...(accept === undefined ? {} : { accept }) };
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
        const status = res.statusCode ?? 0;
        const reader = new RecordReader();
        const records: Buffer[] = [];
        let text = '';
        res.on('data', (chunk: Buffer) => {
          if (status !== 200) return void (text += chunk.toString('utf8'));
          records.push(...reader.push(chunk));
          if (records.length >= count) {
            req.destroy();
            resolve({ status, headers: res.headers, body: '', records });
          }
        });
        res.on('end', () => resolve({ status, headers: res.headers, body: text, records }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const eventTypes = (opened: Opened, media: string) =>
    opened.records.map((record) => {
      if (media === 'application/json') return (JSON.parse(record.toString('utf8')) as JsonMessage).type as string;
      const decoded = decodeProto<{ type: string }>(EVENT, record, 'Event');
      if (!decoded.ok) throw new Error(decoded.error);
      return decoded.value.type;
    });

  it('answers garbage protobuf with 400 and a one-line plain-text body, and keeps serving', async () => {
    const res = await postRaw(url, Buffer.from([0x1a, 0xff, 0xff, 0x01, 0x0a]), {
      'content-type': 'application/x-protobuf',
    });
    expect(res).toMatchObject({ status: 400, body: 'Failed to parse body into Call protobuf' });
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    for (const input of fc.sample(fc.uint8Array({ minLength: 1, maxLength: 64 }), { numRuns: 100, seed: 5 })) {
      const reply = await postRaw(url, Buffer.from(input), { 'content-type': 'application/x-protobuf' });
      expect(reply.status, `body ${Buffer.from(input).toString('hex')}: ${reply.body}`).toBe(400);
      expect(reply.body).not.toMatch(/[\r\n]/);
    }
    expect((await fetch(new URL('/health', running.masterUrl))).status).toBe(200);
    expect(eventTypes(await open('application/x-protobuf'), 'application/x-protobuf')).toEqual([
      'SUBSCRIBED',
      'HEARTBEAT',
      'OFFERS',
    ]);
  });

  it('streams protobuf records that decode as scheduler Events to Accept: application/x-protobuf', async () => {
    const opened = await open('application/x-protobuf');
    expect(opened.status).toBe(200);
    expect(opened.headers['content-type']).toBe('application/x-protobuf');
    expect(opened.headers['transfer-encoding']).toBe('chunked');
    expect(eventTypes(opened, 'application/x-protobuf')).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'OFFERS']);
    const first = decodeProto<JsonMessage>(EVENT, opened.records[0]!, 'Event');
    expect(first.ok && first.value.subscribed.framework_id.value).toBe(
      [...running.cluster.view.frameworks()].map((f) => f.id)[0],
    );
  });

  it('chooses the event encoding by Accept alone, whatever the call was sent in', async () => {
    const opened = await open('application/x-protobuf', Buffer.from(JSON.stringify(subscribe)));
    expect(opened.headers['content-type']).toBe('application/x-protobuf');
    expect(eventTypes(opened, 'application/x-protobuf')).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'OFFERS']);
  });

  it.each<[string, string | string[] | undefined, string]>([
    ['JSON excluded by q=0', 'application/json;q=0, application/x-protobuf', 'application/x-protobuf'],
    ['two Accept header lines', ['application/json;q=0', 'application/x-protobuf'], 'application/x-protobuf'],
    ['*/*', '*/*', 'application/json'],
    ['no Accept header', undefined, 'application/json'],
    [
      'both allowed, protobuf with the higher q',
      'application/x-protobuf;q=0.9, application/json;q=0.1',
      'application/json',
    ],
  ])('negotiates %s', async (_name, accept, media) => {
    const opened = await open(accept);
    expect(opened.status).toBe(200);
    expect(opened.headers['content-type']).toBe(media);
    expect(eventTypes(opened, media)).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'OFFERS']);
  });

  it('answers 406 when Accept rules out both: application/*;q=0', async () => {
    const opened = await open('application/*;q=0');
    expect(opened.status).toBe(406);
    expect(opened.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(opened.body).toBe("Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'");
    expect([...running.cluster.view.frameworks()].length).toBe(0);
  });
});

describe('SchedulerClient', () => {
  it('rejects subscribe() when the connection is refused', async () => {
    const port = await reservePorts(1);
    const client = new SchedulerClient(`http://127.0.0.1:${port}`);
    const outcome = client.subscribe({ user: 'root', name: 'nobody-listens' }).then(
      () => 'resolved',
      (error: Error) => `rejected: ${error.message}`,
    );
    const late = new Promise((resolve) => setTimeout(() => resolve('still pending after 1 s'), 1000));
    expect(await Promise.race([outcome, late])).toMatch(/^rejected: .*ECONNREFUSED/);
  });
});
