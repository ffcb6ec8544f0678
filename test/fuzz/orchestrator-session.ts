/**
 * One fuzz run of the orchestration framework's API (spec 002, part B): a
 * fresh cluster with engine containers (two agents; the framework's tasks
 * run in wall-clock time), the framework subscribed to it, with
 * credentials in half of the runs, then the generated steps: scale reads
 * and writes of every part under both prefixes with counts right and
 * wrong, status, configuration and version reads, the plugin's cluster
 * calls, odd paths, encodings, methods and credentials; bursts; waits.
 *
 * Every answer comes quickly, below 500 but for the documented 503s (not
 * subscribed yet, no server task yet), a refusal with its one-line reason,
 * a 200 of a JSON path with JSON. At the end the cluster's invariants hold,
 * the framework, started and scaled to one of each part, runs its server
 * again, and a new scheduler still gets OFFERS.
 */
import fc from 'fast-check';
import { loadConfig } from '../../src/frameworks/orchestrator/config.js';
import { startOrchestrator, type OrchestratorService } from '../../src/frameworks/orchestrator/service.js';
import { oddString } from './calls.js';
import type { Json } from './mutate.js';
import {
  abort,
  accept,
  assemble,
  encodePathPart,
  framing,
  header,
  host,
  method,
  none,
  randomHeaders,
  version,
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

export interface OrchestratorRunInput {
  readonly clusterSeed: number;
  readonly secured: boolean;
  readonly steps: ReturnType<typeof serviceSteps> extends fc.Arbitrary<infer S> ? S : never;
}

const AUTH = { user: 'admin', password: 'pa55:word' };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const count = fc.oneof(
  w(10, fc.constantFrom('0', '1', '2', '3')),
  w(2, fc.constantFrom('10', '100', '9007199254740991', '9007199254740992', '99999999999999999999', '0001')),
  w(2, fc.constantFrom('-1', '1.5', '%', '%zz', '%31', '%E2%82', 'x', '1e3', '%201', '0x1', '')),
  w(1, oddString.map(encodePathPart)),
);
const part = fc.oneof(
  w(8, fc.constantFrom('server', 'agent', 'datastore', 'etcd', 'manager')),
  w(1, fc.constantFrom('SERVER', 'x', '', '%73erver')),
);
const route = fc.oneof(
  w(
    8,
    fc
      .tuple(part, fc.option(count, { freq: 3 }))
      .map(([p, c]) => ({ route: `${p}/scale${c === null ? '' : `/${c}`}`, usual: 'GET' })),
  ),
  w(
    4,
    fc
      .constantFrom('status/framework', 'status/m3s', 'status/k8s', 'server/config', 'server/version')
      .map((r) => ({ route: r, usual: 'GET' })),
  ),
  w(
    2,
    fc.constantFrom('cluster/shutdown', 'cluster/start', 'cluster/restart').map((r) => ({ route: r, usual: 'PUT' })),
  ),
  w(
    1,
    fc
      .constantFrom(
        '',
        'status',
        'status/',
        'server',
        'server/scale/1/2',
        'x/y/z/w',
        'status/framework/',
        'cluster',
        `${'a'.repeat(3000)}/scale`,
      )
      .map((r) => ({ route: r, usual: 'GET' })),
  ),
);
const prefix = fc.oneof(
  w(8, fc.constant('/api/framework/v0/')),
  w(3, fc.constant('/api/m3s/v0/')),
  w(1, fc.constantFrom('//api/m3s/v0/', '/api/framework/v1/', '/api/', '/', '/api//framework/v0//')),
);
const query = fc.oneof(w(8, fc.constant('')), w(1, fc.constantFrom('?x=1', '?', '?%zz', '#x')));
const credentials = fc.oneof(
  w(6, fc.constant<[string, string][]>([['Authorization', basic(AUTH.user, AUTH.password)]])),
  w(1, none),
  w(
    1,
    header(
      'Authorization',
      fc.constantFrom(
        basic('admin', 'x'),
        'Basic',
        'Basic !!',
        'Bearer x',
        `Basic ${'A'.repeat(10_000)}`,
        basic('admin', 'pa55'),
      ),
    ),
  ),
);

export const orchestratorRequestSpec: fc.Arbitrary<RequestSpec> = fc
  .tuple(prefix, route, query)
  .chain(([p, { route: r, usual }, q]) =>
    fc
      .record({
        method: method(fc.constant(usual)),
        body: fc.oneof(
          w(8, fc.constant({ kind: 'none' } as const)),
          w(
            1,
            fc.string({ maxLength: 20 }).map((text) => ({ kind: 'text', text }) as const),
          ),
        ),
        headers: fc.tuple(accept, randomHeaders, credentials),
        framing,
        version,
        host,
        followUp: fc.boolean(),
        abort,
      })
      .map((spec) => assemble({ ...spec, server: 0, target: `${p}${r}${q}` })),
  );

export function orchestratorRunInput(maxSteps: number): fc.Arbitrary<OrchestratorRunInput> {
  const wait = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom(500, 1_000));
  return fc.record({
    clusterSeed: fc.nat(),
    secured: fc.boolean(),
    steps: serviceSteps(orchestratorRequestSpec, wait, maxSteps),
  });
}

/** Nothing to resolve: the orchestrator's paths name parts, not ids. */
const NO_TOKENS: TokenResolver = { resolveText: (text) => text, resolveJson: (value: Json) => value };

export async function runOrchestratorOnce(input: OrchestratorRunInput, options: RunOptions): Promise<void> {
  const run = await startRun(`orchestrator fuzz, cluster seed ${input.clusterSeed}`, input.steps.length, {
    agents: 2,
    time: 'realtime',
    seed: input.clusterSeed,
    containerizers: 'docker,mesos',
  });
  let service: OrchestratorService | undefined;
  await runGuarded(
    run,
    options,
    async () => {
      const config = loadConfig({
        CLUSTER_MASTER: run.running.masterUrl.replace(/^http:\/\//, ''),
        FRAMEWORK_PORT: '0',
        FRAMEWORK_HOSTNAME: '127.0.0.1',
        HEARTBEAT_INTERVAL: '300ms',
        ORCH_AGENT_MEM: '256',
        ...(input.secured ? { AUTH_USERNAME: AUTH.user, AUTH_PASSWORD: AUTH.password } : {}),
      });
      service = await within(
        startOrchestrator(config, { listen: '127.0.0.1', log: () => {} }),
        options.timeoutMs,
        () => `${where(run, -1)}: starting the framework`,
      );
      const surface = orchestratorSurface(Number(new URL(service.url).port));
      for (const [index, s] of input.steps.entries()) {
        if (s.kind === 'advance') await advance(run, index, s.ms, options);
        else await requests(run, surface, index, s.kind === 'request' ? [s.spec] : s.specs, options);
        checkCluster(run, index);
      }
      await finalChecks(run, service, input.secured, options);
    },
    async () => service?.close(),
  );
}

const DOCUMENTED_503 = ['The framework has not subscribed to the master yet', 'No server task is running yet'];

function orchestratorSurface(port: number): Surface {
  return {
    ports: () => [port],
    tokens: NO_TOKENS,
    judge: (_spec, wire, res) =>
      orchestratorVerdict(wire.method, res.status ?? 0, res.headers['content-type'], res.body.toString('utf8')),
    // A HEAD's answer has no body to tell which 503 it is.
    expected5xx: (spec, status, body) =>
      status === 503 && (spec.method === 'HEAD' || DOCUMENTED_503.includes(body.trim())),
    kind: (spec) => `orchestrator ${spec.method} ${spec.target.replace(/\/scale\/.*/, '/scale/<count>').slice(0, 50)}`,
  };
}

/** The framework's own rules: a 200 of a JSON path is JSON. */
export function orchestratorVerdict(
  method: string,
  status: number,
  type: string | undefined,
  body: string,
): string | undefined {
  if (status >= 200 && status < 300 && status !== 200) return `answered ${status}`;
  if (status !== 200 || method === 'HEAD' || type !== 'application/json') return undefined;
  try {
    JSON.parse(body);
  } catch {
    return 'a 200 of application/json whose body is not JSON';
  }
  return undefined;
}

/** Started and scaled to one of each part, the framework runs a server again within a while; then a new scheduler gets OFFERS. */
async function finalChecks(
  run: ServiceRun,
  service: OrchestratorService,
  secured: boolean,
  options: RunOptions,
): Promise<void> {
  const end = run.steps;
  options.watchdog?.note(where(run, end));
  guard(run, end, () => run.running.driver.input((c) => c.checkAllInvariants()));
  const headers: Record<string, string> = secured ? { authorization: basic(AUTH.user, AUTH.password) } : {};
  const call = async (path: string, method = 'GET'): Promise<string> => {
    const res = await within(
      fetch(`${service.url}/api/framework/v0/${path}`, { method, headers }),
      options.timeoutMs,
      () => `${where(run, end)}: ${method} ${path}`,
    );
    const text = await res.text();
    if (res.status !== 200)
      throw new FuzzFailure(`${where(run, end)}: ${method} ${path} got ${res.status} ${text.trim()}${logOf(run)}`);
    return text;
  };
  await call('cluster/start', 'PUT');
  for (const part of ['server', 'agent', 'datastore']) await call(`${part}/scale/1`);
  const deadline = performance.now() + 20_000;
  while (!(await call('status/framework')).includes('"Server":"TASK_RUNNING"')) {
    if (performance.now() > deadline)
      throw new FuzzFailure(
        `${where(run, end)}: no server task running 20 s after scaling to one: ${await call('status/framework')}${logOf(run)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
    checkCluster(run, end);
  }
  await freshSubscriber(run, options);
}
