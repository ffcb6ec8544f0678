/**
 * `/metrics` (Prometheus text), `/master/metrics/snapshot` and `/health`:
 * after a task has run, the Prometheus figures parse with a Prometheus text
 * parser and agree with `/metrics/snapshot`; per-endpoint counts move with
 * requests; the allocator's runs, the event loop and the streams are there;
 * a standby master shows a standby's figures.
 */
import { afterEach, describe, expect, it } from 'vitest';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../src/start/cluster.js';
import { SchedulerClient } from '../../src/client/scheduler-client.js';
import { prometheusFigure } from '../../src/wire/v0/prometheus-names.js';

let running: RunningCluster | undefined;
const clients: SchedulerClient[] = [];

async function start(options: StartClusterOptions = {}): Promise<RunningCluster> {
  running = await startCluster({ port: 0, agents: 2, time: 'virtual', seed: 3, ...options });
  return running;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await running?.close();
  running = undefined;
});

async function scrape(
  url: string,
): Promise<{ type: string | null; text: string; families: Map<string, PrometheusFamily> }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text);
  return { type: res.headers.get('content-type'), text, families: new Map(families.map((f) => [f.name, f])) };
}

/** The value of a sample of a family, by its labels (all of them given). */
function sample(
  families: Map<string, PrometheusFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.get(name);
  const same = (a: Readonly<Record<string, string>>) =>
    Object.keys(a).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => a[k] === v);
  const found = family?.metrics.find((m) => same(m.labels ?? {}));
  return found === undefined ? undefined : Number(found.value ?? found.count);
}

/** A framework launches `sleep 1`, acknowledges its updates, and sees it finish. */
async function runTask(r: RunningCluster): Promise<SchedulerClient> {
  const client = new SchedulerClient(r.masterUrl);
  clients.push(client);
  await client.subscribe({ user: 'u', name: 'metrics' });
  await client.next('SUBSCRIBED');
  const offer = (await client.next('OFFERS')).offers.offers[0];
  const task = {
    name: 'nap',
    task_id: { value: 'nap' },
    agent_id: offer.agent_id,
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 1 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 64 } },
    ],
    command: { value: 'sleep 1' },
  };
  expect(
    (
      await client.call({
        type: 'ACCEPT',
        accept: { offer_ids: [offer.id], operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }] },
      })
    ).status,
  ).toBe(202);
  for (const state of ['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']) {
    if (state === 'TASK_FINISHED') r.advance(1_000);
    const update = await client.nextUpdate('nap');
    expect(update.update.status.state).toBe(state);
    const { agent_id, task_id, uuid } = update.update.status;
    expect((await client.call({ type: 'ACKNOWLEDGE', acknowledge: { agent_id, task_id, uuid } })).status).toBe(202);
  }
  return client;
}

describe('GET /metrics', () => {
  it('parses as Prometheus text and agrees with /metrics/snapshot after a task has run', async () => {
    const r = await start();
    await runTask(r);
    const snapshot = (await (await fetch(`${r.masterUrl}/metrics/snapshot`)).json()) as Record<string, number>;
    const { type, families } = await scrape(`${r.masterUrl}/metrics`);
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(snapshot['master/tasks_finished']).toBe(1);
    expect(Object.keys(snapshot).length).toBeGreaterThan(30);
    for (const [key, value] of Object.entries(snapshot)) {
      const figure = prometheusFigure(key, value);
      expect(families.get(figure.name)?.type, key).toBe(figure.type.toUpperCase());
      // A sentence of its own, then the key it comes from: never the key alone.
      expect(families.get(figure.name)?.help, key).toMatch(new RegExp(`^[A-Z].{10,} \\(/metrics/snapshot: ${key}\\)$`));
      expect(families.get(figure.name)?.help, key).not.toMatch(/^The figure /);
      expect(sample(families, figure.name, figure.labels), key).toBe(value);
    }
    // Tasks that ended are counted, typed as counters with Prometheus's _total; live ones are gauges.
    expect(families.get('clustersim_master_tasks_finished_total')?.type).toBe('COUNTER');
    expect(families.get('clustersim_master_tasks_failed_total')?.help).toBe(
      'Tasks that reached TASK_FAILED since this master was elected (/metrics/snapshot: master/tasks_failed)',
    );
    expect(families.get('clustersim_master_tasks_running')?.type).toBe('GAUGE');
    expect(families.has('clustersim_master_tasks_finished')).toBe(false);
    expect(sample(families, 'clustersim_master_tasks_finished_total')).toBe(1);
    expect(sample(families, 'clustersim_master_cpus_total')).toBe(8);
  });

  it('counts the tasks that ended even once the master no longer keeps them: a counter never goes down', async () => {
    const r = await start({ maxCompletedFrameworks: 0 });
    for (let i = 0; i < 2; i++) await (await runTask(r)).teardown();
    const snapshot = (await (await fetch(`${r.masterUrl}/metrics/snapshot`)).json()) as Record<string, number>;
    expect([...r.cluster.view.completedFrameworks()]).toEqual([]);
    expect(snapshot['master/tasks_finished']).toBe(2);
    expect(sample((await scrape(`${r.masterUrl}/metrics`)).families, 'clustersim_master_tasks_finished_total')).toBe(2);
  });

  it('counts the allocator runs, and shows the event loop, the open streams and their bytes', async () => {
    const r = await start();
    await runTask(r);
    const { families } = await scrape(`${r.masterUrl}/metrics`);
    const allocation = families.get('clustersim_allocation_run_seconds');
    expect(allocation?.type).toBe('HISTOGRAM');
    expect(Number(allocation?.metrics[0]?.count)).toBeGreaterThan(0);
    expect(Number(allocation?.metrics[0]?.buckets?.['+Inf'])).toBe(Number(allocation?.metrics[0]?.count));
    for (const figure of ['mean', 'max', 'p50', 'p99']) {
      const lag = families.get(`clustersim_event_loop_lag_${figure}_seconds`);
      expect(lag?.type).toBe('GAUGE');
      expect(Number(lag?.metrics[0]?.value)).toBeGreaterThanOrEqual(0);
    }
    expect(sample(families, 'clustersim_event_streams_open')).toBe(1);
    expect(sample(families, 'clustersim_event_streams_buffered_bytes')).toBeGreaterThanOrEqual(0);
    clients[0]!.disconnect();
    await expect
      .poll(async () => sample((await scrape(`${r.masterUrl}/metrics`)).families, 'clustersim_event_streams_open'))
      .toBe(0);
  });

  it('keeps timing the allocator after a reset swaps the cluster', async () => {
    const r = await start();
    const runs = async () =>
      Number(
        (await scrape(`${r.masterUrl}/metrics`)).families.get('clustersim_allocation_run_seconds')?.metrics[0]?.count,
      );
    r.reset();
    const before = await runs();
    await runTask(r);
    expect(await runs()).toBeGreaterThan(before);
  });

  it('counts requests by route, method and status code, with their latencies', async () => {
    const r = await start();
    const { families: before } = await scrape(`${r.masterUrl}/metrics`);
    const state = { route: '/state', method: 'GET', code: '200' };
    const missing = { route: 'unmatched', method: 'GET', code: '404' };
    expect(sample(before, 'clustersim_http_requests_total', state)).toBeUndefined();
    for (let i = 0; i < 3; i++) await (await fetch(`${r.masterUrl}/state`)).arrayBuffer();
    await (await fetch(`${r.masterUrl}/no/such/thing`)).arrayBuffer();
    await (
      await fetch(`${r.masterUrl}/api/v1/scheduler`, {
        method: 'POST',
        body: '{',
        headers: { 'content-type': 'application/json' },
      })
    ).arrayBuffer();
    const { families: after, text } = await scrape(`${r.masterUrl}/metrics`);
    expect(sample(after, 'clustersim_http_requests_total', state)).toBe(3);
    expect(sample(after, 'clustersim_http_requests_total', missing)).toBe(1);
    expect(
      sample(after, 'clustersim_http_requests_total', { route: '/api/v1/scheduler', method: 'POST', code: '400' }),
    ).toBe(1);
    // The scrape before this one counted too.
    expect(sample(after, 'clustersim_http_requests_total', { route: '/metrics', method: 'GET', code: '200' })).toBe(1);
    const latency = after.get('clustersim_http_request_duration_seconds');
    expect(latency?.type).toBe('HISTOGRAM');
    // The parser folds a histogram's label sets into one, so its samples are read from the text.
    expect(text).toContain(
      'clustersim_http_request_duration_seconds_count{route="/state",method="GET",code="200"} 3\n',
    );
    expect(text).toMatch(
      /^clustersim_http_request_duration_seconds_bucket\{le="\+Inf",route="\/state",method="GET",code="200"\} 3$/m,
    );
  });

  it('shows quota figures as one metric per kind, with the role and resource as labels', async () => {
    const r = await start();
    const quota = { role: 'dev', limits: { cpus: { value: 2 } }, guarantees: { cpus: { value: 1 } } };
    const res = await fetch(`${r.masterUrl}/api/v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'UPDATE_QUOTA', update_quota: { quota_configs: [quota] } }),
    });
    expect(res.status).toBe(200);
    const { families } = await scrape(`${r.masterUrl}/metrics`);
    expect(sample(families, 'clustersim_allocator_quota_limit', { role: 'dev', resource: 'cpus' })).toBe(2);
    expect(sample(families, 'clustersim_allocator_quota_guarantee', { role: 'dev', resource: 'cpus' })).toBe(1);
  });

  it('on a standby master shows a standby snapshot, its own requests, and the leader the cluster', async () => {
    const r = await start({ masters: 2 });
    const [leader, standby] = r.masterUrls as [string, string];
    const theirs = (await scrape(`${standby}/metrics`)).families;
    expect(sample(theirs, 'clustersim_master_elected')).toBe(0);
    expect(theirs.has('clustersim_master_tasks_running')).toBe(false);
    const ours = (await scrape(`${leader}/metrics`)).families;
    expect(sample(ours, 'clustersim_master_elected')).toBe(1);
    expect(sample(ours, 'clustersim_master_slaves_active')).toBe(2);
    expect(
      sample(ours, 'clustersim_http_requests_total', { route: '/metrics', method: 'GET', code: '200' }),
    ).toBeUndefined();
  });

  it('asks for credentials with --authenticate-http-readonly, as /metrics/snapshot does', async () => {
    const r = await start({
      credentials: { credentials: [{ principal: 'p', secret: 's' }] },
      authenticateHttpReadonly: true,
    });
    expect((await fetch(`${r.masterUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${r.masterUrl}/master/metrics/snapshot`)).status).toBe(401);
    const basic = `Basic ${Buffer.from('p:s').toString('base64')}`;
    expect((await fetch(`${r.masterUrl}/metrics`, { headers: { authorization: basic } })).status).toBe(200);
  });
});

describe('/master/metrics/snapshot', () => {
  it('answers what /metrics/snapshot answers, on the leader and on a standby', async () => {
    const r = await start({ masters: 2 });
    for (const url of r.masterUrls) {
      const bare = await (await fetch(`${url}/metrics/snapshot`)).text();
      const prefixed = await fetch(`${url}/master/metrics/snapshot`);
      expect([prefixed.status, prefixed.headers.get('content-type')]).toEqual([200, 'application/json']);
      // Uptime moves only with virtual time, so the two bodies are the same.
      expect(await prefixed.text()).toBe(bare);
    }
  });
});

describe('/health', () => {
  it('answers an empty 200 as upstream does, and a JSON body when asked for JSON', async () => {
    const r = await start({ masters: 2 });
    for (const path of ['/health', '/master/health']) {
      for (const accept of [undefined, '*/*', 'text/plain']) {
        const res = await fetch(`${r.masterUrl}${path}`, { headers: accept === undefined ? {} : { accept } });
        expect([res.status, await res.text(), res.headers.get('content-type')]).toEqual([200, '', null]);
      }
      const res = await fetch(`${r.masterUrl}${path}`, { headers: { accept: 'application/json' } });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json']);
      const port = new URL(r.masterUrl).port;
      expect(await res.json()).toEqual({
        healthy: true,
        master: { index: 0, state: 'leading' },
        leader: `127.0.0.1:${port}`,
        agents: { active: 2, inactive: 0, unreachable: 0 },
        frameworks: { active: 0, inactive: 0 },
      });
    }
    const standby = await fetch(`${r.masterUrls[1]}/health`, {
      headers: { accept: 'text/html, application/json;q=0.5' },
    });
    expect(await standby.json()).toMatchObject({
      healthy: true,
      master: { index: 1, state: 'standby' },
      agents: { active: 0 },
    });
  });
});

describe('Prometheus names of the snapshot figures', () => {
  it('prefix the key with clustersim_ and make every other character _; quota keys become labels', () => {
    expect(prometheusFigure('master/tasks_running', 2)).toEqual({
      name: 'clustersim_master_tasks_running',
      help: 'Tasks in TASK_RUNNING now (/metrics/snapshot: master/tasks_running)',
      type: 'gauge',
      labels: {},
      value: 2,
    });
    expect(prometheusFigure('master/tasks_killed', 3)).toMatchObject({
      name: 'clustersim_master_tasks_killed_total',
      type: 'counter',
    });
    const nested = prometheusFigure('allocator/cluster/quota/roles/eng/web.v2/resources/cpus/limit', 1.5);
    expect([nested.name, nested.labels, nested.value]).toEqual([
      'clustersim_allocator_quota_limit',
      { role: 'eng/web.v2', resource: 'cpus' },
      1.5,
    ]);
    // Two roles that the character rule would make one name stay apart.
    expect(prometheusFigure('allocator/cluster/quota/roles/a.b/resources/mem/guarantee', 1).labels).not.toEqual(
      prometheusFigure('allocator/cluster/quota/roles/a_b/resources/mem/guarantee', 1).labels,
    );
  });
});
