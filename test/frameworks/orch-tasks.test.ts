/**
 * What the framework launches: an offer's room for a part (resources, host
 * constraint, ports of the port range) and the TaskInfo of each part as an
 * engine container, or in the cluster's own containerizer with
 * ORCH_ENGINE=false.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/frameworks/orchestrator/config.js';
import { containerOf, OfferRoom, taskInfoOf, type TaskRecord } from '../../src/frameworks/orchestrator/tasks.js';

const offer = (hostname: string, ports: [number, number][]): Record<string, any> => ({
  id: { value: 'o1' },
  agent_id: { value: 'a1' },
  hostname,
  allocation_info: { role: 'm3s' },
  resources: [
    { name: 'cpus', type: 'SCALAR', scalar: { value: 0.25 } },
    { name: 'mem', type: 'SCALAR', scalar: { value: 3000 } },
    { name: 'disk', type: 'SCALAR', scalar: { value: 100 } },
    { name: 'ports', type: 'RANGES', ranges: { range: ports.map(([begin, end]) => ({ begin, end })) } },
  ],
});

describe("an offer's room", () => {
  it('fits tasks while cpus, mem, disk and ports of the range last, on the constrained host only', () => {
    const config = loadConfig({
      PORTRANGE_FROM: '31005',
      PORTRANGE_TO: '31006',
      ORCH_SERVER_CONSTRAINT: 'node-2',
      DS_DISK: '60',
    });
    const room = new OfferRoom(offer('node-1', [[31000, 31010]]), config);
    expect(room.freePorts).toEqual([31005, 31006]);
    expect(room.role).toBe('m3s');
    expect(room.fits(config, 'server')).toBe(false);
    expect(new OfferRoom(offer('node-2', [[31000, 31010]]), config).fits(config, 'server')).toBe(true);
    expect(room.fits(config, 'agent')).toBe(true);
    expect(room.take(config, 'agent')).toEqual([31005]);
    expect(room.fits(config, 'datastore')).toBe(true);
    expect(room.take(config, 'datastore')).toEqual([31006]);
    // cpus 0.05 left, and no port of the range.
    expect(room.fits(config, 'agent')).toBe(false);
    expect(new OfferRoom(offer('node-1', [[30000, 31004]]), config).fits(config, 'agent')).toBe(false);
  });
});

describe('the TaskInfo of a part', () => {
  const record = (part: TaskRecord['part']): TaskRecord => ({
    taskId: `m3s-${part}.1`,
    part,
    agentId: 'a1',
    hostname: 'node-1',
    state: 'TASK_STAGING',
    ports: [31005],
    killing: false,
  });

  it('runs an agent as an engine container with its resources, labels, port mapping and the server address', () => {
    const config = loadConfig({
      ORCH_AGENT_LABELS: '[{"key":"zone","value":"b"}]',
      ORCH_AGENT_CPU: '0.2',
      ORCH_AGENT_MEM: '300',
    });
    const info = taskInfoOf(config, record('agent'), offer('node-1', [[31000, 32000]]), 'm3s', {
      server: 'node-2:31001',
      datastore: undefined,
    });
    expect(info.resources).toEqual([
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.2 }, allocation_info: { role: 'm3s' } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 300 }, allocation_info: { role: 'm3s' } },
      {
        name: 'ports',
        type: 'RANGES',
        ranges: { range: [{ begin: 31005, end: 31005 }] },
        allocation_info: { role: 'm3s' },
      },
    ]);
    expect(info.labels.labels).toContainEqual({ key: 'zone', value: 'b' });
    expect(info.container).toMatchObject({
      type: 'DOCKER',
      docker: {
        image: 'avhost/ubuntu-m3s:latest',
        network: 'BRIDGE',
        port_mappings: [{ host_port: 31005, container_port: 10250, protocol: 'tcp' }],
      },
    });
    expect(info.command.value).toMatch(/^\/usr\/local\/bin\/k3s agent .* --token=123456789/);
    expect(info.command.environment.variables).toContainEqual({ name: 'K3S_URL', value: 'https://node-2:31001' });
  });

  it('runs the server with its datastore and volume, the datastore from the SQL or key-value image', () => {
    const config = loadConfig({ ORCH_SERVER_STRING: '/bin/k3s server --x' });
    const server = taskInfoOf(config, record('server'), offer('node-1', []), undefined, {
      server: undefined,
      datastore: 'node-3:31002',
    });
    expect(server.command.value).toMatch(/^\/bin\/k3s server --x --token=/);
    expect(server.command.environment.variables).toContainEqual({
      name: 'K3S_DATASTORE_ENDPOINT',
      value: 'mysql://root@tcp(node-3:31002)/k3s',
    });
    expect(server.container.volumes[0].source.docker_volume).toEqual({ driver: 'local', name: '/data/k3s/server' });
    expect(containerOf(config, 'datastore', [31002]).docker).toMatchObject({
      image: 'mariadb:latest',
      port_mappings: [{ container_port: 3306 }],
    });
    expect(containerOf(loadConfig({ DS_ENGINE: 'etcd', DS_PORT: '2379' }), 'datastore', [31002]).docker.image).toBe(
      'bitnami/etcd:latest',
    );
  });

  it('uses the cluster network, the host network, or the cluster containerizer as configured', () => {
    expect(containerOf(loadConfig({ CLUSTER_CNI: 'weave' }), 'agent', [1])).toMatchObject({
      docker: { network: 'USER' },
      network_infos: [{ name: 'weave' }],
    });
    expect(containerOf(loadConfig({ ENGINE_CNI: 'host' }), 'agent', [1]).docker.port_mappings).toBeUndefined();
    expect(containerOf(loadConfig({ ORCH_ENGINE: 'false' }), 'agent', [1])).toEqual({
      type: 'MESOS',
      mesos: { image: { type: 'DOCKER', docker: { name: 'avhost/ubuntu-m3s:latest' } } },
    });
  });
});
