/**
 * The files API of upstream's `src/files/files.cpp`, the part that decides
 * and renders (the servers read the disk and answer): which paths an agent
 * has attached, how a requested path resolves against them, the queries of
 * `/files/browse`, `/files/read` and `/files/download`, and FileInfo as
 * upstream's `model(FileInfo)` writes it.
 *
 * An agent attaches each executor's sandbox under its real path
 * (`<work_dir>/slaves/<a>/frameworks/<f>/executors/<e>/runs/<c>`) and under
 * the virtual paths `/frameworks/<f>/executors/<e>/runs/<c>` and
 * `/frameworks/<f>/executors/<e>/runs/latest` (its newest run), until the
 * sandbox is garbage-collected. A requested path resolves by the longest
 * attached prefix, as upstream's `resolve`; what follows it must stay inside
 * the sandbox: a `..` that climbs out is refused (400, "inaccessible", as
 * upstream refuses a path whose real path leaves its root), and a path no
 * attached prefix names is not found (404).
 */
import { executorPath, virtualRunPath } from '../core/agent/sandboxes.js';
import type { Sandbox, SandboxEntry } from '../core/process/sandbox.js';
import { normalPath } from '../core/process/sandbox.js';
import type { AgentExecutorView, AgentNodeView } from '../core/view.js';
import type { mesos } from './generated/types.js';
import { usersOf } from './agent-state.js';
import { Double } from './v0/json.js';
import { jsonpQuery, type JsonpQuery, type QueryParams, type QueryResult } from './v0/query.js';
import type { JsonObject } from './v0/summary.js';

/** An executor's sandbox as a path attached to the files API. */
export interface AttachedSandbox {
  readonly agentId: string;
  readonly frameworkId: string;
  readonly executorId: string;
  /** Its real path (the sandbox's). */
  readonly root: string;
  readonly sandbox: Sandbox;
  /** A real directory at `root` (a spawned executor's), rather than the sandbox in memory. */
  readonly onDisk: boolean;
  /** Whose it is, for `access_sandboxes`: its framework's user. */
  readonly user: string;
}

/** The paths an agent has attached, each to its sandbox: completed executors first, so `latest` names the newest run. */
export function attachedPaths(node: AgentNodeView, withRealPaths = true): Map<string, AttachedSandbox> {
  const users = usersOf(node);
  const out = new Map<string, AttachedSandbox>();
  const attach = (executor: AgentExecutorView) => {
    const { sandbox, frameworkId, executorId } = executor;
    if (sandbox.released) return;
    const attached: AttachedSandbox = {
      agentId: node.config.id,
      frameworkId,
      executorId,
      root: sandbox.path,
      sandbox,
      onDisk: executor.spawned === true,
      user: users.get(frameworkId) ?? '',
    };
    if (withRealPaths) out.set(sandbox.path, attached);
    out.set(virtualRunPath(frameworkId, executorId, executor.containerId), attached);
    out.set(virtualRunPath(frameworkId, executorId, 'latest'), attached);
  };
  for (const executor of node.completedExecutors()) attach(executor);
  for (const executor of node.executors()) attach(executor);
  return out;
}

/** `runs/latest` of the executor's directory on disk (upstream's symbolic link), for `/files/debug`. */
export function latestRunPath(node: AgentNodeView, frameworkId: string, executorId: string): string {
  return `${executorPath(node.sandboxes.workDir, { agentId: node.config.id, frameworkId, executorId })}/runs/latest`;
}

export type Resolved =
  | { readonly ok: true; readonly attached: AttachedSandbox; readonly inner: string }
  | { readonly ok: false; readonly error: 'NOT_FOUND' }
  | { readonly ok: false; readonly error: 'INVALID'; readonly message: string };

/**
 * The sandbox a requested path is in, and the path inside it (`''` its
 * root): the longest attached prefix of the path's parts, as upstream's
 * `resolve`; what follows may not climb out of the sandbox.
 */
export function resolveAttached(paths: ReadonlyMap<string, AttachedSandbox>, requested: string): Resolved {
  const trimmed = requested.length > 1 ? requested.replace(/\/+$/, '') : requested;
  const parts = trimmed.split('/');
  for (let n = parts.length; n > 0; n--) {
    const attached = paths.get(parts.slice(0, n).join('/'));
    if (attached === undefined) continue;
    const inner = normalPath(parts.slice(n).join('/'));
    if (inner === undefined) return { ok: false, error: 'INVALID', message: `'${requested}' is inaccessible.` };
    return { ok: true, attached, inner };
  }
  return { ok: false, error: 'NOT_FOUND' };
}

/** What `stat(2)` gives the files API, from memory or from the disk. */
export interface FileStat {
  readonly directory: boolean;
  readonly nlink: number;
  readonly size: number;
  readonly mtimeMs: number;
  /** The permission bits (and the file type, from `directory` or the mode). */
  readonly mode: number;
  readonly uid: string;
  readonly gid: string;
}

/** A sandbox entry in memory as stat sees it: the executor's user owns it, files 0644, directories 0755. */
export function memoryStat(entry: SandboxEntry, user: string): FileStat {
  const directory = entry.kind === 'directory';
  return {
    directory,
    nlink: directory ? 2 : 1,
    size: entry.kind === 'file' ? entry.size : 4096,
    mtimeMs: entry.mtimeMs,
    mode: directory ? 0o40755 : 0o100644,
    uid: user,
    gid: user,
  };
}

/** Upstream's FileInfo JSON: `path`, `nlink`, `size`, `mtime` (seconds), `mode` as `ls -l` writes it, `uid`, `gid`. */
export function fileInfoJson(path: string, stat: FileStat): JsonObject {
  return {
    path,
    nlink: stat.nlink,
    size: stat.size,
    mtime: new Double(stat.mtimeMs / 1000),
    mode: modeString(stat.mode, stat.directory),
    uid: stat.uid,
    gid: stat.gid,
  };
}

const FILE_TYPES: readonly [number, string][] = [
  [0o140000, 's'],
  [0o120000, 'l'],
  [0o100000, '-'],
  [0o060000, 'b'],
  [0o040000, 'd'],
  [0o020000, 'c'],
  [0o010000, 'p'],
];

/** `-rw-r--r--`: the file type, then read, write and execute for owner, group and others. */
export function modeString(mode: number, directory: boolean): string {
  const format = mode & 0o170000;
  const type = directory ? 'd' : (FILE_TYPES.find(([bits]) => bits === format)?.[1] ?? '-');
  let out = type;
  for (const shift of [6, 3, 0]) {
    const bits = (mode >> shift) & 7;
    out += `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${bits & 1 ? 'x' : '-'}`;
  }
  return out;
}

/** `path` joined with an entry's name, as upstream's `path::join`. */
export function joinPath(path: string, name: string): string {
  return path.endsWith('/') ? `${path}${name}` : `${path}/${name}`;
}

export interface FilesPathQuery extends JsonpQuery {
  readonly path: string;
}

/** `path=` (required, not empty, else upstream's 400), and `jsonp`. */
export function filesPathQuery(params: QueryParams): QueryResult<FilesPathQuery> {
  const base = jsonpQuery(params);
  if (!base.ok) return base;
  const path = params.get('path');
  if (path === undefined || path === '') return { ok: false, error: "Expecting 'path=value' in query." };
  return { ok: true, value: { ...base.value, path } };
}

export interface FilesReadQuery extends FilesPathQuery {
  /** -1 (the default): the file's size is asked, and no data. */
  readonly offset: number;
  /** None: to the end of the file (at most READ_LENGTH_MAX). */
  readonly length: number | undefined;
}

/** Upstream's cap of one read: 16 pages of 4 KiB. */
export const READ_LENGTH_MAX = 16 * 4096;

/** `offset=` and `length=`, whole numbers of at least -1 as upstream's `numify` and checks take them. */
export function filesReadQuery(params: QueryParams): QueryResult<FilesReadQuery> {
  const base = filesPathQuery(params);
  if (!base.ok) return base;
  const offset = wholeParam(params, 'offset', 'offset');
  if (typeof offset === 'string') return { ok: false, error: offset };
  const length = wholeParam(params, 'length', 'length');
  if (typeof length === 'string') return { ok: false, error: length };
  return {
    ok: true,
    value: { ...base.value, offset: offset ?? -1, length: length === undefined || length === -1 ? undefined : length },
  };
}

function wholeParam(params: QueryParams, name: string, what: string): number | undefined | string {
  const text = params.get(name);
  if (text === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(text.trim())) return `Failed to parse ${what}: Failed to convert '${text}' to number.`;
  const value = Number(text.trim());
  if (!Number.isSafeInteger(value)) return `Failed to parse ${what}: Failed to convert '${text}' to number.`;
  if (value < -1) return `Negative ${what} provided: ${value}.`;
  return value;
}

/**
 * What `/files/read` answers for a file of `size` bytes: the bytes to read
 * (`start`, `end`), and the `offset` it reports, as upstream's read does it:
 * `offset=-1` asks the size (no data, the size as offset); an offset at or
 * past the end reads nothing; the length is capped at READ_LENGTH_MAX.
 */
export function readWindow(
  size: number,
  query: Pick<FilesReadQuery, 'offset' | 'length'>,
): { start: number; end: number; offset: number } {
  if (query.offset === -1) return { start: 0, end: 0, offset: size };
  if (query.offset >= size) return { start: 0, end: 0, offset: query.offset };
  const length = Math.min(query.length ?? size - query.offset, READ_LENGTH_MAX);
  return { start: query.offset, end: Math.min(size, query.offset + length), offset: query.offset };
}

/** LIST_FILES and READ_FILE of the v1 operator APIs (agent's and master's), their payloads read. */
export type FilesCall =
  | { readonly type: 'LIST_FILES'; readonly path: string }
  | { readonly type: 'READ_FILE'; readonly path: string; readonly offset: number; readonly length: number | undefined };

/** Their responses, in the shape the agent's and the master's `Response` share. */
export type FilesResponse =
  | { type: 'LIST_FILES'; list_files: { file_infos: mesos.v1.FileInfo[] } }
  | { type: 'READ_FILE'; read_file: { size: number; data: Uint8Array } };

/** The files call an operator `Call` of either API is, if it is one (its payload validated already). */
export function filesCallOf(call: {
  readonly type?: string;
  readonly list_files?: { readonly path: string } | null;
  readonly read_file?: { readonly path: string; readonly offset: number; readonly length?: number | null } | null;
}): FilesCall | undefined {
  if (call.type === 'LIST_FILES' && call.list_files != null) return { type: 'LIST_FILES', path: call.list_files.path };
  if (call.type !== 'READ_FILE' || call.read_file == null) return undefined;
  const { path, offset, length } = call.read_file;
  return { type: 'READ_FILE', path, offset: Number(offset), length: length == null ? undefined : Number(length) };
}

/** A FileInfo message: `mtime` in nanoseconds, `mode` the `st_mode` bits with the file type. */
export function fileInfoMessage(path: string, stat: FileStat): mesos.v1.FileInfo {
  const typeBits = stat.directory ? 0o040000 : stat.mode & 0o170000 || 0o100000;
  return {
    path,
    nlink: stat.nlink,
    size: stat.size,
    mtime: { nanoseconds: Math.round(stat.mtimeMs * 1_000_000) },
    mode: typeBits | (stat.mode & 0o7777),
    uid: stat.uid,
    gid: stat.gid,
  };
}

/** libprocess's MIME types by extension, the common ones, for `/files/download`; others are `application/octet-stream`. */
const MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ['.txt', 'text/plain'],
  ['.log', 'text/plain'],
  ['.html', 'text/html'],
  ['.htm', 'text/html'],
  ['.css', 'text/css'],
  ['.js', 'application/javascript'],
  ['.json', 'application/json'],
  ['.xml', 'application/xml'],
  ['.csv', 'text/csv'],
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.gif', 'image/gif'],
  ['.svg', 'image/svg+xml'],
  ['.ico', 'image/x-icon'],
  ['.pdf', 'application/pdf'],
  ['.gz', 'application/x-gzip'],
  ['.tgz', 'application/x-gzip'],
  ['.tar', 'application/x-tar'],
  ['.zip', 'application/zip'],
  ['.jar', 'application/java-archive'],
]);

/** The `Content-Type` and `Content-Disposition` of a download of the file at `path`. */
export function downloadHeaders(path: string): { type: string; disposition: string } {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const type = dot > 0 ? MIME_TYPES.get(name.slice(dot).toLowerCase()) : undefined;
  return { type: type ?? 'application/octet-stream', disposition: `attachment; filename=${name}` };
}
