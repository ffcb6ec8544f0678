import { describe, expect, it } from 'vitest';
import { RETRY_MIN_MS } from '../../../src/core/model/messages.js';
import { allocate, format, scalarMilli } from '../../../src/core/model/resources.js';
import { commandTask, connect, resources } from '../helpers.js';
import { acceptWith, clusterWith, op, operationStatuses, reserved, volume } from './operations-helpers.js';

const FLAG = 'cpus:2;mem:1024;disk:1024;cpus(r1):2;mem(r1):512';

describe('static reservations', () => {
  it('offers the reserved resources to their role only, and the unreserved to every role', () => {
    const cluster = clusterWith(FLAG);
    const r1 = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const offered = r1.firstOffer().resources;
    expect(scalarMilli(offered, 'cpus')).toBe(4000);
    expect(offered.filter((r) => r.role === 'r1').every((r) => r.reservations?.[0]?.type === 'STATIC')).toBe(true);
    r1.decline([r1.firstOffer().id], 60_000);
    const r2 = connect(cluster, { roles: ['r2'], capabilities: ['MULTI_ROLE'] });
    cluster.advance(1_000);
    expect(format(r2.firstOffer().resources)).toBe('cpus(*,alloc:r2):2; disk(*,alloc:r2):1024; mem(*,alloc:r2):1024');
    cluster.checkAllInvariants();
  });
});

describe('RESERVE with an id', () => {
  it('reserves at once, reports OPERATION_FINISHED with a uuid, retries until acknowledged, and offers the reservation back to its role', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'], principal: 'ops' });
    const agentId = cluster.agents[0]!.id;
    acceptWith(s, [op('RESERVE', reserved('cpus:1;mem:256', 'r1', 'ops'), 'op-1')]);
    const [finished] = operationStatuses(s.sink);
    expect(finished).toMatchObject({ operationId: 'op-1', state: 'OPERATION_FINISHED', agentId });
    expect(finished!.uuid).toMatch(/^[0-9a-f]{32}$/);
    expect(format(cluster.view.agentResources(agentId)!)).toBe(
      'cpus(*):3; cpus(r1)[(DYNAMIC,r1,ops)]:1; mem(*):768; mem(r1)[(DYNAMIC,r1,ops)]:256',
    );
    expect(cluster.view.operations()).toHaveLength(1);
    // Not acknowledged: the agent sends it again after the retry interval.
    cluster.advance(RETRY_MIN_MS);
    expect(operationStatuses(s.sink).filter((x) => x.uuid === finished!.uuid)).toHaveLength(2);
    s.call({ type: 'ACKNOWLEDGE_OPERATION_STATUS', agentId, operationId: 'op-1', uuid: finished!.uuid! });
    expect(cluster.view.operations()).toHaveLength(0);
    expect(cluster.view.pendingOperationUpdates(agentId)).toBe(0);
    cluster.advance(RETRY_MIN_MS * 4);
    expect(operationStatuses(s.sink)).toHaveLength(2);
    const back = s.firstOffer().resources.filter((r) => r.reservations !== undefined);
    expect(format(back)).toBe('cpus(r1,alloc:r1)[(DYNAMIC,r1,ops)]:1; mem(r1,alloc:r1)[(DYNAMIC,r1,ops)]:256');
    cluster.checkAllInvariants();
  });

  it('sends no status for an operation without an id, and the master forgets it once the agent reports', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    acceptWith(s, [op('RESERVE', reserved('cpus:1', 'r1'))]);
    expect(operationStatuses(s.sink)).toEqual([]);
    expect(cluster.view.operations()).toEqual([]);
    expect(cluster.view.pendingOperationUpdates(cluster.agents[0]!.id)).toBe(0);
    expect(
      scalarMilli(
        cluster.view.agent(cluster.agents[0]!.id)!.info.resources.filter((r) => r.role === 'r1'),
        'cpus',
      ),
    ).toBe(1000);
  });
});

describe('RESERVE, CREATE and LAUNCH in one ACCEPT', () => {
  it('applies the operations in order: the task runs on the new volume, and DESTROY and UNRESERVE undo them later', () => {
    const cluster = clusterWith('cpus:4;mem:1024;disk:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = cluster.agents[0]!.id;
    const disk = reserved('disk:64', 'r1');
    const vol = volume(disk, 'vol-1');
    const task = { ...commandTask('t1', agentId, 'sleep 5'), resources: [...resources('cpus:1;mem:128'), ...vol] };
    acceptWith(s, [op('RESERVE', disk, 'reserve'), op('CREATE', vol, 'create'), { type: 'LAUNCH', tasks: [task] }]);
    expect(operationStatuses(s.sink).map((x) => [x.operationId, x.state])).toEqual([
      ['reserve', 'OPERATION_FINISHED'],
      ['create', 'OPERATION_FINISHED'],
    ]);
    expect(s.states('t1')).toContain('TASK_STARTING');
    expect(cluster.view.agentResources(agentId)!.some((r) => r.disk?.persistence?.id === 'vol-1')).toBe(true);
    // In use: DESTROY is refused.
    s.acknowledgeAll();
    cluster.advance(1_000);
    acceptWith(s, [op('DESTROY', vol, 'destroy-early')]);
    expect(operationStatuses(s.sink).at(-1)).toMatchObject({
      operationId: 'destroy-early',
      state: 'OPERATION_ERROR',
      message: 'Persistent volumes in use',
    });
    cluster.advance(5_000);
    s.acknowledgeAll();
    cluster.advance(1_000);
    // The volume came back in an offer of its own once the task ended; both offers go into one ACCEPT.
    const offers = s.offers();
    expect(offers.some((o) => o.resources.some((r) => r.disk?.persistence?.id === 'vol-1'))).toBe(true);
    s.call({
      type: 'ACCEPT',
      offerIds: offers.map((o) => o.id),
      operations: [op('DESTROY', vol, 'destroy'), op('UNRESERVE', disk, 'unreserve')],
      filters: { refuseMs: 0 },
    });
    expect(
      operationStatuses(s.sink)
        .slice(-2)
        .map((x) => [x.operationId, x.state]),
    ).toEqual([
      ['destroy', 'OPERATION_FINISHED'],
      ['unreserve', 'OPERATION_FINISHED'],
    ]);
    expect(format(cluster.view.agentResources(agentId)!)).toBe('cpus(*):4; disk(*):1024; mem(*):1024');
    cluster.checkAllInvariants();
  });
});

describe('invalid operations', () => {
  it('drop the operation alone: OPERATION_ERROR without uuid when it has an id, and the rest of the ACCEPT goes on', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'], principal: 'ops' });
    const agentId = cluster.agents[0]!.id;
    acceptWith(s, [
      op('RESERVE', reserved('cpus:1', 'r1', 'mallory'), 'wrong-principal'),
      op('RESERVE', reserved('cpus:1', 'r2', 'ops'), 'wrong-role'),
      op('UNRESERVE', resources('cpus:1'), 'not-reserved'),
      op('RESERVE', reserved('cpus:9', 'r1', 'ops'), 'too-much'),
      op('RESERVE', reserved('cpus:1', 'r1', 'ops')),
      { type: 'LAUNCH', tasks: [commandTask('t1', agentId, 'sleep 1')] },
    ]);
    const statuses = operationStatuses(s.sink);
    expect(statuses.map((x) => [x.operationId, x.state, x.uuid])).toEqual([
      ['wrong-principal', 'OPERATION_ERROR', undefined],
      ['wrong-role', 'OPERATION_ERROR', undefined],
      ['not-reserved', 'OPERATION_ERROR', undefined],
      ['too-much', 'OPERATION_ERROR', undefined],
    ]);
    expect(statuses[0]!.message).toBe(
      "A reserve operation was attempted by authenticated principal 'ops', which does not match a reserved resource in the request with principal 'mallory'",
    );
    // Upstream checks the allocation role first: the offer was allocated to 'r1'.
    expect(statuses[1]!.message).toBe(
      "A reserve operation was attempted for a resource with role 'r2', but the resource was allocated to role 'r1'",
    );
    expect(statuses[2]!.message).toBe('Resource cpus(*,alloc:r1):1 is not dynamically reserved');
    expect(statuses[3]!.message).toMatch(/^Invalid RESERVE Operation: .* does not contain /);
    expect(s.states('t1')).toContain('TASK_STARTING');
    expect(
      scalarMilli(
        cluster.view.agent(agentId)!.info.resources.filter((r) => r.role === 'r1'),
        'cpus',
      ),
    ).toBe(1000);
    cluster.checkAllInvariants();
  });

  it('refuses a volume on unreserved disk and a duplicate persistence id', () => {
    const cluster = clusterWith('cpus:4;mem:1024;disk(r1):1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const disk = resources('disk(r1):10');
    acceptWith(s, [
      op('CREATE', volume(resources('disk:10'), 'v'), 'unreserved'),
      op('CREATE', volume(disk, 'v'), 'first'),
      op('CREATE', volume(disk, 'v'), 'again'),
    ]);
    // Errors come from the master at once, the agent's status after it.
    expect(operationStatuses(s.sink).map((x) => [x.operationId, x.state, x.message])).toEqual([
      [
        'unreserved',
        'OPERATION_ERROR',
        'Invalid resources: Invalid DiskInfo: Persistent volumes cannot be created from unreserved resources',
      ],
      ['again', 'OPERATION_ERROR', "Persistence ID 'v' is not unique"],
      ['first', 'OPERATION_FINISHED', undefined],
    ]);
  });
});

describe('RECONCILE_OPERATIONS', () => {
  it('answers the latest state of known operations without uuid, OPERATION_UNKNOWN for others', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = cluster.agents[0]!.id;
    acceptWith(s, [op('RESERVE', reserved('cpus:1', 'r1'), 'op-1')]);
    s.call({
      type: 'RECONCILE_OPERATIONS',
      operations: [
        { operationId: 'op-1', agentId },
        { operationId: 'nope', agentId },
      ],
    });
    expect(operationStatuses(s.sink).slice(-2)).toEqual([
      { operationId: 'op-1', state: 'OPERATION_FINISHED', agentId },
      { operationId: 'nope', state: 'OPERATION_UNKNOWN', agentId },
    ]);
    s.call({ type: 'RECONCILE_OPERATIONS', operations: [] });
    expect(operationStatuses(s.sink).at(-1)).toEqual({ operationId: 'op-1', state: 'OPERATION_FINISHED', agentId });
  });

  it('ignores an acknowledgement of an unknown operation', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const outcome = s.call({
      type: 'ACKNOWLEDGE_OPERATION_STATUS',
      agentId: cluster.agents[0]!.id,
      operationId: 'x',
      uuid: '00'.repeat(16),
    });
    expect(outcome.ok).toBe(true);
    expect(cluster.trace.entries().some((e) => e.kind === 'operation:ack-ignored')).toBe(true);
  });
});

describe('checkpointed resources', () => {
  it('survive an agent restart: the agent re-registers with its reservations and its unacknowledged status', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = cluster.agents[0]!.id;
    acceptWith(s, [op('RESERVE', reserved('cpus:1', 'r1'), 'op-1')]);
    const before = format(cluster.view.agentResources(agentId)!);
    cluster.crashAgent(agentId);
    cluster.restartAgent(agentId);
    cluster.advance(1_000);
    expect(format(cluster.view.agentResources(agentId)!)).toBe(before);
    const uuids = new Set(operationStatuses(s.sink).map((x) => x.uuid));
    expect(uuids.size).toBe(1);
    expect(operationStatuses(s.sink).length).toBeGreaterThan(1);
    cluster.checkAllInvariants();
  });

  it('an operation whose message the crashed agent never got is sent again when it re-registers', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = cluster.agents[0]!.id;
    const rule = cluster.addNetworkRule({ to: agentId, types: ['APPLY_OPERATION'], action: 'drop' });
    acceptWith(s, [op('RESERVE', reserved('cpus:1', 'r1'), 'op-1')]);
    expect(operationStatuses(s.sink)).toEqual([]);
    s.call({ type: 'RECONCILE_OPERATIONS', operations: [{ operationId: 'op-1', agentId }] });
    expect(operationStatuses(s.sink).at(-1)?.state).toBe('OPERATION_PENDING');
    cluster.removeNetworkRule(rule);
    cluster.crashAgent(agentId);
    cluster.restartAgent(agentId);
    cluster.advance(1_000);
    expect(operationStatuses(s.sink).at(-1)).toMatchObject({ operationId: 'op-1', state: 'OPERATION_FINISHED' });
    expect(format(cluster.view.agentResources(agentId)!)).toBe(
      format(allocate(cluster.view.agent(agentId)!.info.resources, undefined)),
    );
    cluster.checkAllInvariants();
  });
});

describe('operator operations', () => {
  it('reserve unallocated resources, rescinding offers that hold them, and refuse what the agent lacks', () => {
    const cluster = clusterWith('cpus:4;mem:1024');
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = cluster.agents[0]!.id;
    const offerId = s.firstOffer().id;
    const result = cluster.operatorOperation('RESERVE', agentId, reserved('cpus:2', 'r1', 'admin'));
    expect(result.ok).toBe(true);
    cluster.advance(0);
    expect(s.sink.of('RESCIND').map((e) => e.offerId)).toEqual([offerId]);
    expect(cluster.operatorOperation('RESERVE', agentId, reserved('cpus:9', 'r1'))).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
    expect(cluster.operatorOperation('UNRESERVE', agentId, resources('cpus:1'))).toEqual({
      ok: false,
      error: { code: 'INVALID', message: 'Resource cpus(*):1 is not dynamically reserved' },
    });
    expect(cluster.operatorOperation('RESERVE', 'no-such-agent', reserved('cpus:1', 'r1'))).toMatchObject({
      error: { code: 'INVALID' },
    });
    cluster.advance(2_000);
    expect(cluster.view.operations()).toEqual([]);
    expect(format(cluster.view.agentResources(agentId)!)).toBe(
      'cpus(*):2; cpus(r1)[(DYNAMIC,r1,admin)]:2; mem(*):1024',
    );
    const vol = volume(reserved('disk:1', 'r1'), 'x');
    expect(cluster.operatorOperation('DESTROY', agentId, vol)).toMatchObject({
      ok: false,
      error: { message: 'Persistent volumes not found' },
    });
    cluster.checkAllInvariants();
  });

  it('rescind no offer for an operation the agent cannot hold, and destroy a volume only whole', () => {
    const cluster = clusterWith('cpus:4;mem:1024;disk:100');
    const agentId = cluster.agents[0]!.id;
    const disk = (text: string) => reserved(text, 'r1', 'admin');
    expect(cluster.operatorOperation('RESERVE', agentId, disk('disk:100')).ok).toBe(true);
    expect(cluster.operatorOperation('CREATE', agentId, volume(disk('disk:60'), 'v1')).ok).toBe(true);
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const offerId = s.firstOffer().id;
    const before = format(cluster.view.agentResources(agentId)!);
    expect(before).toBe(
      'cpus(*):4; disk(r1)[(DYNAMIC,r1,admin)]:40; disk(r1)[(DYNAMIC,r1,admin)][v1:data]:60; mem(*):1024',
    );
    expect(cluster.operatorOperation('UNRESERVE', agentId, disk('disk:50'))).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
    expect(cluster.operatorOperation('RESERVE', agentId, disk('cpus:9'))).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
    for (const part of ['disk:10', 'disk:59.999', 'disk:100']) {
      const refused = cluster.operatorOperation('DESTROY', agentId, volume(disk(part), 'v1'));
      expect(refused).toEqual({ ok: false, error: { code: 'INVALID', message: 'Persistent volumes not found' } });
    }
    cluster.advance(0);
    expect(s.sink.of('RESCIND')).toEqual([]);
    expect(format(cluster.view.agentResources(agentId)!)).toBe(before);
    expect(cluster.operatorOperation('DESTROY', agentId, volume(disk('disk:60'), 'v1')).ok).toBe(true);
    cluster.advance(0);
    expect(s.sink.of('RESCIND').map((e) => e.offerId)).toEqual([offerId]);
    expect(format(cluster.view.agentResources(agentId)!)).toBe(
      'cpus(*):4; disk(r1)[(DYNAMIC,r1,admin)]:100; mem(*):1024',
    );
    cluster.checkAllInvariants();
  });
});
