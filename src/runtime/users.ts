/**
 * The user a spawned executor runs as (`--switch-user`, on by default, as
 * upstream's agent's `--switch_user`): the ExecutorInfo command's `user`,
 * else the framework's, looked up in the host's user database the way
 * `getpwnam` does (through `getent passwd`, so that users of NSS sources
 * other than /etc/passwd are found too; /etc/passwd itself where `getent`
 * is missing).
 *
 * As upstream's agent, the sandbox is given to that user (chmod 0750,
 * chown) before the process starts, and a sandbox that cannot be given
 * (no such user; a process that may not chown, not being root) fails the
 * launch with upstream's words. The process then runs with the user's uid
 * and primary gid; the environment is the agent's, as upstream relays it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, readFileSync, rmdirSync } from 'node:fs';
import type { ContainerLaunch } from '../core/model/executor-api.js';
import type { mesos } from '../wire/generated/types.js';

export interface HostUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The user to run the executor as: CommandInfo.user, else FrameworkInfo.user (upstream's order). */
export function launchUser(launch: ContainerLaunch): string {
  const raw = launch.executor.raw as mesos.v1.ExecutorInfo | undefined;
  // A framework's user is required on the wire; an empty one is no user the host has.
  return raw?.command?.user ?? launch.framework.user ?? '';
}

/** The passwd entry of `name`, or why there is none (upstream's `No such user`, or the look-up's failure). */
export function lookupUser(name: string): HostUser | string {
  const none = `No such user '${name}'`;
  // No passwd name is empty or holds these; after '--' a leading '-' is no option to getent.
  if (name === '' || /[\u0000:\n]/u.test(name)) return none;
  let text: string;
  try {
    text = execFileSync('getent', ['passwd', '--', name], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { status?: number | null };
    // getent answers 2 for a key it does not find; without getent, the file is all there is.
    if (e.code === 'ENOENT') text = passwdFile();
    else if (e.status === 2) return none;
    else return `Failed to look up user '${name}': ${e.message}`;
  }
  return parsePasswd(text, name) ?? none;
}

function passwdFile(): string {
  try {
    return readFileSync('/etc/passwd', 'utf8');
  } catch {
    return '';
  }
}

/** The entry named `name` among passwd lines (`name:x:uid:gid:gecos:home:shell`): getent also finds numeric ids, getpwnam does not. */
export function parsePasswd(text: string, name: string): HostUser | undefined {
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length < 4 || fields[0] !== name) continue;
    const [uid, gid] = [Number(fields[2]), Number(fields[3])];
    if (!Number.isInteger(uid) || !Number.isInteger(gid) || fields[2] === '' || fields[3] === '') continue;
    return { name, uid, gid };
  }
  return undefined;
}

/**
 * Gives the freshly made sandbox to `user`, as upstream's agent makes an
 * executor directory: the user, or upstream's reason it cannot be had (the
 * sandbox is removed then).
 */
export function ownSandbox(sandbox: string, user: string): HostUser | string {
  const entry = lookupUser(user);
  let failure = typeof entry === 'string' ? entry : undefined;
  if (typeof entry !== 'string') {
    try {
      chmodSync(sandbox, 0o750);
      chownSync(sandbox, entry.uid, entry.gid);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      failure = e.code === 'EPERM' ? 'Operation not permitted' : e.message;
    }
  }
  if (failure === undefined) return entry;
  try {
    rmdirSync(sandbox);
  } catch {
    // Left as it is: the launch fails all the same.
  }
  return `Failed to create executor directory '${sandbox}': Failed to chown directory to '${user}': ${failure}`;
}
