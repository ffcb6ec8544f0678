/**
 * One fuzz run of the workflow service's API (spec 002, part A): a fresh
 * cluster in virtual time (two agents, a generated seed), the service
 * subscribed to it, then the generated steps: queue requests right and
 * wrong (ids from a small pool, so that they collide, or odd ones: empty,
 * dotted, with slashes, control characters, a hundred thousand characters),
 * status lookups of those ids URL-encoded or not, the protected queue with
 * and without credentials, agent lookups, odd paths and methods; bursts;
 * moves of virtual time, which bring offers the service launches on.
 *
 * Every answer comes quickly, below 500 but for the documented 502 of an
 * agent lookup, a refusal with its one-line reason; a 200 to a queue
 * request is `Ok`, one to a lookup JSON. At the end the cluster's
 * invariants hold, a new request is queued, launched and reported on
 * within a few minutes of cluster time, and a new scheduler still gets
 * OFFERS.
 */
import fc from 'fast-check';
import { DEFAULT_CONFIG } from '../../src/frameworks/workflow/config.js';
import { startWorkflowService, type WorkflowService } from '../../src/frameworks/workflow/service.js';
import { idx, oddString, some, token } from './calls.js';
import type { Json } from './mutate.js';
import {
  abort,
  accept,
  assemble,
  encodePathPart,
  bodyOf,
  resolveJsonWith,
  contentType,
  framing,
  header,
  host,
  method,
  none,
  randomHeaders,
  version,
  type BodySpec,
  type RequestSpec,
  type TokenResolver,
} from './requests.js';
import { FuzzFailure, within, type RunOptions } from './session.js';
import {
  advance,
  checkCluster,
  freshSubscriber,
  guard,
  logOf,
  requests,
  runGuarded,
  serviceSteps,
  startRun,
  w,
  where,
  type ServiceRun,
  type Surface,
} from './service-session.js';

export interface WorkflowRunInput {
  readonly clusterSeed: number;
  readonly steps: ReturnType<typeof serviceSteps> extends fc.Arbitrary<infer S> ? S : never;
}

const CREDENTIALS = { user: 'ops', password: 'p:w' };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Ids of the run's pool (`@@wf-id:<i>`: `wf-<i>`), so that requests collide; or ids upstream would refuse, or long ones. */
const taskId: fc.Arbitrary<Json> = fc.oneof(
  w(
    12,
    idx.map((i) => `wf-${i}`),
  ),
  w(3, oddString),
  w(
    1,
    fc.constantFrom<Json>(
      'x'.repeat(255),
      'x'.repeat(256),
      'x'.repeat(100_000),
      'a b',
      'a.b',
      'a/b',
      'a\\b',
      '%41',
      7,
      null,
      '',
    ),
  ),
);
const command: fc.Arbitrary<Json> = fc.oneof(
  w(6, fc.constantFrom<Json>(['true'], ['echo', 'hi'], 'sleep 1', ['sh', '-c', 'exit 3'])),
  w(1, fc.constantFrom<Json>([], '', ' ', [1, 2], [null], {}, 5, 'x'.repeat(20_000))),
);
const quantity: fc.Arbitrary<Json> = fc.oneof(
  w(6, fc.constantFrom<Json>(0.1, 0.5, 1, '0.2', 0)),
  w(1, fc.constantFrom<Json>(-1, 'many', 1e308, 1e6, '', null, [])),
);
const mem: fc.Arbitrary<Json> = fc.oneof(
  w(6, fc.constantFrom<Json>('64m', '1g', 128, '65536k', '32MB')),
  w(1, fc.constantFrom<Json>('0', '12x', -5, '1e9g', 'g', 1e308, '')),
);

const anyQueueRequest: fc.Arbitrary<Json> = some(
  {
    workflow_task_id: taskId,
    airflow_task_id: taskId,
    container_type: fc.constantFrom<Json>('DOCKER', 'MESOS', 'ENGINE', 'CLUSTER', 'docker', 'VM', 1),
    command,
    image: fc.oneof(w(6, fc.constantFrom<Json>('alpine', 'busybox:1')), w(1, fc.constantFrom<Json>('', null, 3))),
    cpus: quantity,
    mem_limit: mem,
    memlimit: mem,
    disk: quantity,
    attributes: fc.oneof(
      fc.constantFrom<Json>([], ['rack:a'], ['nocolon'], 'rack:a', [1]),
      fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
    ),
    environment: fc.oneof(
      fc.constantFrom<Json>({}, { A: '1' }, { A: 1, B: true }, ['A=1'], { A: null }),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 3 }),
    ),
    force_pull: fc.constantFrom<Json>(true, false, 'yes'),
    network_mode: fc.constantFrom<Json>('HOST', 'bridge', 'mesh', 3),
    user: fc.constantFrom<Json>('nobody', '', 0),
    volumes: fc.constantFrom<Json>([], ['/a:/b'], ['/a:/b:ro'], ['relative'], '/a:/b'),
  },
  ['command', 'image'],
);

/** A request as the container operator sends it, on an id of the pool; or one of any fields. */
const queueRequest: fc.Arbitrary<Json> = fc.oneof(
  w(
    3,
    fc.record({
      workflow_task_id: idx.map((i) => `wf-${i}`),
      command,
      image: fc.constant('alpine'),
      cpus: fc.constantFrom(0.1, 0.5),
      mem_limit: fc.constantFrom('32m', 64),
    }),
  ),
  w(2, anyQueueRequest),
);

/** A queue request as JSON, mutated a third of the time; or not JSON at all. */
const queueBody: fc.Arbitrary<BodySpec> = fc.oneof(
  w(
    20,
    fc.tuple(queueRequest, fc.nat({ max: 2 })).chain(([call, m]) => bodyOf('json', fc.constant(call), m === 0, '')),
  ),
  w(1, fc.constant({ kind: 'none' } as const)),
  w(
    2,
    fc
      .oneof(fc.string({ maxLength: 30 }), fc.constantFrom('not json', '[1]', 'null', '{}', '{"command":"true"}{}'))
      .map((text) => ({ kind: 'text', text }) as const),
  ),
);

/** An id in a path: encoded as a client encodes it, or raw, or odd. */
const pathId = fc.oneof(
  w(
    8,
    taskId.map((id) => encodePathPart(String(id).slice(0, 3000))),
  ),
  w(
    2,
    fc.constantFrom('wf-0', 'wf-1', 'workflow.1', 'a%2Fb', '%', '%zz', '..', '', 'a/b', 'wf-0?x=1', 'x'.repeat(20_000)),
  ),
);

const authorization = fc.oneof(
  w(3, fc.constant<[string, string][]>([['Authorization', basic(CREDENTIALS.user, CREDENTIALS.password)]])),
  w(2, none),
  w(
    2,
    header(
      'Authorization',
      fc.constantFrom(
        basic('ops', 'x'),
        basic('', ''),
        'Basic',
        'Basic !!!',
        'Bearer x',
        `Basic ${'A'.repeat(10_000)}`,
        basic('ops', 'p:w:x'),
      ),
    ),
  ),
);

const target = fc.oneof(
  w(10, fc.constant({ path: '/v0/queue_command', usual: 'POST' })),
  w(
    6,
    pathId.map((id) => ({ path: `/v0/task/${id}`, usual: 'GET' })),
  ),
  w(2, fc.constant({ path: '/v0/dags', usual: 'GET' })),
  w(
    2,
    fc
      .oneof(idx.map(token.agent), oddString.map(encodePathPart), fc.constant('x'.repeat(5_000)))
      .map((id) => ({ path: `/v0/agent/${id}`, usual: 'GET' })),
  ),
  w(
    1,
    fc
      .constantFrom(
        '/',
        '/v0',
        '/v0/',
        '/v0/task',
        '/v0/task/',
        '/v0/queue_command/',
        '/V0/DAGS',
        '/v1/task/x',
        '//v0/dags',
        '/health',
      )
      .map((path) => ({ path, usual: 'GET' })),
  ),
);

export const workflowRequestSpec: fc.Arbitrary<RequestSpec> = target.chain(({ path, usual }) =>
  fc
    .record({
      method: method(fc.constant(usual)),
      body: usual === 'POST' ? queueBody : fc.oneof(w(8, fc.constant<BodySpec>({ kind: 'none' })), w(1, queueBody)),
      headers: fc.tuple(
        fc.oneof(w(4, contentType('json')), w(1, none)),
        accept,
        randomHeaders,
        path === '/v0/dags' ? authorization : fc.oneof(w(6, none), w(1, authorization)),
      ),
      framing,
      version,
      host,
      followUp: fc.boolean(),
      abort,
    })
    .map((r) => assemble({ ...r, server: 0, target: path })),
);

// An allocation interval, a refusal filter (5 s), a task's run, the service's back-off.
const advanceMs = fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(1_000, 5_000, 10_000, 60_000));

export function workflowRunInput(maxSteps: number): fc.Arbitrary<WorkflowRunInput> {
  return fc.record({ clusterSeed: fc.nat(), steps: serviceSteps(workflowRequestSpec, advanceMs, maxSteps) });
}

/** The agents' ids for `@@agent:<i>`; everything else as written. */
class AgentTokens implements TokenResolver {
  constructor(private readonly agents: readonly string[]) {}

  resolveText(text: string): string {
    return text.replace(/@@agent:(\d+)/g, (_, i: string) => this.agents[Number(i) % this.agents.length]!);
  }

  resolveJson(value: Json): Json {
    return resolveJsonWith(value, (text) => this.resolveText(text));
  }
}

export async function runWorkflowOnce(input: WorkflowRunInput, options: RunOptions): Promise<void> {
  const run = await startRun(`workflow fuzz, cluster seed ${input.clusterSeed}`, input.steps.length, {
    agents: 2,
    time: 'virtual',
    seed: input.clusterSeed,
  });
  let service: WorkflowService | undefined;
  await runGuarded(
    run,
    options,
    async () => {
      const config = {
        ...DEFAULT_CONFIG,
        apiUsername: CREDENTIALS.user,
        apiPassword: CREDENTIALS.password,
        engineImageSlave: undefined,
      };
      service = await within(
        startWorkflowService({ config, masterUrl: run.running.masterUrl, port: 0, user: 'fuzz' }),
        options.timeoutMs,
        () => `${where(run, -1)}: starting the service`,
      );
      const surface = workflowSurface(run, Number(new URL(service.url).port));
      for (const [index, s] of input.steps.entries()) {
        if (s.kind === 'advance') await advance(run, index, s.ms, options);
        else await requests(run, surface, index, s.kind === 'request' ? [s.spec] : s.specs, options);
        await new Promise((resolve) => setTimeout(resolve, 1));
        checkCluster(run, index);
      }
      await finalChecks(run, service, options);
    },
    async () => service?.close(),
  );
}

function workflowSurface(run: ServiceRun, port: number): Surface {
  return {
    ports: () => [port],
    tokens: new AgentTokens(run.running.agents.map((a) => a.id)),
    judge: (_spec, wire, res) => workflowVerdict(wire.method, wire.target, res.status ?? 0, res.body.toString('utf8')),
    expected5xx: (spec, status, body) =>
      status === 502 &&
      spec.target.startsWith('/v0/agent/') &&
      (spec.method === 'HEAD' || body.startsWith('The master could not be asked: ')),
    kind: (spec) =>
      `workflow ${spec.method} ${spec.target.replace(/^(\/v0\/(task|agent)\/).*/, '$1<id>').slice(0, 40)}`,
  };
}

/** The service's own rules: `Ok` for a request queued, JSON for a lookup. */
export function workflowVerdict(method: string, target: string, status: number, body: string): string | undefined {
  if (status >= 200 && status < 300 && status !== 200) return `answered ${status}`;
  if (status !== 200 || method === 'HEAD') return undefined;
  if (target === '/v0/queue_command')
    return body === 'Ok' ? undefined : `a 200 to a queue request with ${JSON.stringify(body.slice(0, 80))}, not Ok`;
  try {
    JSON.parse(body);
  } catch {
    return 'a 200 whose body is not JSON';
  }
  return undefined;
}

/** A new request is queued, launched, and reported on within a few minutes of cluster time; then a new scheduler gets OFFERS. */
async function finalChecks(run: ServiceRun, service: WorkflowService, options: RunOptions): Promise<void> {
  const end = run.steps;
  options.watchdog?.note(where(run, end));
  guard(run, end, () => run.running.driver.input((c) => c.checkAllInvariants()));
  const id = 'wf-final';
  const queued = await within(
    fetch(`${service.url}/v0/queue_command`, {
      method: 'POST',
      body: JSON.stringify({ workflow_task_id: id, command: ['true'], image: 'alpine', cpus: 0.1, mem_limit: 32 }),
    }),
    options.timeoutMs,
    () => `${where(run, end)}: queueing a last request`,
  );
  const text = await queued.text();
  if (queued.status !== 200)
    throw new FuzzFailure(`${where(run, end)}: a last request got ${queued.status} ${text}${logOf(run)}`);
  // Tasks queued before hold the agents at most until they end, or until the service gives up on them.
  for (let second = 0; service.scheduler.task(id)?.update === undefined; second++) {
    if (second > 600)
      throw new FuzzFailure(
        `${where(run, end)}: a last request was never launched and reported on in ten minutes of cluster time${logOf(run)}`,
      );
    await advance(run, end, 1_000, options);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await freshSubscriber(run, options);
}
