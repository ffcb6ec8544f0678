/**
 * The file system the small shell sees: the container's sandbox at its
 * path, the directories above it (empty but for the way down to it), and
 * `/dev/null`. Paths are resolved from the shell's working directory as
 * the kernel resolves them; what is written goes into the sandbox, with
 * its bound, at the cluster's time. Nothing outside the sandbox can be
 * written.
 */
import { type Sandbox, type SandboxEntry, normalPath } from './sandbox.js';

const NULL_DEVICE = '/dev/null';
const EMPTY: SandboxEntry = { kind: 'file', data: '', size: 0, mtimeMs: 0 };
const DIRECTORY: SandboxEntry = { kind: 'directory', mtimeMs: 0 };

/** Where output opened for writing goes: a file of the sandbox, or nowhere (`/dev/null`). */
export type OpenedFile = { readonly key: string } | { readonly key: undefined };

export class ShellFiles {
  /** The sandbox's path, normal and absolute. */
  readonly root: string;

  constructor(
    readonly sandbox: Sandbox,
    private readonly nowMs: () => number,
  ) {
    this.root = resolve('/', sandbox.path);
  }

  /** The key of an absolute path inside the sandbox, or undefined outside it. */
  #key(abs: string): string | undefined {
    if (abs === this.root) return '';
    const prefix = this.root === '/' ? '/' : `${this.root}/`;
    return abs.startsWith(prefix) ? normalPath(abs.slice(prefix.length)) : undefined;
  }

  /** What is at an absolute path. */
  stat(abs: string): SandboxEntry | undefined {
    const key = this.#key(abs);
    if (key !== undefined) return this.sandbox.stat(key);
    if (abs === NULL_DEVICE) return EMPTY;
    return isAbove(abs, this.root) || isAbove(abs, NULL_DEVICE) ? DIRECTORY : undefined;
  }

  /** A file's text, or undefined when it is no file. */
  read(abs: string): string | undefined {
    const entry = this.stat(abs);
    return entry?.kind === 'file' ? entry.data : undefined;
  }

  /** A directory's entries by name, in name order; undefined when it is none. */
  list(abs: string): [name: string, entry: SandboxEntry][] | undefined {
    const key = this.#key(abs);
    if (key !== undefined) return this.sandbox.list(key);
    if (this.stat(abs)?.kind !== 'directory') return undefined;
    const names = new Set<string>();
    for (const below of [this.root, NULL_DEVICE]) {
      if (!isAbove(abs, below)) continue;
      const rest = below.slice(abs === '/' ? 1 : abs.length + 1);
      names.add(rest.split('/')[0]!);
    }
    return [...names].sort().map((name) => [name, name === 'null' && abs === '/dev' ? EMPTY : DIRECTORY]);
  }

  /**
   * Opens a file for output as `>` (`append` false, emptying it) or `>>`
   * does: where the output goes, or the reason it cannot be created, as
   * dash words it.
   */
  open(abs: string, append: boolean): OpenedFile | string {
    if (abs === NULL_DEVICE) return { key: undefined };
    const parent = this.stat(dirname(abs));
    if (parent?.kind !== 'directory') return 'Directory nonexistent';
    const key = this.#key(abs);
    if (key === undefined || key === '')
      return this.stat(abs)?.kind === 'directory' ? 'Is a directory' : 'Read-only file system';
    if (this.sandbox.stat(key)?.kind === 'directory') return 'Is a directory';
    const written = this.sandbox.write(key, '', append, this.nowMs());
    return written === undefined || written.full ? 'No space left on device' : { key };
  }

  /** Makes a directory (and its parents) in the sandbox; false outside it or where a file is in the way. */
  mkdir(abs: string): boolean {
    const key = this.#key(abs);
    return key !== undefined && this.sandbox.mkdir(key, this.nowMs());
  }

  /** Appends to an opened file; false when the sandbox's bound stopped it (ENOSPC). */
  append(file: OpenedFile, data: string): boolean {
    if (file.key === undefined || data === '') return true;
    const written = this.sandbox.write(file.key, data, true, this.nowMs());
    return written !== undefined && !written.full;
  }
}

/** An absolute, normal path: `path` from `cwd`, `.` and `..` resolved (`..` of `/` is `/`). */
export function resolve(cwd: string, path: string): string {
  const parts: string[] = [];
  for (const part of `${path.startsWith('/') ? '' : cwd}/${path}`.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

export function dirname(abs: string): string {
  const i = abs.lastIndexOf('/');
  return i <= 0 ? '/' : abs.slice(0, i);
}

export function basename(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const i = trimmed.lastIndexOf('/');
  return i < 0 || trimmed === '/' ? trimmed : trimmed.slice(i + 1);
}

/** Whether `dir` is a directory above `path` (strictly). */
function isAbove(dir: string, path: string): boolean {
  return dir === '/' ? path !== '/' : path.startsWith(`${dir}/`);
}
