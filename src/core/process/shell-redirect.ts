/**
 * A command's redirections, applied left to right as dash applies them:
 * where its standard output and error go (the session's streams, a file
 * of the sandbox, `/dev/null`, one another), and what it reads instead of
 * its input. A file that cannot be created or opened stops the command
 * with dash's message, and code 2.
 */
import type { Redirect } from './shell-parse.js';
import { type OpenedFile, type ShellFiles, resolve } from './shell-files.js';

export type Sink = (data: string) => void;

/** An output that can fail: a file whose writes go into the sandbox until its bound stops one (ENOSPC), or a closed descriptor (EBADF). */
export class FileSink {
  failed = false;
  readonly write: Sink;

  constructor(
    files: ShellFiles,
    file: OpenedFile | undefined,
    readonly reason = file === undefined ? 'Bad file descriptor' : 'No space left on device',
  ) {
    this.write = (data) => {
      if (this.failed || data === '') return;
      if (file === undefined || !files.append(file, data)) this.failed = true;
    };
  }
}

export interface Redirected {
  readonly out: Sink;
  readonly err: Sink;
  /** What the command reads instead of its input: a file's text, or '' when it is closed. */
  readonly input: string | undefined;
  readonly files: readonly FileSink[];
}

/**
 * Applies `redirects` (their targets expanded) to the command's output and
 * error; the redirected streams, or dash's message when one cannot be made.
 */
export function redirect(
  redirects: readonly Redirect[],
  targets: readonly string[],
  base: { readonly out: Sink; readonly err: Sink },
  files: ShellFiles,
  cwd: string,
): Redirected | { readonly error: string } {
  const fds: (Sink | undefined)[] = [undefined, base.out, base.err];
  const sinks: FileSink[] = [];
  let input: string | undefined;
  for (let i = 0; i < redirects.length; i++) {
    const { fd, op } = redirects[i]!;
    const target = targets[i]!;
    if (op === '>' || op === '>>') {
      const opened = files.open(resolve(cwd, target), op === '>>');
      if (typeof opened === 'string') return { error: `cannot create ${target}: ${opened}` };
      const sink = new FileSink(files, opened);
      sinks.push(sink);
      fds[fd] = sink.write;
    } else if (op === '<') {
      const abs = resolve(cwd, target);
      const entry = files.stat(abs);
      if (entry === undefined) return { error: `cannot open ${target}: No such file` };
      if (fd === 0) input = entry.kind === 'file' ? entry.data : '';
    } else if (target === '-') {
      if (fd === 0) input = '';
      else {
        const sink = new FileSink(files, undefined);
        sinks.push(sink);
        fds[fd] = sink.write;
      }
    } else if (fd !== 0) {
      const source = fds[Number(target)];
      if (source === undefined) return { error: `${target}: Bad file descriptor` };
      fds[fd] = source;
    }
  }
  return { out: fds[1]!, err: fds[2]!, input, files: sinks };
}
