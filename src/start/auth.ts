/**
 * Who may do what, from the library's options: the credentials and ACLs
 * read and checked, what the masters' listeners authenticate, and the
 * executors' tokens. A bad file stops the start with one line naming it.
 * Part of the composition root, with cluster.ts.
 */
import type { Acls } from '../core/model/authz.js';
import { AGENT_READWRITE_REALM, READONLY_REALM, type Credentials } from '../http/auth.js';
import { ExecutorTokens } from '../http/agent/executor-token.js';
import type { MasterListenOptions } from './masters.js';
import { loadAcls, loadCredentials } from '../runtime/auth-files.js';
import type { ResolvedOptions } from './options.js';
import { StartError } from './errors.js';

/** The credentials and ACLs, read and checked; a bad file stops the start with one line naming it. */
export function authOf(options: ResolvedOptions): { credentials?: Map<string, string>; acls?: Acls } {
  const out: { credentials?: Map<string, string>; acls?: Acls } = {};
  if (options.authenticateHttpReadonly && options.credentials === undefined) {
    // Upstream's master does not start either: its basic authenticator has no credentials for the realm.
    throw new StartError(
      `authenticateHttpReadonly: needs credentials: there are none for the realm '${READONLY_REALM}'`,
      ['authenticateHttpReadonly', 'credentials'],
    );
  }
  if (options.authenticateHttpReadwrite && options.credentials === undefined) {
    throw new StartError(
      `authenticateHttpReadwrite: needs credentials: there are none for the realm '${AGENT_READWRITE_REALM}'`,
      ['authenticateHttpReadwrite', 'credentials'],
    );
  }
  if (options.credentials !== undefined) {
    const loaded = loadCredentials(options.credentials);
    if (!loaded.ok) throw new StartError(loaded.error, ['credentials']);
    out.credentials = loaded.value;
  }
  if (options.acls !== undefined) {
    const loaded = loadAcls(options.acls);
    if (!loaded.ok) throw new StartError(loaded.error, ['acls']);
    out.acls = loaded.value;
  }
  return out;
}

/**
 * What the masters' listeners authenticate: the scheduler and operator APIs
 * with credentials, the read endpoints with `authenticateHttpReadonly`, and
 * the control API once any authentication is on (http/sim/part.ts).
 */
export function masterAuthOf(
  options: ResolvedOptions,
  credentials: Credentials | undefined,
): Pick<MasterListenOptions, 'credentials' | 'authenticateReadonly' | 'authenticateControlApi'> {
  return {
    ...(credentials === undefined ? {} : { credentials }),
    authenticateReadonly: options.authenticateHttpReadonly,
    authenticateControlApi: options.authenticateHttpExecutors,
  };
}

/** The executor tokens, with executor authentication on; a bad key file stops the start with one line naming it. */
export async function tokensOf(options: ResolvedOptions): Promise<ExecutorTokens | undefined> {
  if (!options.authenticateHttpExecutors) {
    if (options.jwtSecretKey !== undefined)
      throw new StartError('jwtSecretKey: needs authenticateHttpExecutors', [
        'jwtSecretKey',
        'authenticateHttpExecutors',
      ]);
    return undefined;
  }
  if (options.jwtSecretKey === undefined) return ExecutorTokens.create();
  try {
    return await ExecutorTokens.fromFile(options.jwtSecretKey);
  } catch (error) {
    throw new StartError(`jwtSecretKey: ${(error as Error).message}`, ['jwtSecretKey']);
  }
}
