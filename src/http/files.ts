/**
 * The files API (`/files/browse`, `/files/read`, `/files/download`,
 * `/files/debug`), served by every agent for its sandboxes and by the
 * masters for the same virtual paths (wire/files.ts decides, this reads
 * and answers). A sandbox in memory is read in the cluster's read; a
 * spawned executor's is a real directory, read from the disk here, where a
 * symbolic link that leads out of the sandbox is refused as upstream's
 * `realpath` check refuses it. Reading a sandbox asks `access_sandboxes`
 * of the ACLs, with its framework's user as the object; `/files/debug`
 * asks `get_endpoints`. Any method, and `?jsonp=`, as upstream's.
 */
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxEntry } from '../core/process/sandbox.js';
import type { ClusterView } from '../core/view.js';
import type { ClusterDriver } from '../runtime/driver.js';
import {
  downloadHeaders,
  fileInfoJson,
  filesPathQuery,
  filesReadQuery,
  joinPath,
  memoryStat,
  fileInfoMessage,
  readWindow,
  resolveAttached,
  type AttachedSandbox,
  type FileStat,
  type FilesCall,
  type FilesResponse,
} from '../wire/files.js';
import { jsonpQuery } from '../wire/v0/index.js';
import { principalOf } from './auth.js';
import { sendError } from './errors.js';
import { everyMethod, serveMethods } from './methods.js';
import { sendBody } from './stream-body.js';
import { queryOf, sendJson } from './v0-replies.js';

/** Where a server's attached paths come from: undefined while there is nothing to ask (an agent recovering: 503). */
export interface FilesSource {
  readonly driver: ClusterDriver;
  paths(view: ClusterView, req: FastifyRequest): ReadonlyMap<string, AttachedSandbox> | undefined;
  /** `/files/debug`: the attached paths by name, with what each is. */
  debug(view: ClusterView, req: FastifyRequest): Record<string, string> | undefined;
  /** The 503's text, while `paths` is undefined. */
  readonly unavailable: string;
}

/** A requested path, found: in memory (read already), or on disk (to read). */
type Found =
  | { readonly kind: 'memory'; readonly entry: SandboxEntry; readonly user: string; readonly listing?: Listed[] }
  | { readonly kind: 'disk'; readonly root: string; readonly inner: string };

interface Listed {
  readonly name: string;
  readonly stat: FileStat;
}

type Lookup = Found | { readonly kind: 'error'; readonly send: (reply: FastifyReply) => FastifyReply };

const error = (send: (reply: FastifyReply) => FastifyReply): Lookup => ({ kind: 'error', send });

/** Resolves `requested` in the cluster's read: the ACL first, then the path, as upstream's files process. */
function lookup(source: FilesSource, req: FastifyRequest, requested: string, list: boolean): Lookup {
  return source.driver.read((view): Lookup => {
    const paths = source.paths(view, req);
    if (paths === undefined) return error((r) => sendError(r, 'UNAVAILABLE', source.unavailable));
    const resolved = resolveAttached(paths, requested);
    if (!resolved.ok && resolved.error === 'NOT_FOUND') return error((r) => sendError(r, 'NOT_FOUND'));
    const refused = resolved.ok
      ? view.authorizer.refusal('access_sandboxes', principalOf(req), resolved.attached.user)
      : undefined;
    if (refused !== undefined) return error((r) => sendError(r, 'FORBIDDEN', refused));
    if (!resolved.ok) {
      const message = resolved.error === 'INVALID' ? resolved.message : '';
      return error((r) => sendError(r, 'QUERY_INVALID', message));
    }
    const { attached, inner } = resolved;
    if (attached.onDisk) return { kind: 'disk', root: attached.root, inner };
    const entry = attached.sandbox.stat(inner);
    if (entry === undefined) return error((r) => sendError(r, 'NOT_FOUND'));
    const listing = list
      ? (attached.sandbox.list(inner) ?? []).map(([name, e]) => ({ name, stat: memoryStat(e, attached.user) }))
      : undefined;
    return { kind: 'memory', entry, user: attached.user, ...(listing === undefined ? {} : { listing }) };
  });
}

/** A path on disk inside `root`, followed through its links: undefined when there is none, a 400's text when it leaves the root. */
function onDisk(root: string, inner: string, requested: string): { real: string; stats: Stats } | undefined | string {
  let real: string;
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
    real = realpathSync(path.join(root, inner));
  } catch {
    return undefined;
  }
  if (real !== realRoot && !real.startsWith(`${realRoot}/`)) return `'${requested}' is inaccessible.`;
  try {
    return { real, stats: statSync(real) };
  } catch {
    return undefined;
  }
}

/** The name of a file's owner on disk: this process' user's name for its uid, else the number. */
function ownerName(uid: number): string {
  const me = os.userInfo();
  return me.uid === uid ? me.username : String(uid);
}

function diskStat(stats: Stats): FileStat {
  return {
    directory: stats.isDirectory(),
    nlink: stats.nlink,
    size: stats.size,
    mtimeMs: stats.mtimeMs,
    mode: stats.mode,
    uid: ownerName(stats.uid),
    gid: String(stats.gid),
  };
}

/** A file's size, and its bytes from `start` to `end` (read from the disk only as far as asked). */
export interface FileBytes {
  readonly size: number;
  slice(start: number, end: number): Buffer;
}

/** A file on disk, read by window: a large file is never read whole for a page of it. */
function diskBytes(real: string, size: number): FileBytes {
  return {
    size,
    slice: (start, end) => {
      const buffer = Buffer.alloc(Math.max(0, end - start));
      if (buffer.length === 0) return buffer;
      const fd = openSync(real, 'r');
      try {
        const read = readSync(fd, buffer, 0, buffer.length, start);
        return buffer.subarray(0, read);
      } finally {
        closeSync(fd);
      }
    },
  };
}

function memoryBytes(data: string): FileBytes {
  const bytes = Buffer.from(data, 'utf8');
  return { size: bytes.length, slice: (start, end) => bytes.subarray(start, end) };
}

/** The file's bytes, or the directory's entries (stat following links; one that fails is left out, as upstream's). */
function readDisk(
  found: Extract<Found, { kind: 'disk' }>,
  requested: string,
): { stat: FileStat; bytes?: FileBytes; listing?: Listed[] } | undefined | string {
  const at = onDisk(found.root, found.inner, requested);
  if (at === undefined || typeof at === 'string') return at;
  const stat = diskStat(at.stats);
  if (!stat.directory) return { stat, bytes: diskBytes(at.real, stat.size) };
  const listing: Listed[] = [];
  for (const name of readdirSync(at.real).sort()) {
    try {
      listing.push({ name, stat: diskStat(statSync(path.join(at.real, name))) });
    } catch {
      // Gone since, or a dangling link.
    }
  }
  return { stat, listing };
}

/** What a found path holds: its stat, and its bytes (a file) or its entries (a directory). */
function contents(
  found: Found,
  requested: string,
): { stat: FileStat; bytes?: FileBytes; listing?: Listed[] } | undefined | string {
  if (found.kind === 'disk') return readDisk(found, requested);
  const stat = memoryStat(found.entry, found.user);
  if (found.entry.kind === 'file') return { stat, bytes: memoryBytes(found.entry.data) };
  return { stat, listing: found.listing ?? [] };
}

export type FilesOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly send: (reply: FastifyReply) => FastifyReply };

const refuse = (send: (reply: FastifyReply) => FastifyReply): FilesOutcome<never> => ({ ok: false, send });

/** The entries of the directory at `requested`, each with its path (the requested one joined with its name); a file has none. */
export function browseFiles(
  source: FilesSource,
  req: FastifyRequest,
  requested: string,
): FilesOutcome<{ readonly path: string; readonly stat: FileStat }[]> {
  const found = lookup(source, req, requested, true);
  if (found.kind === 'error') return refuse(found.send);
  const got = contents(found, requested);
  if (got === undefined) return refuse((r) => sendError(r, 'NOT_FOUND'));
  if (typeof got === 'string') return refuse((r) => sendError(r, 'QUERY_INVALID', got));
  // Sorted by path; a file has no entries, as upstream's `ls` of a file gives none.
  return { ok: true, value: (got.listing ?? []).map((e) => ({ path: joinPath(requested, e.name), stat: e.stat })) };
}

/** The bytes of the file at `requested`; a directory is upstream's 400 (`Cannot read a directory.`). */
export function fileBytes(
  source: FilesSource,
  req: FastifyRequest,
  requested: string,
  verb: 'read' | 'download',
): FilesOutcome<FileBytes> {
  const found = lookup(source, req, requested, false);
  if (found.kind === 'error') return refuse(found.send);
  const got = contents(found, requested);
  if (got === undefined) return refuse((r) => sendError(r, 'NOT_FOUND'));
  if (typeof got === 'string') return refuse((r) => sendError(r, 'QUERY_INVALID', got));
  if (got.bytes === undefined) return refuse((r) => sendError(r, 'QUERY_INVALID', `Cannot ${verb} a directory.`));
  return { ok: true, value: got.bytes };
}

function registerBrowse(app: FastifyInstance, prefix: string, source: FilesSource): void {
  serveMethods(app, `${prefix}/files/browse`, everyMethod(app), (req, reply) => {
    const query = queryOf(req, filesPathQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const listing = browseFiles(source, req, query.value.path);
    if (!listing.ok) return listing.send(reply);
    const body = listing.value.map((e) => fileInfoJson(e.path, e.stat));
    return sendJson(req, reply, body, query.value.jsonp);
  });
}

function registerRead(app: FastifyInstance, prefix: string, source: FilesSource): void {
  serveMethods(app, `${prefix}/files/read`, everyMethod(app), (req, reply) => {
    const query = queryOf(req, filesReadQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const bytes = fileBytes(source, req, query.value.path, 'read');
    if (!bytes.ok) return bytes.send(reply);
    const window = readWindow(bytes.value.size, query.value);
    const data = bytes.value.slice(window.start, window.end).toString('utf8');
    return sendJson(req, reply, { data, offset: window.offset }, query.value.jsonp);
  });
}

function registerDownload(app: FastifyInstance, prefix: string, source: FilesSource): void {
  serveMethods(app, `${prefix}/files/download`, everyMethod(app), (req, reply) => {
    const query = queryOf(req, filesPathQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const bytes = fileBytes(source, req, query.value.path, 'download');
    if (!bytes.ok) return bytes.send(reply);
    const { type, disposition } = downloadHeaders(query.value.path);
    reply.header('content-disposition', disposition);
    return sendBody(req, reply, type, bytes.value.slice(0, bytes.value.size));
  });
}

/**
 * LIST_FILES and READ_FILE of the v1 operator APIs, agent's and master's
 * alike, as upstream answers them from its files process: the listing as
 * FileInfo messages; the file's size and up to `length` bytes from
 * `offset` (capped as `/files/read` is). The refusals are the endpoints'.
 */
export function filesCallResponse(
  source: FilesSource,
  req: FastifyRequest,
  call: FilesCall,
): FilesOutcome<FilesResponse> {
  if (call.type === 'LIST_FILES') {
    const listing = browseFiles(source, req, call.path);
    if (!listing.ok) return listing;
    return {
      ok: true,
      value: {
        type: 'LIST_FILES',
        list_files: { file_infos: listing.value.map((e) => fileInfoMessage(e.path, e.stat)) },
      },
    };
  }
  const bytes = fileBytes(source, req, call.path, 'read');
  if (!bytes.ok) return bytes;
  const window = readWindow(bytes.value.size, { offset: call.offset, length: call.length });
  const data = new Uint8Array(bytes.value.slice(window.start, window.end));
  return { ok: true, value: { type: 'READ_FILE', read_file: { size: bytes.value.size, data } } };
}

function registerDebug(app: FastifyInstance, prefix: string, source: FilesSource): void {
  serveMethods(app, `${prefix}/files/debug`, everyMethod(app), (req, reply) => {
    const query = queryOf(req, jsonpQuery);
    if (!query.ok) return sendError(reply, 'QUERY_INVALID', query.error);
    const answer = source.driver.read((view) => {
      const refused = view.authorizer.refusal('get_endpoints', principalOf(req), '/files/debug');
      if (refused !== undefined) return { refused };
      return { body: source.debug(view, req) };
    });
    if ('refused' in answer) return sendError(reply, 'FORBIDDEN', answer.refused ?? '');
    if (answer.body === undefined) return sendError(reply, 'UNAVAILABLE', source.unavailable);
    return sendJson(req, reply, answer.body, query.value.jsonp);
  });
}

/** The four endpoints under `<prefix>/files/`. */
export function registerFilesRoutes(app: FastifyInstance, prefix: string, source: FilesSource): void {
  registerBrowse(app, prefix, source);
  registerRead(app, prefix, source);
  registerDownload(app, prefix, source);
  registerDebug(app, prefix, source);
}
