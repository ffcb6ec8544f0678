/**
 * The one catalogue of expected rejections. A code exists only where a
 * caller reacts to it differently; the HTTP status for each lives in
 * `src/http/`. Messages follow upstream wording, quote ids and end without
 * a period.
 */

export type ErrorCode =
  /** The request is malformed or fails validation (400). */
  | 'INVALID'
  /** The framework id is not known to the master (400). */
  | 'FRAMEWORK_NOT_FOUND'
  /** Known framework, but not subscribed right now (403). */
  | 'FRAMEWORK_NOT_SUBSCRIBED'
  /** A call needs a stream id and has none, or the wrong one (400). */
  | 'STREAM_ID'
  /** Authorization declined (403). */
  | 'FORBIDDEN'
  /** Not implemented by this cluster (501). */
  | 'NOT_IMPLEMENTED'
  /** Operator calls: the agent named does not exist (404). */
  | 'NOT_FOUND'
  /** Operator calls: the target is in a state that forbids the call now (409). */
  | 'CONFLICT'
  /** Operator calls: retry later, another transition is under way (503). */
  | 'UNAVAILABLE'
  /** The node could not do what a valid call asks (a cgroup it cannot write) (500); the message is for the log. */
  | 'FAILED';

export interface CallError {
  readonly code: ErrorCode;
  readonly message: string;
}

export type Outcome<T = undefined> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: CallError };

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const done: Outcome = { ok: true, value: undefined };
export const fail = (code: ErrorCode, message: string): { ok: false; error: CallError } => ({
  ok: false,
  error: { code, message },
});
