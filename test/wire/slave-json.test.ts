import { describe, expect, it } from 'vitest';
import { NO_ACLS, type Acls } from '../../src/core/model/authz.js';
import { toV0Json } from '../../src/wire/v0/index.js';
import { slaveJson } from '../../src/wire/v0/slave-json.js';
import { slaveObjectOf } from '../../src/wire/v0/slaves.js';
import { SHOW_ALL, viewerOf, type Viewer } from '../../src/wire/view-filter.js';
import { makeCluster, resources } from '../core/helpers.js';
import { richCluster } from './read-fixture.js';

describe("an agent's entry of /state written straight to text", () => {
  it('is the text of the object, for every agent, whichever roles the reader may view', () => {
    const any = { type: 'ANY' as const };
    const viewRoles = (objects: Acls['viewRoles'][number]['objects']): Acls => ({
      ...NO_ACLS,
      viewRoles: [{ principals: any, objects }],
    });
    const readers: Viewer[] = [SHOW_ALL];
    for (const acls of [
      viewRoles({ type: 'NONE' }),
      viewRoles({ type: 'SOME', values: ['db'] }),
      viewRoles({ type: 'SOME', values: ['web'] }),
    ]) {
      const { cluster } = richCluster(acls);
      readers.push(viewerOf(cluster.view.authorizer, undefined));
    }
    const cluster = makeCluster({ agents: 1 });
    cluster.addAgent({
      hostname: 'r\u00e9served "x"',
      ip: '127.0.0.1',
      port: 5070,
      resources: resources('cpus:2;cpus(db):1;mem(web):64;mem:1024;ports:[4000-4010];disk(db):5'),
      attributes: [
        { name: 'zone', type: 'TEXT', text: 'b' },
        { name: 'rack', type: 'SCALAR', milli: 3000 },
      ],
    });
    cluster.advance(1000);
    const { view } = cluster;
    const agents = [...view.agents(), ...richCluster().cluster.view.agents()];
    expect(agents.length).toBeGreaterThan(4);
    for (const viewer of readers) {
      for (const record of agents) {
        const books = view.agentBooks(record.id);
        expect(slaveJson(record, books, '1.11.0', viewer)).toBe(
          toV0Json(slaveObjectOf(record, books, '1.11.0', viewer)),
        );
      }
    }
  });
});
