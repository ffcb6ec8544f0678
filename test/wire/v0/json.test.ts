import { afterEach, describe, expect, it } from 'vitest';
import { ranges, scalar } from '../../../src/core/model/resources.js';
import type { SchedulerCall } from '../../../src/core/model/types.js';
import { startCluster, type RunningCluster } from '../../../src/start/cluster.js';
import {
  Double,
  attributesObject,
  renderFrameworks,
  renderRoles,
  renderSlaves,
  renderState,
  renderTasks,
  renderVersion,
  resourceJson,
  toV0Json,
} from '../../../src/wire/v0/index.js';
import { commandTask, makeCluster, subscribe } from '../../core/helpers.js';

describe('toV0Json', () => {
  it('writes doubles with a decimal point and everything else as JSON.stringify does', () => {
    const value = {
      whole: new Double(4),
      zero: new Double(0),
      frac: new Double(0.1),
      time: new Double(1_700_000_000.123),
      big: new Double(1e21),
      int: 5051,
      text: 'a "q" é\n',
      flag: true,
      none: null,
      skipped: undefined,
      list: [new Double(1), 2, undefined, 'x', { y: new Double(2.5) }],
      nested: { empty: {}, arr: [] },
    };
    expect(toV0Json(value)).toBe(
      '{"whole":4.0,"zero":0.0,"frac":0.1,"time":1700000000.123,"big":1e21,"int":5051,' +
        '"text":"a \\"q\\" é\\n","flag":true,"none":null,"list":[1.0,2,null,"x",{"y":2.5}],"nested":{"empty":{},"arr":[]}}',
    );
    // Without the doubles' spelling, the text is JSON.stringify's.
    expect(JSON.parse(toV0Json(value))).toEqual(JSON.parse(JSON.stringify(value)));
    expect(toV0Json(new Double(3))).toBe('3.0');
    expect(toV0Json([new Double(-0), new Double(-1.5)])).toBe('[-0.0,-1.5]');
    expect(toV0Json('s')).toBe('"s"');
    expect(toV0Json(undefined)).toBe('null');
  });
});

describe('v0 endpoint text', () => {
  it('/slaves: summaries and full resources are doubles, ports and ranges integers', () => {
    const cluster = makeCluster({ agents: 1 });
    const text = toV0Json(renderSlaves(cluster.view, {}));
    expect(text).toContain('"port":5051,');
    expect(text).toContain('"registered_time":1700000000.0,');
    expect(text).toContain('"resources":{"cpus":4.0,"gpus":0.0,"mem":8192.0,"disk":16384.0,"ports":"[31000-32000]"}');
    expect(text).toContain('{"name":"cpus","type":"SCALAR","scalar":{"value":4.0},"role":"*"}');
    expect(text).toContain('"ranges":{"range":[{"begin":31000,"end":32000}]}');
    expect(text).not.toMatch(/"(cpus|mem|disk|gpus|value)":\d+[,}]/);
  });

  it('writes scalar attributes as doubles', () => {
    expect(
      toV0Json(
        attributesObject([
          { name: 'level', type: 'SCALAR', milli: 2000 },
          { name: 'rack', type: 'TEXT', text: 'r1' },
        ]),
      ),
    ).toBe('{"level":2.0,"rack":"r1"}');
    expect(toV0Json(resourceJson(scalar('mem', 128)))).toBe(
      '{"name":"mem","type":"SCALAR","scalar":{"value":128.0},"role":"*"}',
    );
    expect(toV0Json(resourceJson(ranges('ports', [[1, 2]])))).toBe(
      '{"name":"ports","type":"RANGES","ranges":{"range":[{"begin":1,"end":2}]},"role":"*"}',
    );
  });

  it('/version, /state, /frameworks, /tasks and /roles write times and quantities as doubles', () => {
    expect(toV0Json(renderVersion('1.11.0'))).toMatch(/"build_time":1699920000\.0,/);

    const cluster = makeCluster({ agents: 1 });
    const { sink, frameworkId, streamId } = subscribe(cluster, { failoverTimeoutMs: 60_000 });
    const [offer] = sink.lastOffers();
    const call = (c: SchedulerCall) => cluster.call(frameworkId, streamId, c);
    call({
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [commandTask('t1', offer!.agentId, 'sleep 100', 'cpus:1;mem:128')] }],
      filters: { refuseMs: 60_000 },
    });

    const state = toV0Json(renderState(cluster.view));
    expect(state).toContain('"start_time":1700000000.0,"elected_time":1700000000.0,');
    expect(state).toContain('"activated_slaves":1,"deactivated_slaves":0,"unreachable_slaves":0,');
    expect(state).toMatch(/"leader_info":\{[^}]*"port":5050,/);
    expect(toV0Json(renderState(cluster.view, { startTimeSeconds: 12 }))).toContain('"start_time":12.0,');

    const frameworks = toV0Json(renderFrameworks(cluster.view, {}));
    expect(frameworks).toContain('"failover_timeout":60.0,');
    expect(frameworks).toContain('"registered_time":1700000000.0,"unregistered_time":0.0,');
    expect(frameworks).toContain('"used_resources":{"cpus":1.0,"gpus":0.0,"mem":128.0,"disk":0.0}');

    expect(toV0Json(renderTasks(cluster.view, {}))).toContain(
      '"statuses":[{"state":"TASK_STARTING","timestamp":1700000000.0',
    );

    const roles = toV0Json(renderRoles(cluster.view));
    expect(roles).toContain('"weight":1.0,');
    expect(roles).toContain('"consumed":{"cpus":1.0,"mem":128.0}');
    expect(roles).toContain('"allocated":{"cpus":1.0,"mem":128.0}');
  });
});

describe('v0 endpoints over HTTP', () => {
  let running: RunningCluster | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('/slaves and /master/version write doubles with a decimal point, integers bare', async () => {
    running = await startCluster({ port: 0, agents: 1, time: 'virtual' });
    const res = await fetch(`${running.masterUrl}/slaves`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(text).toContain('"cpus":4.0');
    expect(text).toMatch(/"port":\d+,/);
    expect(text).toMatch(/"registered_time":\d+\.\d+,/);
    expect(text).toMatch(/"scalar":\{"value":\d+\.\d+\}/);

    const jsonp = await fetch(`${running.masterUrl}/version?jsonp=cb`);
    expect(jsonp.headers.get('content-type')).toBe('text/javascript');
    expect(await jsonp.text()).toMatch(/^cb\(\{.*"build_time":1699920000\.0,.*\}\);$/);
  });
});

describe('/metrics/snapshot', () => {
  it('answers a flat object of doubles under the upstream keys', async () => {
    const { startCluster } = await import('../../../src/start/cluster.js');
    const { SchedulerClient } = await import('../../../src/client/scheduler-client.js');
    const running = await startCluster({ port: 0, agents: 2, time: 'virtual' });
    try {
      const client = new SchedulerClient(running.masterUrl);
      await client.subscribe({ user: 'u', name: 'metrics' });
      await client.next('OFFERS');
      const res = await fetch(new URL('/metrics/snapshot', running.masterUrl));
      expect(res.headers.get('content-type')).toBe('application/json');
      const text = await res.text();
      expect(text).toContain('"master/elected":1.0');
      const metrics = JSON.parse(text) as Record<string, number>;
      expect(metrics).toMatchObject({
        'master/frameworks_active': 1,
        'master/slaves_active': 2,
        'master/outstanding_offers': 2,
        'master/cpus_total': 8,
        'master/cpus_used': 0,
        'master/tasks_running': 0,
      });
      expect(Object.values(metrics).every((v) => typeof v === 'number')).toBe(true);
      client.disconnect();
    } finally {
      await running.close();
    }
  });
});
