import { describe, expect, it } from 'vitest';
import { renderState, toV0Json } from '../../src/wire/v0/index.js';
import { snapshotState } from '../../src/wire/v0/state-stream.js';
import { NO_ACLS, type Acls } from '../../src/core/model/authz.js';
import { viewerOf } from '../../src/wire/view-filter.js';
import { commandTask } from '../core/helpers.js';
import { expectSameText, richCluster } from './read-fixture.js';

const streamed = (pieces: Iterable<Uint8Array>) => Buffer.concat([...pieces]).toString();
/** A piece as text; the end of a body (no piece) as nothing. */
const text = (piece: unknown) => (piece instanceof Uint8Array ? Buffer.from(piece).toString() : '');

describe('/state as a stream', () => {
  it('writes the same text as the builder, on a cluster with a bit of everything', () => {
    const { cluster } = richCluster();
    const built = toV0Json(renderState(cluster.view));
    const state = JSON.parse(built);
    // The fixture has what the stream must get right.
    expect(state.frameworks.length).toBe(3);
    expect(state.completed_frameworks.length).toBe(1);
    const batch = state.frameworks.find((f: any) => f.name === 'batch \u00e9');
    expect(batch.unreachable_tasks.map((t: any) => t.id)).toEqual(['far']);
    expect(batch.tasks.map((t: any) => t.id)).toEqual(['x1', 'x2']);
    expect(batch.completed_tasks.map((t: any) => [t.id, t.state])).toEqual([['gone', 'TASK_KILLED']]);
    expect(batch.executors.length).toBe(1);
    expect(state.slaves.some((s: any) => Object.keys(s.reserved_resources).length > 0)).toBe(true);
    expectSameText(streamed(snapshotState(cluster.view).pieces()), built);
    expect(streamed(snapshotState(cluster.view, { startTimeSeconds: 12.5 }).pieces())).toBe(
      toV0Json(renderState(cluster.view, { startTimeSeconds: 12.5 })),
    );
  });

  it('writes the cluster as it was when the snapshot was taken, whatever happens while it is written', () => {
    const { cluster, web, batch } = richCluster();
    const before = toV0Json(renderState(cluster.view));
    const snapshot = snapshotState(cluster.view);
    const pieces = snapshot.pieces();
    const first = pieces.next();
    // The cluster moves on: tasks change state and gain statuses, finish, a framework leaves, agents come and go.
    web.kill('labelled');
    cluster.advance(1000);
    web.acknowledgeAll();
    const agentId = cluster.agents[0]!.id;
    web.accept(web.offers()[0]?.id ?? '', [commandTask('late', agentId, 'sleep 5')]);
    cluster.inject({ type: 'heal', nodes: [cluster.agents[2]!.id, 'master'] });
    cluster.advance(60_000);
    batch.call({ type: 'TEARDOWN' });
    cluster.advance(1000);
    expect(toV0Json(renderState(cluster.view))).not.toBe(before);
    expectSameText(`${text(first.value)}${streamed({ [Symbol.iterator]: () => pieces })}`, before);
  });

  it('writes the cluster of its moment when it changes before the first piece, or between any two pieces', () => {
    const built = (() => {
      const { cluster } = richCluster();
      return toV0Json(renderState(cluster.view));
    })();
    const pieceCount = [...snapshotState(richCluster().cluster.view).pieces(1)].length;
    expect(pieceCount).toBeGreaterThan(10);
    for (let at = 0; at < pieceCount; at++) {
      const { cluster, web, batch } = richCluster();
      const pieces = snapshotState(cluster.view).pieces(1);
      let head = '';
      for (let i = 0; i < at; i++) head += text(pieces.next().value);
      web.kill('labelled');
      cluster.advance(1000);
      web.acknowledgeAll();
      batch.call({ type: 'TEARDOWN' });
      cluster.advance(1000);
      expect(toV0Json(renderState(cluster.view))).not.toBe(built);
      expectSameText(head + streamed({ [Symbol.iterator]: () => pieces }), built);
    }
  });

  it('leaves out what the ACLs hide, as the builder does', () => {
    const any = { type: 'ANY' as const };
    const only = (...values: string[]) => ({ principals: any, objects: { type: 'SOME' as const, values } });
    const acls: Acls = {
      ...NO_ACLS,
      viewFrameworks: [only('bob', 'dave')],
      viewTasks: [only('bob')],
      viewExecutors: [only('nobody')],
      viewRoles: [only('db')],
      viewFlags: [{ principals: any, objects: { type: 'NONE' } }],
    };
    const { cluster } = richCluster(acls);
    const viewer = viewerOf(cluster.view.authorizer, undefined);
    const built = toV0Json(renderState(cluster.view, {}, viewer));
    expect(built).not.toContain('"flags"');
    expectSameText(streamed(snapshotState(cluster.view, {}, viewer).pieces()), built);
  });
});
