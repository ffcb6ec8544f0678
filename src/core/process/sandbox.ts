/**
 * A container's sandbox in `simulate` mode: an in-memory tree of
 * directories and text files under the sandbox's path, what upstream's
 * agent keeps on disk under `<work_dir>/slaves/…/runs/<container>`.
 *
 * It is bounded as a disk is: each sandbox holds at most `maxBytes`, and
 * all the sandboxes of a cluster share one `SandboxBudget`. A write past
 * either keeps what fits and fails with ENOSPC, as write(2) does on a full
 * disk; nothing is evicted behind a reader's back. Paths are relative to
 * the sandbox (`stdout`, `logs/app.log`, `./a.txt`); one that climbs out
 * of it (`../x`) or is absolute names nothing here.
 */

/** The bytes all the sandboxes of a cluster may hold together, shared by them. */
export class SandboxBudget {
  #used = 0;
  constructor(readonly totalBytes: number) {}

  get usedBytes(): number {
    return this.#used;
  }

  /** Takes up to `bytes`; answers how many it got. */
  take(bytes: number): number {
    const got = Math.max(0, Math.min(bytes, this.totalBytes - this.#used));
    this.#used += got;
    return got;
  }

  give(bytes: number): void {
    this.#used -= bytes;
  }
}

/** One bytes a sandbox holds at most (1 MiB), and all of a cluster's together (256 MiB), unless the options say otherwise. */
export const DEFAULT_SANDBOX_BYTES = 1_048_576;
export const DEFAULT_SANDBOXES_BYTES = 268_435_456;

export interface SandboxFile {
  readonly kind: 'file';
  /** The text, as written (the tree holds text: what a simulated command writes). */
  readonly data: string;
  /** Its size in bytes, UTF-8. */
  readonly size: number;
  /** When it last changed, in milliseconds since the Unix epoch as the agent's clock reads it (cluster time). */
  readonly mtimeMs: number;
}

export interface SandboxDirectory {
  readonly kind: 'directory';
  readonly mtimeMs: number;
}

export type SandboxEntry = SandboxFile | SandboxDirectory;

/** What a write did: `written` bytes of those asked; `full` when a bound stopped it (ENOSPC). */
export interface WriteResult {
  readonly written: number;
  readonly full: boolean;
}

/** A write a simulated command leaves in its sandbox: `append` as `>>` does, else it replaces the file as `>`. */
export interface SandboxWrite {
  readonly path: string;
  readonly data: string;
  readonly append: boolean;
}

export class Sandbox {
  /**
   * Entries by their normal path; the root is ''. Made on first use: a
   * sandbox nothing has written to or read holds no tree (a cluster of a
   * million long tasks has a million sandboxes, most never looked at).
   */
  #entries: Map<string, SandboxEntry> | undefined;
  readonly #path: string;
  /** When it was made: the time of the root and of the empty `stdout` and `stderr`. */
  readonly #createdMs: number;
  #bytes = 0;
  #released = false;
  /** Its release is scheduled (its executor exited and the gc delay runs). */
  collecting = false;

  /**
   * `path`: where the sandbox is, as the agent reports it (a subclass may
   * make it when asked instead: an unread path holds no text). It starts
   * with empty `stdout` and `stderr`, as upstream's container logger
   * leaves them.
   */
  constructor(
    path: string,
    private readonly budget: SandboxBudget,
    readonly maxBytes: number,
    nowMs: number,
  ) {
    this.#path = path;
    this.#createdMs = nowMs;
  }

  /** Where the sandbox is, as the agent reports it. */
  get path(): string {
    return this.#path;
  }

  /** The tree, made as the constructor's comment says on first use. */
  get #tree(): Map<string, SandboxEntry> {
    if (this.#entries === undefined) {
      const nowMs = this.#createdMs;
      this.#entries = new Map<string, SandboxEntry>([
        ['', { kind: 'directory', mtimeMs: nowMs }],
        ['stdout', file('', nowMs)],
        ['stderr', file('', nowMs)],
      ]);
    }
    return this.#entries;
  }

  /** Bytes its files hold. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Garbage-collected: it holds nothing, and no path names anything in it. */
  get released(): boolean {
    return this.#released;
  }

  /** The entry at `path`, or undefined when there is none or the path leaves the sandbox. */
  stat(path: string): SandboxEntry | undefined {
    const key = normalPath(path);
    return key === undefined ? undefined : this.#tree.get(key);
  }

  /** A file's text, or undefined. */
  read(path: string): string | undefined {
    const entry = this.stat(path);
    return entry?.kind === 'file' ? entry.data : undefined;
  }

  /** The entries of a directory, by name in name order; undefined when it is not one. */
  list(path: string): [name: string, entry: SandboxEntry][] | undefined {
    const key = normalPath(path);
    if (key === undefined || this.#tree.get(key)?.kind !== 'directory') return undefined;
    const prefix = key === '' ? '' : `${key}/`;
    const out: [string, SandboxEntry][] = [];
    for (const [k, entry] of this.#tree) {
      if (k === '' || !k.startsWith(prefix)) continue;
      const name = k.slice(prefix.length);
      if (!name.includes('/')) out.push([name, entry]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Writes `data` to the file at `path` (creating it, and its directories
   * as `mkdir -p` would), replacing it or, with `append`, after it. What
   * does not fit the sandbox's bound or the cluster's is not written.
   * Undefined when the path cannot hold a file: outside the sandbox, a
   * directory, or under a file.
   */
  write(path: string, data: string, append: boolean, nowMs: number): WriteResult | undefined {
    const key = normalPath(path);
    if (key === undefined || key === '' || this.#released) return undefined;
    const old = this.#tree.get(key);
    if (old?.kind === 'directory' || !this.#makeParents(key, nowMs)) return undefined;
    const before = old?.kind === 'file' ? old : file('', nowMs);
    const kept = append ? before.data : '';
    const freed = before.size - byteLength(kept);
    this.#bytes -= freed;
    this.budget.give(freed);
    const wanted = byteLength(data);
    const room = Math.max(0, Math.min(wanted, this.maxBytes - this.#bytes));
    const got = this.budget.take(room);
    const text = got === wanted ? data : prefixOfBytes(data, got);
    const written = byteLength(text);
    this.budget.give(got - written);
    this.#bytes += written;
    this.#tree.set(key, file(kept + text, nowMs));
    return { written, full: written < wanted };
  }

  /** Creates a directory and its parents; false when a file is in the way or the path leaves the sandbox. */
  mkdir(path: string, nowMs: number): boolean {
    const key = normalPath(path);
    if (key === undefined) return false;
    if (key === '') return true;
    const old = this.#tree.get(key);
    if (old !== undefined) return old.kind === 'directory';
    if (!this.#makeParents(key, nowMs)) return false;
    this.#tree.set(key, { kind: 'directory', mtimeMs: nowMs });
    return true;
  }

  /** Gives its bytes back to the cluster's budget; it holds nothing more after (a garbage-collected sandbox). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.give(this.#bytes);
    this.#bytes = 0;
    this.#entries = new Map();
  }

  #makeParents(key: string, nowMs: number): boolean {
    const parts = key.split('/');
    let at = '';
    for (let i = 0; i < parts.length - 1; i++) {
      at = at === '' ? parts[i]! : `${at}/${parts[i]}`;
      const entry = this.#tree.get(at);
      if (entry?.kind === 'file') return false;
      if (entry === undefined) this.#tree.set(at, { kind: 'directory', mtimeMs: nowMs });
    }
    return true;
  }
}

/** Writes `writes` in order; stops at the first the sandbox cannot hold. */
export function applyWrites(sandbox: Sandbox, writes: readonly SandboxWrite[], nowMs: number): void {
  for (const w of writes) {
    const result = sandbox.write(w.path, w.data, w.append, nowMs);
    if (result === undefined || result.full) return;
  }
}

/**
 * The path inside the sandbox that `path` names, with `.`, empty parts and
 * a leading `./` gone: `a/./b//c` is `a/b/c`, `.` and `` the root.
 * Undefined for an absolute path or one whose `..` climbs past the root.
 */
export function normalPath(path: string): string | undefined {
  if (path.startsWith('/')) return undefined;
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.pop() === undefined) return undefined;
    } else parts.push(part);
  }
  return parts.join('/');
}

function file(data: string, mtimeMs: number): SandboxFile {
  return { kind: 'file', data, size: byteLength(data), mtimeMs };
}

/** The bytes of `text` in UTF-8. */
export function byteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c < 0xe000) ? 1 : 2;
  }
  return bytes;
}

/** The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends on a whole character. */
function prefixOfBytes(text: string, bytes: number): string {
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c < 0xdc00 && i + 1 < text.length;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (used + size > bytes) break;
    used += size;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}
