/**
 * The workflow integration's container operator as a function: it posts
 * one queue request to the service's API, polls `GET /v0/task/<id>` every
 * poll interval, and ends with the outcome the operator gives the workflow
 * task (spec 002, "States and transitions"): success on TASK_FINISHED;
 * failure on one of the five failure states, an HTTP error, an answer that
 * is not JSON, or the startup timeout.
 */
import { FAILURE_STATES } from './scheduler.js';

export interface OperatorOptions {
  /** The service's API, e.g. `http://localhost:11000`. */
  readonly url: string;
  /** The queue request body (`workflow_task_id` set). */
  readonly body: Readonly<Record<string, unknown>> & { readonly workflow_task_id: string };
  readonly pollIntervalMs: number;
  readonly startupTimeoutMs: number;
  /** Told each state the task reaches, once. */
  readonly onState?: (state: string) => void;
}

export type OperatorOutcome =
  | { readonly kind: 'finished'; readonly status: unknown }
  | { readonly kind: 'failed'; readonly state: string; readonly status: unknown }
  | { readonly kind: 'http-error'; readonly message: string }
  | { readonly kind: 'invalid-json'; readonly message: string }
  | { readonly kind: 'timeout'; readonly state: string | undefined };

/** Exit codes of `clustersim workflow run`, by outcome. */
export const EXIT_CODES: Record<OperatorOutcome['kind'], number> = {
  finished: 0,
  failed: 1,
  'http-error': 2,
  'invalid-json': 3,
  timeout: 4,
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function request(
  url: string,
  init: RequestInit,
): Promise<{ ok: true; text: string } | { ok: false; outcome: OperatorOutcome }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    return {
      ok: false,
      outcome: { kind: 'http-error', message: `${init.method ?? 'GET'} ${url}: ${(e as Error).message}` },
    };
  }
  const text = await res.text();
  if (res.ok) return { ok: true, text };
  return {
    ok: false,
    outcome: { kind: 'http-error', message: `${init.method ?? 'GET'} ${url}: ${res.status} ${text.trim()}` },
  };
}

export async function runOperator(options: OperatorOptions): Promise<OperatorOutcome> {
  const base = options.url.replace(/\/+$/, '');
  const id = options.body.workflow_task_id;
  const queued = await request(`${base}/v0/queue_command`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(options.body),
  });
  if (!queued.ok) return queued.outcome;
  const deadline = Date.now() + options.startupTimeoutMs;
  let last: string | undefined;
  for (;;) {
    const polled = await request(`${base}/v0/task/${encodeURIComponent(id)}`, { method: 'GET' });
    if (!polled.ok) return polled.outcome;
    let status: { status?: { state?: unknown } } | null;
    try {
      status = JSON.parse(polled.text) as typeof status;
    } catch (e) {
      return { kind: 'invalid-json', message: `GET /v0/task/${id}: ${(e as Error).message}` };
    }
    const state = typeof status?.status?.state === 'string' ? status.status.state : undefined;
    if (state !== undefined && state !== last) options.onState?.(state);
    last = state ?? last;
    if (state === 'TASK_FINISHED') return { kind: 'finished', status };
    if (state !== undefined && (FAILURE_STATES as readonly string[]).includes(state))
      return { kind: 'failed', state, status };
    if (Date.now() + options.pollIntervalMs > deadline) return { kind: 'timeout', state: last };
    await sleep(options.pollIntervalMs);
  }
}
