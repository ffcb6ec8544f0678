import { describe, expect, it } from 'vitest';
import { NO_ACLS, type Acls } from '../../src/core/model/authz.js';
import { encodeResponseJson, encodeResponseProto, readResponse } from '../../src/wire/operator-out.js';
import {
  PAUSE,
  snapshotGetAgents,
  snapshotGetState,
  snapshotGetTasks,
  type OperatorPiece,
} from '../../src/wire/operator-stream.js';
import { SHOW_ALL, viewerOf, type Viewer } from '../../src/wire/view-filter.js';
import type { ClusterView } from '../../src/core/view.js';
import { commandTask, connect, makeCluster, resources } from '../core/helpers.js';
import { expectSameText, richCluster } from './read-fixture.js';

function joined(pieces: Iterable<OperatorPiece>): { text: string; bytes: Buffer } {
  const parts: Buffer[] = [];
  for (const piece of pieces)
    if (piece !== PAUSE) parts.push(typeof piece === 'string' ? Buffer.from(piece) : Buffer.from(piece));
  const bytes = Buffer.concat(parts);
  return { text: bytes.toString(), bytes };
}

function expectSame(view: ClusterView, viewer: Viewer = SHOW_ALL): void {
  for (const [type, snapshot] of [
    ['GET_STATE', snapshotGetState],
    ['GET_TASKS', snapshotGetTasks],
    ['GET_AGENTS', snapshotGetAgents],
  ] as const) {
    const response = readResponse(view, type, viewer);
    if (response === 'FORBIDDEN') throw new Error('forbidden');
    expectSameText(joined(snapshot(view, viewer).json()).text, encodeResponseJson(response));
    expect(joined(snapshot(view, viewer).proto()).bytes.equals(Buffer.from(encodeResponseProto(response)))).toBe(true);
  }
}

describe('GET_STATE, GET_TASKS and GET_AGENTS as a stream', () => {
  it('write the bytes of the builder, JSON and protobuf', () => {
    const { cluster } = richCluster();
    const state = JSON.parse(encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never));
    expect(state.get_state.get_tasks.unreachable_tasks.length).toBe(1);
    expect(state.get_state.get_tasks.completed_tasks.length).toBeGreaterThan(0);
    expect(state.get_state.get_executors.executors.length).toBe(1);
    expectSame(cluster.view);
  });

  it('leave out what the ACLs hide, as the builder does', () => {
    const any = { type: 'ANY' as const };
    const only = (...values: string[]) => ({ principals: any, objects: { type: 'SOME' as const, values } });
    const acls: Acls = {
      ...NO_ACLS,
      viewFrameworks: [only('bob', 'dave')],
      viewTasks: [only('bob')],
      viewRoles: [only('db')],
    };
    const { cluster } = richCluster(acls);
    expectSame(cluster.view, viewerOf(cluster.view.authorizer, undefined));
  });

  it('write the cluster as it was when the snapshot was taken', () => {
    const { cluster, web, batch } = richCluster();
    const before = {
      json: encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never),
      proto: Buffer.from(encodeResponseProto(readResponse(cluster.view, 'GET_STATE') as never)),
    };
    const snaps = [snapshotGetState(cluster.view), snapshotGetState(cluster.view)] as const;
    web.kill('labelled');
    cluster.advance(1000);
    web.acknowledgeAll();
    cluster.inject({ type: 'heal', nodes: [cluster.agents[2]!.id, 'master'] });
    cluster.advance(60_000);
    batch.call({ type: 'TEARDOWN' });
    cluster.advance(1000);
    expect(encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never)).not.toBe(before.json);
    expectSameText(joined(snaps[0].json()).text, before.json);
    expect(joined(snaps[1].proto()).bytes.equals(before.proto)).toBe(true);
  });

  it('write the cluster of their moment when it changes before the first piece or between any two', () => {
    const before = (() => {
      const { cluster } = richCluster();
      return encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never);
    })();
    const count = [...snapshotGetState(richCluster().cluster.view).json(1)].length;
    expect(count).toBeGreaterThan(10);
    for (let at = 0; at < count; at++) {
      const { cluster, web, batch } = richCluster();
      const pieces = snapshotGetState(cluster.view).json(1);
      const head: OperatorPiece[] = [];
      for (let i = 0; i < at; i++) head.push(pieces.next().value as OperatorPiece);
      web.kill('labelled');
      cluster.advance(1000);
      web.acknowledgeAll();
      batch.call({ type: 'TEARDOWN' });
      cluster.advance(1000);
      expect(encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never)).not.toBe(before);
      expectSameText(joined([...head, ...{ [Symbol.iterator]: () => pieces }]).text, before);
    }
    const { cluster, web } = richCluster();
    const proto = snapshotGetState(cluster.view).proto();
    const expected = Buffer.from(encodeResponseProto(readResponse(cluster.view, 'GET_STATE') as never));
    web.kill('labelled');
    cluster.advance(1000);
    expect(joined({ [Symbol.iterator]: () => proto }).bytes.equals(expected)).toBe(true);
  });
});

/**
 * More tasks than one turn writes and one chunk holds, each with a bag of
 * its own (as tasks launched through HTTP have): running, finished, killed
 * and unreachable; beside them a framework with a task of its own.
 */
function manyTasks() {
  const cluster = makeCluster({ agents: 0 });
  for (const i of [0, 1])
    cluster.addAgent({
      hostname: `big${i}`,
      ip: '127.0.0.1',
      port: 5070 + i,
      resources: resources('cpus:1000;mem:1000000'),
      attributes: [],
    });
  const fw = connect(cluster, { user: 'erin', name: 'many', capabilities: ['PARTITION_AWARE'] });
  cluster.advance(1000);
  const agents = fw.offers().map((offer) => {
    const tasks = Array.from({ length: 1100 }, (_, i) =>
      commandTask(`${offer.agentId}-${i}`, offer.agentId, i % 3 === 0 ? 'sleep 1' : 'sleep 100000', 'cpus:0.01;mem:1'),
    );
    fw.accept(offer.id, tasks);
    return offer.agentId;
  });
  const other = connect(cluster, { user: 'frank', name: 'other' });
  cluster.advance(1000);
  const offer = other.firstOffer();
  other.accept(offer.id, [commandTask('lone', offer.agentId, 'sleep 100000', 'cpus:0.5;mem:8')]);
  cluster.advance(3000);
  fw.acknowledgeAll();
  other.acknowledgeAll();
  for (let i = 1; i < 1100; i += 7) fw.kill(`${agents[0]}-${i}`);
  cluster.advance(1000);
  fw.acknowledgeAll();
  cluster.inject({ type: 'partition', nodes: [agents[1]!, 'master'] });
  cluster.advance(120_000);
  fw.acknowledgeAll();
  return { cluster, fw, other, agents };
}

describe('GET_STATE and GET_TASKS of thousands of tasks', () => {
  it('write the bytes of the builder, JSON and protobuf, over several turns and chunks', () => {
    const { cluster } = manyTasks();
    const state = JSON.parse(encodeResponseJson(readResponse(cluster.view, 'GET_STATE') as never));
    const { tasks, completed_tasks, unreachable_tasks } = state.get_state.get_tasks;
    expect(tasks.length).toBeGreaterThan(500);
    expect(completed_tasks.length).toBeGreaterThan(300);
    expect(unreachable_tasks.length).toBeGreaterThan(500);
    const pauses = [...snapshotGetState(cluster.view).proto()].filter((piece) => piece === PAUSE);
    expect(pauses.length).toBeGreaterThan(0);
    expectSame(cluster.view);
  });

  it('write the cluster of the snapshot in protobuf when it changes while they measure, between measuring and writing, and while they write', () => {
    for (const [type, snapshot] of [
      ['GET_STATE', snapshotGetState],
      ['GET_TASKS', snapshotGetTasks],
    ] as const) {
      const all = [...snapshot(manyTasks().cluster.view).proto()];
      // Measuring pauses: a change after its pause comes while it measures, after the first piece written once it measured.
      const pause = all.indexOf(PAUSE);
      expect(pause).toBeGreaterThanOrEqual(0);
      expect(all.length).toBeGreaterThan(pause + 5);
      const positions = type === 'GET_STATE' ? [pause + 1, pause + 2, all.length - 1] : [pause + 1, pause + 3];
      for (const at of positions) {
        const { cluster, fw, other, agents } = manyTasks();
        const expected = Buffer.from(encodeResponseProto(readResponse(cluster.view, type) as never));
        const pieces = snapshot(cluster.view).proto();
        const head: OperatorPiece[] = [];
        for (let i = 0; i < at; i++) head.push(pieces.next().value as OperatorPiece);
        fw.kill(`${agents[0]}-2`);
        cluster.advance(1000);
        fw.acknowledgeAll();
        other.call({ type: 'TEARDOWN' });
        cluster.advance(1000);
        expect(Buffer.from(encodeResponseProto(readResponse(cluster.view, type) as never)).equals(expected)).toBe(
          false,
        );
        const bytes = joined([...head, ...{ [Symbol.iterator]: () => pieces }]).bytes;
        expect(bytes.equals(expected)).toBe(true);
      }
    }
  }, 60_000);
});
