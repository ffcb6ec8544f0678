/**
 * The tasks of the orchestrated cluster: what one part's task asks for
 * (resources, ports of the port range, its host constraint) and the
 * TaskInfo that launches it as an engine container on an offer. Offers and
 * TaskInfos are the scheduler API's JSON (upstream field names).
 */
import { isTerminal } from '../../core/model/task-state.js';
import type { TaskState } from '../../core/model/types.js';
import type { OrchConfig, Part } from './config.js';

/** What the framework remembers of one task (in the store as JSON). */
export interface TaskRecord {
  readonly taskId: string;
  readonly part: Part;
  agentId: string | undefined;
  hostname: string | undefined;
  /** The latest state reported (TASK_STAGING until the first update). */
  state: string;
  /** Host ports: the first one serves the part (API server, datastore). */
  ports: number[];
  /** A kill was sent (scaled down): it is not counted any more. */
  killing: boolean;
}

/** Whether a state reported is the task's last. */
export function ended(state: string): boolean {
  return isTerminal(state as TaskState);
}

/** The port inside the container that each part's first host port maps to. */
function containerPort(config: OrchConfig, part: Part): number {
  return part === 'server' ? 6443 : part === 'datastore' ? config.dsPort : 10250;
}

type JsonObject = Record<string, any>;

/** What is left of one offer while tasks are placed on it. */
export class OfferRoom {
  cpus: number;
  mem: number;
  disk: number;
  readonly freePorts: number[];
  readonly role: string | undefined;

  constructor(
    readonly offer: JsonObject,
    config: OrchConfig,
  ) {
    const resources: JsonObject[] = offer.resources ?? [];
    const scalar = (name: string): number =>
      resources
        .filter((r) => r.name === name && r.type === 'SCALAR')
        .reduce((sum, r) => sum + Number(r.scalar?.value ?? 0), 0);
    this.cpus = scalar('cpus');
    this.mem = scalar('mem');
    this.disk = scalar('disk');
    this.freePorts = [];
    for (const r of resources.filter((x) => x.name === 'ports' && x.type === 'RANGES')) {
      for (const range of r.ranges?.range ?? []) {
        const from = Math.max(Number(range.begin), config.portFrom);
        const to = Math.min(Number(range.end), config.portTo);
        for (let p = from; p <= to && this.freePorts.length < 1000; p++) this.freePorts.push(p);
      }
    }
    this.freePorts.sort((a, b) => a - b);
    this.role = offer.allocation_info?.role ?? resources[0]?.allocation_info?.role ?? resources[0]?.role;
  }

  get hostname(): string {
    return this.offer.hostname;
  }

  /** Whether a task of the part fits what is left and its host constraint. */
  fits(config: OrchConfig, part: Part): boolean {
    const want = config.resources[part];
    const constraint = config.constraints[part];
    if (constraint !== undefined && constraint !== this.hostname) return false;
    const epsilon = 1e-9;
    return (
      want.cpus <= this.cpus + epsilon &&
      want.mem <= this.mem + epsilon &&
      (want.disk ?? 0) <= this.disk + epsilon &&
      this.freePorts.length >= 1
    );
  }

  /** Takes a task's share; returns its host ports. */
  take(config: OrchConfig, part: Part): number[] {
    const want = config.resources[part];
    this.cpus -= want.cpus;
    this.mem -= want.mem;
    this.disk -= want.disk ?? 0;
    return this.freePorts.splice(0, 1);
  }
}

function scalar(name: string, value: number, role: string | undefined): JsonObject {
  return { name, type: 'SCALAR', scalar: { value }, ...(role === undefined ? {} : { allocation_info: { role } }) };
}

/** The engine container of a part: image, network, port mapping, volumes, parameters. */
export function containerOf(config: OrchConfig, part: Part, ports: readonly number[]): JsonObject {
  const image =
    part !== 'datastore' ? config.images.orch : config.dsEngine === 'etcd' ? config.images.kvstore : config.images.sql;
  const userNetwork =
    config.clusterCni ?? (['bridge', 'host'].includes(config.engineCni.toLowerCase()) ? undefined : config.engineCni);
  const network = userNetwork !== undefined ? 'USER' : config.engineCni.toLowerCase() === 'host' ? 'HOST' : 'BRIDGE';
  const volume = part === 'server' ? config.volumeServer : part === 'datastore' ? config.volumeDs : undefined;
  const mappings =
    network === 'HOST' ? [] : [{ host_port: ports[0], container_port: containerPort(config, part), protocol: 'tcp' }];
  const volumes =
    volume === undefined
      ? {}
      : {
          volumes: [
            {
              container_path:
                part !== 'datastore'
                  ? '/var/lib/rancher/k3s'
                  : config.dsEngine === 'etcd'
                    ? '/bitnami/etcd'
                    : '/var/lib/mysql',
              mode: 'RW',
              source: { type: 'DOCKER_VOLUME', docker_volume: { driver: config.volumeDriver, name: volume } },
            },
          ],
        };
  const networks = userNetwork === undefined ? {} : { network_infos: [{ name: userNetwork }] };
  // ORCH_ENGINE=false: the same image in the cluster's own containerizer.
  if (!config.engine)
    return { type: 'MESOS', mesos: { image: { type: 'DOCKER', docker: { name: image } } }, ...networks, ...volumes };
  return {
    type: 'DOCKER',
    docker: {
      image,
      network,
      privileged: part !== 'datastore',
      force_pull_image: false,
      ...(mappings.length === 0 ? {} : { port_mappings: mappings }),
      parameters: [
        { key: 'shm-size', value: config.engineShmSize },
        ...(userNetwork === undefined ? [] : [{ key: 'net', value: userNetwork }]),
      ],
    },
    ...networks,
    ...volumes,
  };
}

/** The orchestrated cluster's name of the node a server or agent task runs: unique, from its task id. */
export function nodeName(config: OrchConfig, record: TaskRecord): string {
  return `${record.taskId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}.${config.customDomain}`;
}

/** The command of a part: the configured start line with the parameters the framework appends. */
export function commandOf(config: OrchConfig, record: TaskRecord): string {
  const part = record.part;
  if (part === 'datastore')
    return config.dsEngine === 'etcd'
      ? `etcd --listen-client-urls=http://0.0.0.0:${config.dsPort} --advertise-client-urls=http://$HOSTNAME:${config.dsPort}`
      : 'docker-entrypoint.sh mysqld';
  const line = part === 'server' ? config.serverString : config.agentString;
  return `${line} --token=${config.token} --node-name=${nodeName(config, record)}`;
}

/**
 * Where a part finds the others, as the environment of its container: an
 * agent the server's API (`K3S_URL`), the server its datastore.
 */
export interface Peers {
  readonly server: string | undefined;
  readonly datastore: string | undefined;
}

function environmentOf(config: OrchConfig, record: TaskRecord, peers: Peers): { name: string; value: string }[] {
  const vars = [
    { name: 'BOOTSTRAP_URL', value: config.bootstrapUrl },
    { name: 'K3S_TOKEN', value: config.token },
    { name: 'PORT0', value: String(record.ports[0]) },
  ];
  if (record.part === 'agent' && peers.server !== undefined)
    vars.push({ name: 'K3S_URL', value: `https://${peers.server}` });
  if (record.part === 'server' && peers.datastore !== undefined) {
    const endpoint =
      config.dsEngine === 'etcd' ? `http://${peers.datastore}` : `mysql://root@tcp(${peers.datastore})/k3s`;
    vars.push({ name: 'K3S_DATASTORE_ENDPOINT', value: endpoint });
  }
  return vars;
}

/** The TaskInfo launching a part's task on the offer with the host ports given. */
export function taskInfoOf(
  config: OrchConfig,
  record: TaskRecord,
  offer: JsonObject,
  role: string | undefined,
  peers: Peers,
): JsonObject {
  const want = config.resources[record.part];
  const labels = [
    { key: 'framework', value: config.name },
    { key: 'part', value: record.part },
    ...(record.part === 'agent' ? config.agentLabels : []),
  ];
  return {
    name: `${config.name}:${record.part}`,
    task_id: { value: record.taskId },
    agent_id: offer.agent_id,
    resources: [
      scalar('cpus', want.cpus, role),
      scalar('mem', want.mem, role),
      ...(want.disk === undefined ? [] : [scalar('disk', want.disk, role)]),
      {
        name: 'ports',
        type: 'RANGES',
        ranges: { range: record.ports.map((p) => ({ begin: p, end: p })) },
        ...(role === undefined ? {} : { allocation_info: { role } }),
      },
    ],
    command: {
      shell: true,
      value: commandOf(config, record),
      environment: { variables: environmentOf(config, record, peers) },
    },
    container: containerOf(config, record.part, record.ports),
    labels: { labels },
  };
}
