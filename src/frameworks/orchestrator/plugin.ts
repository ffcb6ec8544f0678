/**
 * The command-line plugin of the orchestration framework: finds frameworks
 * in the master's `/frameworks`, and calls a framework's API at its
 * `webui_url` (under `/api/m3s/v0/`, as the plugin users already have does)
 * with the `principal`/`secret` of the `[framework]` section of its INI
 * configuration file as HTTP Basic credentials.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'ini';

export interface PluginConfig {
  /** The master's URL. */
  readonly master: string;
  readonly principal: string | undefined;
  readonly secret: string | undefined;
}

/** A failure the command reports in one line (exit code 1). */
export class PluginError extends Error {}

export const DEFAULT_PLUGIN_MASTER = 'http://127.0.0.1:5050';

/**
 * Reads the INI file: `[framework]` `principal` and `secret`, `[master]`
 * `address` (`host:port` or a URL). A missing file is an empty one unless it
 * was named explicitly.
 */
export function loadPluginConfig(path: string, explicit: boolean, masterFlag: string | undefined): PluginConfig {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (explicit || (e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new PluginError(`cannot read ${path}: ${(e as Error).message}`);
  }
  const ini = parse(text) as Record<string, Record<string, unknown> | unknown>;
  const section = (name: string): Record<string, unknown> => {
    const s = ini[name];
    return typeof s === 'object' && s !== null ? (s as Record<string, unknown>) : {};
  };
  const framework = section('framework');
  const known = ['principal', 'secret'];
  for (const key of Object.keys(framework))
    if (!known.includes(key))
      throw new PluginError(`${path}: unknown key ${key} in [framework] (known: ${known.join(', ')})`);
  const str = (v: unknown, key: string): string | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new PluginError(`${path}: ${key} must be a string`);
    return v;
  };
  const address = masterFlag ?? str(section('master')['address'], '[master] address') ?? DEFAULT_PLUGIN_MASTER;
  return {
    master: /^[a-z]+:\/\//i.test(address) ? address : `http://${address}`,
    principal: str(framework['principal'], '[framework] principal'),
    secret: str(framework['secret'], '[framework] secret'),
  };
}

export interface FrameworkRow {
  readonly id: string;
  readonly active: boolean;
  readonly webuiUrl: string;
  readonly name: string;
}

async function fetchText(url: URL, init: RequestInit, what: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'follow' });
  } catch (e) {
    throw new PluginError(
      `${what} at ${url.origin}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`,
    );
  }
  const body = await res.text();
  if (res.status !== 200) throw new PluginError(`${what}: ${res.status} ${body.trim().split('\n')[0] ?? ''}`.trimEnd());
  return body;
}

/** The master's frameworks (active and inactive ones), for `list` and to find a framework's API. */
export async function frameworks(config: PluginConfig): Promise<FrameworkRow[]> {
  const text = await fetchText(
    new URL('/frameworks', config.master),
    { headers: { accept: 'application/json' } },
    'the master',
  );
  const body = JSON.parse(text) as { frameworks?: Record<string, any>[] };
  return (body.frameworks ?? []).map((f) => ({
    id: String(f.id),
    active: f.active === true,
    webuiUrl: String(f.webui_url ?? ''),
    name: String(f.name ?? ''),
  }));
}

/** Rows as aligned columns with a header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return `${[header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** `list`: the frameworks whose name contains `match` (`m3s` unless told). */
export async function listText(config: PluginConfig, match: string): Promise<string> {
  const rows = (await frameworks(config)).filter((f) => f.name.includes(match));
  return table(
    ['ID', 'Active', 'WebUI', 'Name'],
    rows.map((f) => [f.id, String(f.active), f.webuiUrl, f.name]),
  );
}

/** Calls the framework's API: GET (or PUT) a path under `/api/m3s/v0/`. */
export async function callFramework(
  config: PluginConfig,
  frameworkId: string,
  path: string,
  method = 'GET',
): Promise<string> {
  const found = (await frameworks(config)).find((f) => f.id === frameworkId);
  if (found === undefined) throw new PluginError(`no framework ${frameworkId} at the master ${config.master}`);
  if (found.webuiUrl === '')
    throw new PluginError(`framework ${frameworkId} has no webui_url: not an orchestration framework`);
  const headers: Record<string, string> = {};
  if (config.principal !== undefined)
    headers.authorization = `Basic ${Buffer.from(`${config.principal}:${config.secret ?? ''}`).toString('base64')}`;
  return fetchText(new URL(`/api/m3s/v0/${path}`, found.webuiUrl), { method, headers }, `framework ${frameworkId}`);
}

/** The API path of `scale`: the part's plugin name and the count. */
export function scalePath(part: 'agent' | 'manager' | 'datastore', count: string): string {
  if (!/^[0-9]+$/.test(count))
    throw new PluginError(`count must be a non-negative integer, got ${JSON.stringify(count)}`);
  return `${part === 'manager' ? 'server' : part === 'datastore' ? 'etcd' : 'agent'}/scale/${count}`;
}
