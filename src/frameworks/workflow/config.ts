/**
 * The workflow service's configuration: the `[cluster]` section of an INI
 * file (spec 002, "Executor configuration"), read with the `ini` package.
 * Every key of the spec's table is known, with the defaults the workflow
 * integration uses where the spec shows none; an unknown key, or a value
 * that does not read as its type, is refused with the key's name. Other
 * sections (`[core]`, the workflow scheduler's own) are left alone.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'ini';

export interface WorkflowConfig {
  readonly clusterSsl: boolean;
  /** `host:port` of a master (or a URL), or several comma-separated; a non-leader's redirect is followed. */
  readonly master: string;
  readonly frameworkName: string;
  readonly checkpoint: boolean;
  readonly failoverTimeoutSeconds: number;
  /** Whether an argument list runs through the shell (`CommandInfo.shell`). */
  readonly commandShell: boolean;
  readonly taskCpus: number;
  readonly taskMemoryMib: number;
  readonly taskDiskMib: number;
  readonly authenticate: boolean;
  readonly defaultPrincipal: string | undefined;
  readonly defaultSecret: string | undefined;
  readonly engineImageSlave: string | undefined;
  readonly engineVolumeDriver: string;
  readonly engineVolumeDagName: string | undefined;
  readonly engineVolumeDagContainerPath: string | undefined;
  readonly engineVolumeLogsName: string | undefined;
  readonly engineVolumeLogsContainerPath: string | undefined;
  readonly engineSock: string | undefined;
  readonly engineUserGroupId: string | undefined;
  readonly engineNetworkMode: NetworkMode;
  /** Added to every task's environment. */
  readonly engineEnvironment: readonly { readonly name: string; readonly value: string }[];
  readonly apiUsername: string;
  readonly apiPassword: string;
  readonly operatorApiUrl: string;
  /** `<name>:<value>` constraints every task's agent must satisfy too. */
  readonly clusterAttributes: readonly string[];
}

export const NETWORK_MODES = ['HOST', 'BRIDGE', 'NONE', 'USER'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

export const DEFAULT_API_PORT = 11000;

/**
 * Defaults of the integration (the spec shows none): a week of failover,
 * checkpointing on, 0.1 cpus, 256 MiB, 1000 MiB of disk, host networking,
 * the local API's credentials `user`/`password` as the integration's.
 */
export const DEFAULT_CONFIG: WorkflowConfig = {
  clusterSsl: false,
  master: '127.0.0.1:5050',
  frameworkName: 'workflow',
  checkpoint: true,
  failoverTimeoutSeconds: 604_800,
  commandShell: true,
  taskCpus: 0.1,
  taskMemoryMib: 256,
  taskDiskMib: 1000,
  authenticate: false,
  defaultPrincipal: undefined,
  defaultSecret: undefined,
  engineImageSlave: undefined,
  engineVolumeDriver: 'local',
  engineVolumeDagName: undefined,
  engineVolumeDagContainerPath: undefined,
  engineVolumeLogsName: undefined,
  engineVolumeLogsContainerPath: undefined,
  engineSock: undefined,
  engineUserGroupId: undefined,
  engineNetworkMode: 'HOST',
  engineEnvironment: [],
  apiUsername: 'user',
  apiPassword: 'password',
  operatorApiUrl: `http://localhost:${DEFAULT_API_PORT}`,
  clusterAttributes: [],
};

export type ConfigResult =
  | { readonly ok: true; readonly config: WorkflowConfig }
  | { readonly ok: false; readonly error: string };

type Reader = (value: unknown) => unknown;

const text: Reader = (v) => (typeof v === 'string' && v !== '' ? v : undefined);

const bool: Reader = (v) => {
  if (typeof v === 'boolean') return v;
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  return ['true', 'yes', 'on', '1'].includes(s) ? true : ['false', 'no', 'off', '0'].includes(s) ? false : undefined;
};

const number =
  (integer: boolean): Reader =>
  (v) => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    return Number.isFinite(n) && n >= 0 && (!integer || Number.isInteger(n)) ? n : undefined;
  };

const networkMode: Reader = (v) => {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return (NETWORK_MODES as readonly string[]).includes(s) ? s : undefined;
};

/** `host:port` or an http(s) URL, one or several comma-separated. */
const masters: Reader = (v) => {
  if (typeof v !== 'string') return undefined;
  const each = v.split(',').map((m) => m.trim());
  return each.every((m) => /^[^\s:/]+:\d{1,5}$/.test(m) || url(m) !== undefined) ? v : undefined;
};

const url: Reader = (v) => {
  if (typeof v !== 'string') return undefined;
  try {
    return new URL(v).protocol.startsWith('http') ? v.replace(/\/+$/, '') : undefined;
  } catch {
    return undefined;
  }
};

/** A list: repeated `key[]` lines, a JSON array, or comma-separated words. */
function list(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (s === '') return [];
  if (!s.startsWith('['))
    return s
      .split(',')
      .map((w) => w.trim())
      .filter((w) => w !== '');
  try {
    const parsed: unknown = JSON.parse(s);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const attributes: Reader = (v) => {
  const items = list(v);
  return items?.every((a) => typeof a === 'string' && isConstraint(a)) === true ? items : undefined;
};

/** `{"name":…,"value":…}` objects (the integration's form) or `NAME=value` words. */
const environment: Reader = (v) => {
  const items = list(v);
  if (items === undefined) return undefined;
  const out: { name: string; value: string }[] = [];
  for (const item of items) {
    if (typeof item === 'string' && /^[^=]+=/.test(item))
      out.push({ name: item.slice(0, item.indexOf('=')), value: item.slice(item.indexOf('=') + 1) });
    else if (typeof item === 'object' && item !== null && typeof (item as { name?: unknown }).name === 'string') {
      const { name, value } = item as { name: string; value?: unknown };
      out.push({ name, value: value === undefined ? '' : String(value) });
    } else return undefined;
  }
  return out;
};

/** `<name>:<value>`, both parts non-empty. */
export function isConstraint(s: string): boolean {
  const i = s.indexOf(':');
  return i > 0 && i < s.length - 1;
}

/** Each key of the section: its field, how it reads, and what the error says it must be. */
const KEYS: Record<string, readonly [keyof WorkflowConfig, Reader, string]> = {
  cluster_ssl: ['clusterSsl', bool, 'a boolean'],
  master: ['master', masters, 'host:port (or a URL), comma-separated for several masters'],
  framework_name: ['frameworkName', text, 'a non-empty string'],
  checkpoint: ['checkpoint', bool, 'a boolean'],
  failover_timeout: ['failoverTimeoutSeconds', number(true), 'a non-negative integer (seconds)'],
  command_shell: ['commandShell', bool, 'a boolean'],
  task_cpu: ['taskCpus', number(false), 'a non-negative number'],
  task_memory: ['taskMemoryMib', number(true), 'a non-negative integer (MiB)'],
  task_disk: ['taskDiskMib', number(true), 'a non-negative integer (MiB)'],
  authenticate: ['authenticate', bool, 'a boolean'],
  default_principal: ['defaultPrincipal', text, 'a non-empty string'],
  default_secret: ['defaultSecret', text, 'a non-empty string'],
  engine_image_slave: ['engineImageSlave', text, 'an image reference'],
  engine_volume_driver: ['engineVolumeDriver', text, 'a non-empty string'],
  engine_volume_dag_name: ['engineVolumeDagName', text, 'a non-empty string'],
  engine_volume_dag_container_path: ['engineVolumeDagContainerPath', text, 'a non-empty string'],
  engine_volume_logs_name: ['engineVolumeLogsName', text, 'a non-empty string'],
  engine_volume_logs_container_path: ['engineVolumeLogsContainerPath', text, 'a non-empty string'],
  engine_sock: ['engineSock', text, 'a path'],
  engine_user_group_id: ['engineUserGroupId', text, 'a non-empty string'],
  engine_network_mode: ['engineNetworkMode', networkMode, NETWORK_MODES.join(', ')],
  engine_environment: ['engineEnvironment', environment, 'a list of NAME=value or {"name","value"} objects'],
  api_username: ['apiUsername', text, 'a non-empty string'],
  api_password: ['apiPassword', text, 'a non-empty string'],
  operator_api_url: ['operatorApiUrl', url, 'an http(s) URL'],
  cluster_attributes: ['clusterAttributes', attributes, 'a list of <name>:<value>'],
};

/** The `[cluster]` section of INI text; every error names its key. */
export function parseWorkflowConfig(source: string): ConfigResult {
  const section: unknown = parse(source)['cluster'];
  if (section === undefined) return { ok: true, config: DEFAULT_CONFIG };
  if (typeof section !== 'object' || section === null) return { ok: false, error: '[cluster]: not a section' };
  const config: Record<string, unknown> = { ...DEFAULT_CONFIG };
  for (const [key, raw] of Object.entries(section)) {
    const known = KEYS[key.toLowerCase()];
    if (known === undefined) return { ok: false, error: `[cluster] ${key}: unknown key` };
    const [field, read, expected] = known;
    const value = read(raw);
    if (value === undefined)
      return { ok: false, error: `[cluster] ${key}: expected ${expected}, got ${JSON.stringify(raw)}` };
    config[field] = value;
  }
  const checked = config as unknown as WorkflowConfig;
  if (checked.authenticate && (checked.defaultPrincipal === undefined || checked.defaultSecret === undefined)) {
    return {
      ok: false,
      error: `[cluster] ${checked.defaultPrincipal === undefined ? 'default_principal' : 'default_secret'}: required with authenticate = true`,
    };
  }
  return { ok: true, config: checked };
}

/** Reads and parses a configuration file; a file that cannot be read is an error too. */
export function loadWorkflowConfig(file: string): ConfigResult {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (e) {
    return { ok: false, error: `${file}: ${(e as Error).message}` };
  }
  return parseWorkflowConfig(source);
}

/**
 * The masters' base URLs from `host:port[,host:port…]` (or URLs): each as
 * given when it is a URL, else `http(s)://host:port` by `ssl`.
 */
export function masterUrlsOf(master: string, ssl = false): string[] {
  return master
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '')
    .map((m) => (/^https?:\/\//.test(m) ? m.replace(/\/+$/, '') : `${ssl ? 'https' : 'http'}://${m}`));
}
