/**
 * UPDATE_QUOTA and UPDATE_WEIGHTS in the core: every rule of the
 * specification's Quota section and upstream's checks, in their order.
 */
import { describe, expect, it } from 'vitest';
import { NO_ACLS } from '../../../src/core/model/authz.js';
import type { QuotaConfigRequest, QuotaUpdate } from '../../../src/core/model/types.js';
import { parseWeights } from '../../../src/core/master/weights.js';
import { renderRoles } from '../../../src/wire/v0/roles.js';
import { renderMetrics } from '../../../src/wire/v0/metrics.js';
import { commandTask, connect, makeCluster, type TestCluster } from '../helpers.js';

function config(
  role: string,
  limits: Record<string, number>,
  guarantees: Record<string, number> = {},
): QuotaConfigRequest {
  return { role, limits: new Map(Object.entries(limits)), guarantees: new Map(Object.entries(guarantees)) };
}

function update(...configs: QuotaConfigRequest[]): QuotaUpdate {
  return { force: false, configs };
}

function errorOf(cluster: TestCluster, u: QuotaUpdate): string {
  const outcome = cluster.updateQuota(u);
  if (outcome.ok) throw new Error('expected a refusal');
  expect(outcome.error.code).toBe('INVALID');
  return outcome.error.message;
}

function limitsOf(cluster: TestCluster): Record<string, Record<string, number>> {
  return Object.fromEntries(
    cluster.view.quotas().map((q) => [q.role, Object.fromEntries([...q.limits].map(([n, v]) => [n, v / 1000]))]),
  );
}

describe('UPDATE_QUOTA validation', () => {
  it('accepts limits on the scalar resources and on the default role', () => {
    const cluster = makeCluster();
    expect(
      cluster.updateQuota(
        update(config('dev', { cpus: 2, mem: 1024, disk: 10, gpus: 0, widgets: 3 }), config('*', { cpus: 1 })),
      ).ok,
    ).toBe(true);
    expect(limitsOf(cluster)).toEqual({ '*': { cpus: 1 }, dev: { cpus: 2, mem: 1024, disk: 10, gpus: 0, widgets: 3 } });
  });

  it('rejects nested roles, invalid roles and bad values with upstream texts', () => {
    const cluster = makeCluster();
    expect(errorOf(cluster, update(config('a/b', { cpus: 1 })))).toBe(
      "Updating quota on nested role 'a/b' is not supported yet",
    );
    expect(errorOf(cluster, update(config('', { cpus: 1 })))).toBe(
      "Invalid QuotaConfig: Invalid 'QuotaConfig.role': Empty role name is invalid",
    );
    expect(errorOf(cluster, update(config('dev', { cpus: -1 })))).toBe(
      "Invalid QuotaConfig: Invalid limit configuration {'cpus': -1}: Negative values not supported",
    );
    expect(errorOf(cluster, update(config('dev', { cpus: Number.NaN })))).toBe(
      "Invalid QuotaConfig: Invalid limit configuration {'cpus': NaN}: NaN not supported",
    );
    expect(errorOf(cluster, update(config('dev', { cpus: 2e12 })))).toBe(
      "Invalid QuotaConfig: Invalid 'QuotaConfig.limits': {'cpus': 2000000000000} is invalid: values greater than 1 trillion (1000000000000) are not supported",
    );
    expect(errorOf(cluster, update(config('dev', { cpus: 1 }, { cpus: 2 })))).toMatch(
      /^Invalid QuotaConfig: 'QuotaConfig.guarantees' .* is not contained within the 'QuotaConfig.limits'/,
    );
  });

  it('rejects ports and other non-scalar resources', () => {
    const cluster = makeCluster();
    expect(errorOf(cluster, update(config('dev', { ports: 10 })))).toMatch(
      /quota supports only scalar resources, and 'ports' is of type RANGES$/,
    );
  });

  it('is all or nothing: one invalid config rejects the others', () => {
    const cluster = makeCluster();
    errorOf(cluster, update(config('good', { cpus: 1 }), config('bad/nested', { cpus: 1 })));
    expect(cluster.view.quotas()).toEqual([]);
  });

  it('an unauthorized entry rejects the whole request', () => {
    const ops = { type: 'SOME', values: ['ops'] } as const;
    const rules = [
      { principals: ops, objects: { type: 'SOME', values: ['a'] } as const },
      { principals: ops, objects: { type: 'NONE' } as const },
    ];
    const cluster = makeCluster({ acls: { ...NO_ACLS, updateQuotas: rules } });
    expect(cluster.updateQuota(update(config('a', { cpus: 1 })), 'ops').ok).toBe(true);
    const outcome = cluster.updateQuota(update(config('a', { cpus: 2 }), config('b', { cpus: 1 })), 'ops');
    expect(outcome).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect(limitsOf(cluster)).toEqual({ a: { cpus: 1 } });
  });

  it('guarantees above the cluster capacity need force', () => {
    const cluster = makeCluster();
    expect(errorOf(cluster, update(config('dev', { cpus: 100 }, { cpus: 100 })))).toBe(
      "Invalid QuotaConfig: total quota guarantees 'cpus:100' exceed cluster capacity 'cpus:4; disk:16384; mem:8192' (use 'force' flag to bypass this check)",
    );
    expect(cluster.updateQuota({ force: true, configs: [config('dev', { cpus: 100 }, { cpus: 100 })] }).ok).toBe(true);
  });

  it('empty guarantees and limits reset a role to no quota', () => {
    const cluster = makeCluster();
    cluster.updateQuota(update(config('dev', { cpus: 2 })));
    expect(cluster.updateQuota(update(config('dev', {}))).ok).toBe(true);
    expect(cluster.view.quotas()).toEqual([]);
  });
});

describe('quota consumption', () => {
  it('counts what tasks use, not what is offered, and denies a limit below it unless forced', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { roles: ['dev'], capabilities: ['MULTI_ROLE'] });
    expect(cluster.view.consumedQuota('dev')).toEqual(new Map());
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 1000', 'cpus:2;mem:512')]);
    expect(cluster.view.consumedQuota('dev')).toEqual(
      new Map([
        ['cpus', 2000],
        ['mem', 512_000],
      ]),
    );

    expect(errorOf(cluster, update(config('dev', { cpus: 1 })))).toBe(
      "Invalid QuotaConfig: Role 'dev' is already consuming 'cpus:2; mem:512'; this is more than the requested limits 'cpus:1' (use 'force' flag to bypass this check)",
    );
    expect(cluster.updateQuota({ force: true, configs: [config('dev', { cpus: 1 })] }).ok).toBe(true);
    expect(limitsOf(cluster)).toEqual({ dev: { cpus: 1 } });
  });

  it("rescinds the role's outstanding offers until consumption plus offers fits the new limits", () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { roles: ['dev'], capabilities: ['MULTI_ROLE'] });
    expect(s.offers()).toHaveLength(2);
    expect(cluster.updateQuota(update(config('dev', { cpus: 4 }))).ok).toBe(true);
    // Each offer holds 4 cpus: one must go so that offers fit 4 cpus. The
    // allocator then offers that agent again, without cpus: the limit names
    // only cpus, so mem, disk and ports stay whole.
    expect(s.sink.of('RESCIND')).toHaveLength(1);
    const cpus = s
      .offers()
      .map((o) => o.resources.filter((r) => r.name === 'cpus').reduce((n, r) => n + (r.milli ?? 0), 0));
    expect(cpus.sort()).toEqual([0, 4000]);
  });
});

describe('/roles and /metrics/snapshot', () => {
  it('show the quota, its consumption and the weight', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { roles: ['dev'], capabilities: ['MULTI_ROLE'] });
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 1000', 'cpus:1;mem:128')]);
    cluster.updateQuota(update(config('dev', { cpus: 3, mem: 2048 }, { cpus: 1 })));
    cluster.updateWeights([{ role: 'dev', weight: 2.5 }]);
    const roles = JSON.parse(JSON.stringify(renderRoles(cluster.view)));
    expect(roles.roles.find((r: { name: string }) => r.name === 'dev')).toMatchObject({
      name: 'dev',
      weight: 2.5,
      quota: { role: 'dev', guarantee: { cpus: 1 }, limit: { cpus: 3, mem: 2048 }, consumed: { cpus: 1, mem: 128 } },
    });
    const metrics = renderMetrics(cluster.view);
    expect(Object.keys(metrics).filter((k) => k.startsWith('allocator/cluster/quota/'))).toEqual([
      'allocator/cluster/quota/roles/dev/resources/cpus/guarantee',
      'allocator/cluster/quota/roles/dev/resources/cpus/limit',
      'allocator/cluster/quota/roles/dev/resources/mem/limit',
    ]);
  });
});

describe('UPDATE_WEIGHTS', () => {
  it('rejects a weight that is not positive, with upstream text, and changes nothing', () => {
    const cluster = makeCluster();
    const outcome = cluster.updateWeights([
      { role: 'a', weight: 2 },
      { role: 'b', weight: 0 },
    ]);
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'INVALID',
        message:
          "Failed to validate update weights request JSON for role 'b': Invalid weight '0': Weights must be positive",
      },
    });
    expect(cluster.view.weights()).toEqual([]);
  });

  it('rescinds outstanding offers when a changed role has frameworks', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { roles: ['dev'], capabilities: ['MULTI_ROLE'] });
    expect(s.offers()).toHaveLength(1);
    expect(cluster.updateWeights([{ role: 'dev', weight: 3 }]).ok).toBe(true);
    expect(s.sink.of('RESCIND')).toHaveLength(1);
    expect(cluster.view.weights()).toEqual([{ role: 'dev', weight: 3 }]);
  });

  it('--weights parses role=weight lists', () => {
    expect(parseWeights('a=2.5, b=1')).toEqual([
      { role: 'a', weight: 2.5 },
      { role: 'b', weight: 1 },
    ]);
    expect(parseWeights('a')).toMatch(/^Invalid weight 'a'/);
    expect(parseWeights('a=-1')).toBe(
      "Invalid weight 'a=-1' for role 'a': Invalid weight '-1': Weights must be positive",
    );
  });
});
