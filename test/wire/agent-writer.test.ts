import { describe, expect, it } from 'vitest';
import { NO_ACLS } from '../../src/core/model/authz.js';
import type { ClusterView } from '../../src/core/view.js';
import { agentWireJson, writeAgentProto } from '../../src/wire/agent-writer.js';
import { encodeJson } from '../../src/wire/json-encode.js';
import { agentToWire } from '../../src/wire/operator-state.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { ProtoWriter } from '../../src/wire/proto-writer.js';
import { SHOW_ALL, viewerOf, type Viewer } from '../../src/wire/view-filter.js';
import { richCluster } from './read-fixture.js';

function expectSameAgents(view: ClusterView, viewer: Viewer): number {
  let n = 0;
  const snapshots = [...view.agents()].map((record) => view.agentSnapshot(record.id)!);
  // A re-registered agent, and one taken off by the operator.
  const first = snapshots[0]!;
  snapshots.push({
    ...first,
    reregisteredTimeMs: first.registeredTimeMs + 61_500.25,
    deactivated: true,
    active: false,
  });
  // One with no attributes, nothing allocated or offered, and a hostname to escape.
  snapshots.push({
    ...first,
    info: { ...first.info, hostname: 'h"x\\y', attributes: [] },
    allocated: [],
    offered: [],
  });
  for (const agent of snapshots) {
    const out = new ProtoWriter(8);
    writeAgentProto(out, 1, view, agent, viewer);
    const expected = new ProtoWriter(8);
    expected.bytes(1, encodeProto('mesos.v1.master.Response.GetAgents.Agent', agentToWire(view, agent, viewer)));
    expect(Buffer.from(out.take()).equals(Buffer.from(expected.take()))).toBe(true);
    const json = encodeJson('mesos.v1.master.Response.GetAgents.Agent', agentToWire(view, agent, viewer));
    expect(agentWireJson(view, agent, viewer)).toBe(json);
    n++;
  }
  return n;
}

describe('GET_AGENTS and GET_STATE agents written straight to bytes and text', () => {
  it('are the bytes and text of the generic encoders: reservations, ports, attributes, books, re-registered, deactivated, any reader', () => {
    const { cluster } = richCluster();
    expect(expectSameAgents(cluster.view, SHOW_ALL)).toBeGreaterThan(3);
    const any = { type: 'ANY' as const };
    const acls = { ...NO_ACLS, viewRoles: [{ principals: any, objects: { type: 'SOME' as const, values: ['db'] } }] };
    const limited = richCluster(acls).cluster.view;
    expectSameAgents(limited, viewerOf(limited.authorizer, undefined));
  });
});
