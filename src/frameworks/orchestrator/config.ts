/**
 * The orchestration framework's configuration: the environment variables of
 * the spec (002, "Orchestration framework environment variables") with
 * their defaults. A value that does not parse is refused at start with the
 * variable's name, so that a typo never runs a cluster with a default.
 */
import os from 'node:os';

export type Part = 'server' | 'agent' | 'datastore';
export const PARTS: readonly Part[] = ['datastore', 'server', 'agent'];

export interface Label {
  readonly key: string;
  readonly value: string;
}

export interface PartResources {
  readonly cpus: number;
  readonly mem: number;
  readonly disk: number | undefined;
}

export interface OrchConfig {
  readonly user: string;
  readonly name: string;
  readonly role: string;
  readonly port: number;
  readonly hostname: string;
  readonly clusterUsername: string | undefined;
  readonly clusterPassword: string | undefined;
  readonly clusterPrincipal: string | undefined;
  /** `host:port` of the master, or a URL. */
  readonly master: string;
  readonly clusterCni: string | undefined;
  readonly clusterSsl: boolean;
  readonly portFrom: number;
  readonly portTo: number;
  readonly logLevel: 'info' | 'warn' | 'error' | 'debug';
  readonly engineCni: string;
  readonly engineSock: string | undefined;
  readonly engineShmSize: string;
  readonly domain: string;
  readonly authUsername: string | undefined;
  readonly authPassword: string | undefined;
  readonly token: string;
  readonly customDomain: string;
  readonly serverString: string;
  readonly agentString: string;
  readonly resources: Readonly<Record<Part, PartResources>>;
  readonly constraints: Readonly<Record<Part, string | undefined>>;
  readonly agentLabels: readonly Label[];
  readonly counts: Readonly<Record<Part, number>>;
  readonly engine: boolean;
  /** `host:port` of a Redis store; undefined: the embedded store. */
  readonly storeServer: string | undefined;
  readonly storePassword: string | undefined;
  readonly bootstrapUrl: string;
  readonly skipSsl: boolean;
  readonly sslCrtBase64: string | undefined;
  readonly sslKeyBase64: string | undefined;
  readonly dsPort: number;
  /** `DS_ENGINE`: the datastore is a SQL server (`mysql`, IMAGE_SQL) or a key-value one (`etcd`, IMAGE_KVSTORE). */
  readonly dsEngine: 'mysql' | 'etcd';
  readonly images: Readonly<{ orch: string; kvstore: string; sql: string }>;
  readonly volumeDriver: string;
  readonly volumeServer: string;
  readonly volumeDs: string;
  readonly heartbeatMs: number;
}

/** A configuration refused: the variable and why. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
  }
}

export const DEFAULT_SERVER_STRING =
  '/usr/local/bin/k3s server --cluster-cidr=10.2.0.0/16 --service-cidr=10.3.0.0/16 --cluster-dns=10.3.0.10 --disable-cloud-controller --snapshotter=native --flannel-backend=vxlan';
export const DEFAULT_AGENT_STRING = '/usr/local/bin/k3s agent --snapshotter=native --flannel-backend=vxlan';

/** Reads the variables of one environment. */
class Reader {
  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** The value, or undefined when unset or empty. */
  opt(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  str(name: string, fallback: string): string {
    return this.opt(name) ?? fallback;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(value)) return true;
    if (/^(false|0|no)$/i.test(value)) return false;
    throw new ConfigError(name, `expected true or false, got ${JSON.stringify(value)}`);
  }

  /** A positive number (CPU, MiB). */
  positive(name: string, fallback: number | undefined): number | undefined {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!/^[0-9]*\.?[0-9]+$/.test(value) || !Number.isFinite(n) || n <= 0)
      throw new ConfigError(name, `expected a positive number, got ${JSON.stringify(value)}`);
    return n;
  }

  count(name: string, fallback: number): number {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    if (!/^[0-9]+$/.test(value))
      throw new ConfigError(name, `expected a non-negative integer, got ${JSON.stringify(value)}`);
    return Number(value);
  }

  port(name: string, fallback: number, allowZero = false): number {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!/^[0-9]+$/.test(value) || n > 65535 || (n === 0 && !allowZero))
      throw new ConfigError(name, `expected a port number, got ${JSON.stringify(value)}`);
    return n;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    if (!(values as readonly string[]).includes(value))
      throw new ConfigError(name, `expected one of ${values.join(', ')}, got ${JSON.stringify(value)}`);
    return value as T;
  }

  /** `host:port` (or a URL), for the master and the store. */
  address(name: string, fallback: string | undefined): string | undefined {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    if (!/^[a-z]+:\/\//i.test(value) && !/^[^\s:/]+:[0-9]{1,5}$/.test(value))
      throw new ConfigError(name, `expected host:port, got ${JSON.stringify(value)}`);
    return value;
  }

  labels(name: string): Label[] {
    const value = this.opt(name);
    if (value === undefined) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ConfigError(name, 'expected a JSON array of {"key","value"} objects');
    }
    const ok = (l: unknown): l is Label =>
      typeof l === 'object' &&
      l !== null &&
      typeof (l as Label).key === 'string' &&
      typeof (l as Label).value === 'string';
    if (!Array.isArray(parsed) || !parsed.every(ok))
      throw new ConfigError(name, 'expected a JSON array of {"key","value"} objects');
    return parsed.map((l: Label) => ({ key: l.key, value: l.value }));
  }

  duration(name: string, fallback: number): number {
    const value = this.opt(name);
    if (value === undefined) return fallback;
    const ms = parseSpan(value);
    if (ms === undefined || ms <= 0)
      throw new ConfigError(name, `expected a duration such as 15s, 500ms or 1m, got ${JSON.stringify(value)}`);
    return ms;
  }
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds of `15s`, `500ms`, `1.5m`, `2h` (a plain number is seconds). */
export function parseSpan(text: string): number | undefined {
  const match = /^([0-9]*\.?[0-9]+)(ms|s|m|h)?$/.exec(text);
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 's']!);
}

/**
 * The configuration of an environment (`process.env` in the command). The
 * variables are read in a fixed order, so that of two bad values the same
 * one is named every time.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): OrchConfig {
  const r = new Reader(env);
  const resources = partResourcesOf(r);
  const { portFrom, portTo } = portRangeOf(r);
  const { authUsername, authPassword } = apiCredentialsOf(r);
  return {
    ...frameworkOf(r),
    ...masterConnectionOf(r),
    portFrom,
    portTo,
    logLevel: r.oneOf('LOGLEVEL', ['info', 'warn', 'error', 'debug'], 'info'),
    engineCni: r.str('ENGINE_CNI', 'bridge'),
    engineSock: r.opt('ENGINE_SOCK'),
    engineShmSize: r.str('ENGINE_SHM_SIZE', '30gb'),
    domain: r.str('DOMAIN', '.local'),
    authUsername,
    authPassword,
    token: r.str('ORCH_TOKEN', '123456789'),
    customDomain: r.str('ORCH_CUSTOM_DOMAIN', 'cloud.local'),
    serverString: r.str('ORCH_SERVER_STRING', DEFAULT_SERVER_STRING),
    agentString: r.str('ORCH_AGENT_STRING', DEFAULT_AGENT_STRING),
    resources,
    ...placementOf(r),
    engine: r.bool('ORCH_ENGINE', true),
    storeServer: r.address('STORE_SERVER', undefined),
    storePassword: r.opt('STORE_PASSWORD'),
    bootstrapUrl: r.str('BOOTSTRAP_URL', DEFAULT_BOOTSTRAP_URL),
    skipSsl: r.bool('SKIP_SSL', true),
    sslCrtBase64: base64(r, 'SSL_CRT_BASE64'),
    sslKeyBase64: base64(r, 'SSL_KEY_BASE64'),
    dsPort: r.port('DS_PORT', 3306),
    dsEngine: r.oneOf('DS_ENGINE', ['mysql', 'etcd'], 'mysql'),
    images: imagesOf(r),
    volumeDriver: r.str('VOLUME_DRIVER', 'local'),
    volumeServer: r.str('VOLUME_ORCH_SERVER', '/data/k3s/server'),
    volumeDs: r.str('VOLUME_DS', '/data/k3s/datastore'),
    heartbeatMs: r.duration('HEARTBEAT_INTERVAL', 15_000),
  };
}

const DEFAULT_BOOTSTRAP_URL = 'https://raw.githubusercontent.com/AVENTER-UG/mesos-m3s/master/bootstrap/bootstrap.sh';

/** The resources of a server, an agent and a datastore container (`ORCH_*_CPU`, `ORCH_*_MEM`, `DS_*`). */
function partResourcesOf(r: Reader): OrchConfig['resources'] {
  const server: PartResources = {
    cpus: r.positive('ORCH_SERVER_CPU', 0.1)!,
    mem: r.positive('ORCH_SERVER_MEM', 1200)!,
    disk: undefined,
  };
  const agent: PartResources = {
    cpus: r.positive('ORCH_AGENT_CPU', 0.1)!,
    mem: r.positive('ORCH_AGENT_MEM', 1200)!,
    disk: undefined,
  };
  const datastore: PartResources = {
    cpus: r.positive('DS_CPU', 0.1)!,
    mem: r.positive('DS_MEM', 1200)!,
    disk: r.positive('DS_DISK', undefined),
  };
  return { server, agent, datastore };
}

/** The host ports the containers may take, the first not above the last. */
function portRangeOf(r: Reader): Pick<OrchConfig, 'portFrom' | 'portTo'> {
  const portFrom = r.port('PORTRANGE_FROM', 31000);
  const portTo = r.port('PORTRANGE_TO', 32000);
  if (portTo < portFrom) throw new ConfigError('PORTRANGE_TO', `${portTo} is below PORTRANGE_FROM ${portFrom}`);
  return { portFrom, portTo };
}

/** The credentials the framework's API asks for: both or neither. */
function apiCredentialsOf(r: Reader): Pick<OrchConfig, 'authUsername' | 'authPassword'> {
  const authUsername = r.opt('AUTH_USERNAME');
  const authPassword = r.opt('AUTH_PASSWORD');
  if ((authUsername === undefined) !== (authPassword === undefined)) {
    throw new ConfigError(
      authUsername === undefined ? 'AUTH_USERNAME' : 'AUTH_PASSWORD',
      'AUTH_USERNAME and AUTH_PASSWORD go together',
    );
  }
  return { authUsername, authPassword };
}

/** Who the framework is (`FRAMEWORK_*`); its name is also the store's prefix, so it keeps to a safe alphabet. */
function frameworkOf(r: Reader): Pick<OrchConfig, 'user' | 'name' | 'role' | 'port' | 'hostname'> {
  const name = r.str('FRAMEWORK_NAME', 'm3s');
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new ConfigError('FRAMEWORK_NAME', `expected letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  return {
    user: r.str('FRAMEWORK_USER', 'root'),
    name,
    role: r.str('FRAMEWORK_ROLE', 'm3s'),
    port: r.port('FRAMEWORK_PORT', 10000, true),
    hostname: r.str('FRAMEWORK_HOSTNAME', os.hostname()),
  };
}

/** How the framework reaches the master (`CLUSTER_*`, each falling back to its `MESOS_*` spelling). */
function masterConnectionOf(
  r: Reader,
): Pick<
  OrchConfig,
  'clusterUsername' | 'clusterPassword' | 'clusterPrincipal' | 'master' | 'clusterCni' | 'clusterSsl'
> {
  return {
    clusterUsername: r.opt('CLUSTER_USERNAME') ?? r.opt('MESOS_USERNAME'),
    clusterPassword: r.opt('CLUSTER_PASSWORD') ?? r.opt('MESOS_PASSWORD'),
    clusterPrincipal: r.opt('CLUSTER_PRINCIPAL') ?? r.opt('MESOS_PRINCIPAL'),
    master: r.address('CLUSTER_MASTER', r.address('MESOS_MASTER', '127.0.0.1:5050'))!,
    clusterCni: r.opt('CLUSTER_CNI'),
    clusterSsl: r.bool('CLUSTER_SSL', false),
  };
}

/** Where the parts run and how many (`ORCH_*_CONSTRAINT`, `ORCH_AGENT_LABELS`, `*_COUNT`). */
function placementOf(r: Reader): Pick<OrchConfig, 'constraints' | 'agentLabels' | 'counts'> {
  return {
    constraints: {
      server: r.opt('ORCH_SERVER_CONSTRAINT'),
      agent: r.opt('ORCH_AGENT_CONSTRAINT'),
      datastore: r.opt('ORCH_DS_CONSTRAINT'),
    },
    agentLabels: r.labels('ORCH_AGENT_LABELS'),
    counts: {
      server: r.count('ORCH_SERVER_COUNT', 1),
      agent: r.count('ORCH_AGENT_COUNT', 1),
      datastore: r.count('DS_COUNT', 1),
    },
  };
}

function imagesOf(r: Reader): OrchConfig['images'] {
  return {
    orch: r.str('IMAGE_ORCH', 'avhost/ubuntu-m3s:latest'),
    kvstore: r.str('IMAGE_KVSTORE', 'bitnami/etcd:latest'),
    sql: r.str('IMAGE_SQL', 'mariadb:latest'),
  };
}

function base64(r: Reader, name: string): string | undefined {
  const value = r.opt(name);
  if (value !== undefined && !/^[A-Za-z0-9+/\r\n]+={0,2}$/.test(value))
    throw new ConfigError(name, 'expected Base64 content');
  return value;
}

/** The master's base URL. */
export function masterUrl(config: OrchConfig): string {
  if (/^[a-z]+:\/\//i.test(config.master)) return config.master;
  return `${config.clusterSsl ? 'https' : 'http'}://${config.master}`;
}
