/**
 * Executor authentication tokens (`--authenticate-http-executors`), as
 * upstream's agent makes and checks them: when it launches an executor it
 * signs a JSON web token (HS256, header `{"alg":"HS256","typ":"JWT"}`)
 * whose claims name that executor's container,
 *
 *   fid   the framework id
 *   eid   the executor id
 *   cid   the container id
 *
 * with no expiry, and hands it over in `CLUSTER_EXECUTOR_AUTHENTICATION_TOKEN`
 * (and `MESOS_EXECUTOR_AUTHENTICATION_TOKEN`). The executor presents it as
 * `Authorization: Bearer <token>` on every call to `/api/v1/executor`.
 *
 * Checking a request takes two steps, as upstream's:
 *
 *   1. authentication (`authenticate`), before anything else about the
 *      request; a refusal is a 401 with `WWW-Authenticate` in the realm
 *      `mesos-agent-executor`:
 *        no `Authorization` header              Bearer realm="..." (no error, RFC 6750 3.1)
 *        not exactly two words                  error_description="Malformed 'Authorization' header"
 *        a scheme other than `Bearer`           error_description="Scheme '<s>' unsupported"
 *        a token that does not verify           error_description="Invalid JWT: <why>"
 *        a token with no claims at all          error_description="JWT claims missing"
 *   2. authorization (`authorizeExecutor`), once the call's framework and
 *      executor are known: the claims must name that framework, that
 *      executor and its active container, else a 403 in upstream's words.
 *
 * The key is 32 random bytes made once per process, unless a file gives it
 * (upstream's `--jwt_secret_key`: the file's bytes, as they are). Signing
 * and checking go through `jose`; the key is imported once, so a check is
 * one HMAC and no key setup. `signSync` is for a caller that cannot wait
 * (a container host starting a process): jose signs only asynchronously, so
 * it lays out the same three parts itself around Node's HMAC-SHA256, and a
 * test holds its tokens byte-equal to jose's. Checking is jose's alone.
 */
import { createHmac, randomBytes, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { httpError, type HttpError } from '../errors.js';
import type { ExecutorAuthorizer } from '../../core/model/executor-api.js';

/** Upstream's realm of the executor API (`EXECUTOR_HTTP_AUTHENTICATION_REALM`). */
export const EXECUTOR_REALM = 'mesos-agent-executor';

/** The executor a token is made for, and the one a call names. */
export interface ExecutorIdentity {
  readonly frameworkId: string;
  readonly executorId: string;
  readonly containerId: string;
}

/** The claims of a verified token, each value a string as upstream's authenticator makes it. */
export type TokenClaims = Readonly<Record<string, string>>;

/** Why a token does not verify; `message` is upstream's wording of it. */
export type TokenFault = 'malformed' | 'bad-signature' | 'expired' | 'missing-claims';

export type TokenVerdict =
  | { readonly ok: true; readonly claims: TokenClaims }
  | { readonly ok: false; readonly fault: TokenFault; readonly message: string };

export type ExecutorAuthentication =
  | { readonly ok: true; readonly claims: TokenClaims }
  | { readonly ok: false; readonly error: HttpError; readonly challenge: string };

/** Made once, when the module loads: every agent of this process shares it unless a file gives another. */
const PROCESS_SECRET = new Uint8Array(randomBytes(32));

const HEADER = { alg: 'HS256', typ: 'JWT' } as const;

export class ExecutorTokens {
  private constructor(
    private readonly key: webcrypto.CryptoKey,
    private readonly secret: Uint8Array,
  ) {}

  /** Tokens signed with `secret`, or with this process's random secret when none is given. */
  static async create(secret: Uint8Array = PROCESS_SECRET): Promise<ExecutorTokens> {
    if (secret.length === 0) throw new Error('The executor token secret is empty');
    const key = await webcrypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    return new ExecutorTokens(key, Uint8Array.from(secret));
  }

  /** Tokens signed with the bytes of a file (upstream's `--jwt_secret_key`). */
  static async fromFile(path: string): Promise<ExecutorTokens> {
    const secret = new Uint8Array(await readFile(path));
    if (secret.length === 0) throw new Error(`The executor token secret file '${path}' is empty`);
    return ExecutorTokens.create(secret);
  }

  /** A compact token for one executor's container, claims in upstream's order (`cid`, `eid`, `fid`). */
  async sign(identity: ExecutorIdentity): Promise<string> {
    return new SignJWT(claimsOf(identity)).setProtectedHeader(HEADER).sign(this.key);
  }

  /** The same token as `sign`, at once. */
  signSync(identity: ExecutorIdentity): string {
    const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signingInput = `${base64url(HEADER)}.${base64url(claimsOf(identity))}`;
    return `${signingInput}.${createHmac('sha256', this.secret).update(signingInput).digest('base64url')}`;
  }

  /** The claims of a token signed with this key, or why it is refused. */
  async verify(token: string): Promise<TokenVerdict> {
    const parts = token.split('.').length;
    if (parts !== 3) return { ok: false, fault: 'malformed', message: `Expected 3 components in token, got ${parts}` };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] }));
    } catch (error) {
      return refusal(error, token);
    }
    const entries = Object.entries(payload);
    if (entries.length === 0) return { ok: false, fault: 'missing-claims', message: 'JWT claims missing' };
    // Upstream keeps a string claim as it is and writes any other value as JSON.
    const claims = Object.fromEntries(entries.map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    return { ok: true, claims };
  }

  /** Step 1: the claims an `Authorization` header proves, or the 401 to answer with. */
  async authenticate(authorization: string | undefined): Promise<ExecutorAuthentication> {
    if (authorization === undefined) return unauthorized(`Bearer realm="${EXECUTOR_REALM}"`);
    const words = authorization.split(' ');
    if (words.length !== 2) return unauthorized(invalidToken("Malformed 'Authorization' header"));
    const [scheme, token] = words as [string, string];
    if (scheme !== 'Bearer') return unauthorized(invalidToken(`Scheme '${scheme}' unsupported`));
    const verdict = await this.verify(token);
    if (verdict.ok) return verdict;
    const description = verdict.fault === 'missing-claims' ? verdict.message : `Invalid JWT: ${verdict.message}`;
    return unauthorized(invalidToken(description));
  }
}

/** Upstream's claims, in its order (its JSON objects are sorted maps). */
function claimsOf(identity: ExecutorIdentity): JWTPayload {
  return { cid: identity.containerId, eid: identity.executorId, fid: identity.frameworkId };
}

/**
 * Step 2: undefined when the claims name the executor of the call and its
 * active container; otherwise the 403's text, in upstream's words, which
 * quote the principal as JSON.
 */
export function authorizeExecutor(claims: TokenClaims, call: ExecutorIdentity): string | undefined {
  const principal = `Authenticated principal '${principalText(claims)}' does not contain`;
  if (claims.fid !== call.frameworkId) {
    return `${principal} an 'fid' claim with the framework ID ${call.frameworkId}, which is set in the call`;
  }
  if (claims.eid !== call.executorId) {
    return `${principal} an 'eid' claim with the executor ID ${call.executorId}, which is set in the call`;
  }
  if (claims.cid !== call.containerId) return `${principal} a 'cid' claim with the correct active ContainerID`;
  return undefined;
}

/** The check of a token's claims as the core takes it, carrying the claims so that an input record can name them. */
export function claimsAuthorizer(claims: TokenClaims): ExecutorAuthorizer {
  return Object.assign((executor: ExecutorIdentity) => authorizeExecutor(claims, executor), { claims });
}

function principalText(claims: TokenClaims): string {
  const sorted = Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ claims: sorted });
}

function unauthorized(challenge: string): ExecutorAuthentication {
  return { ok: false, error: httpError('UNAUTHORIZED'), challenge };
}

function invalidToken(description: string): string {
  return `Bearer realm="${EXECUTOR_REALM}", error="invalid_token", error_description="${description}"`;
}

/** jose's error, as the fault and the words upstream's JWT parser gives it. */
function refusal(error: unknown, token: string): TokenVerdict {
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return { ok: false, fault: 'bad-signature', message: 'Token signature does not match' };
  }
  if (error instanceof errors.JWTExpired) return { ok: false, fault: 'expired', message: 'Token has expired' };
  if (error instanceof errors.JOSEAlgNotAllowed) {
    const alg = String(decodeProtectedHeader(token).alg);
    return { ok: false, fault: 'malformed', message: `Token 'alg' value "${alg}" does not match, expected "HS256"` };
  }
  if (error instanceof errors.JOSEError) return { ok: false, fault: 'malformed', message: error.message };
  throw error;
}
