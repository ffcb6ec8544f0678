// The dashboard's side of the master's HTTP APIs: the JSON read endpoints,
// the control API's clock calls, and the trace as server-sent events. Paths
// are absolute on the page's own origin (the master that served it). When
// the cluster asks for credentials, the browser asks the user for them at
// the first refusal and sends them on every request after.

/**
 * The master did not answer at all (refused, reset, timed out): the
 * browser's `Failed to fetch`, told apart from an answer with an error
 * status.
 */
export class MasterUnreachable extends Error {}

/** `fetch`, with a failure to reach the master as `MasterUnreachable`. */
async function request(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    throw new MasterUnreachable(`${path}: ${error.message}`);
  }
}

/** GET a JSON endpoint; rejects with the server's one-line reason on an error status. */
export async function getJson(path) {
  const res = await request(path, { headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new Error(`${path}: ${refusal(res.status, (await res.text()).trim())}`);
  return res.json();
}

/** An error answer in one line: the body alone when it already starts with its status (`401 Unauthorized.`). */
const refusal = (status, body) => (body.startsWith(`${status} `) ? body : `${status} ${body}`.trim());

/** A call of the operator API (`POST /api/v1`, JSON) that reads; rejects as `getJson` does. */
async function operatorRead(type) {
  const res = await request('/api/v1', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ type }),
  });
  if (!res.ok) throw new Error(`/api/v1 ${type}: ${refusal(res.status, (await res.text()).trim())}`);
  return res.json();
}

/** POST a JSON body to the control API; rejects with the server's reason on an error status. */
export async function postJson(path, body) {
  const res = await request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error((await res.text()).trim() || `${res.status}`);
  return res.json();
}

/**
 * What the page shows, read at once: the master's state, its roles (with
 * quota), its tasks as the operator API gives them (their statuses with
 * message, reason and source, which `/master/state` leaves out), every
 * agent it books with its state (unreachable ones too, which no upstream
 * endpoint names) and the clock.
 */
export async function readCluster() {
  const [state, roles, tasks, agents, clock] = await Promise.all([
    getJson('/master/state'),
    getJson('/master/roles'),
    operatorRead('GET_TASKS'),
    getJson('/sim/v1/agents'),
    getJson('/sim/v1/clock'),
  ]);
  return { state, roles: roles.roles ?? [], tasks: tasks.get_tasks ?? {}, agents: agents.agents ?? [], clock };
}

export const advance = (ms) => postJson('/sim/v1/advance', { ms });
export const runUntilIdle = () => postJson('/sim/v1/run_until_idle', {});

/** Wall-clock ms before the event stream is asked again after a refusal. */
const RETRY_REFUSED_MS = 2000;

/**
 * Follows `/sim/v1/events`. `onEntry` gets each trace entry
 * (`{seq, time_ms, kind, line}`), `onStatus` 'live' or 'reconnecting', and
 * `onReplaced` is called when a reset or a restore swapped the cluster; the
 * stream is then opened afresh (the new trace counts from 1 again, so the
 * browser's resume by id would skip its first entries).
 */
export function followEvents({ onEntry, onStatus, onReplaced }) {
  let source;
  let stopped = false;
  const open = () => {
    const own = new EventSource('/sim/v1/events');
    source = own;
    own.addEventListener('open', () => onStatus('live'));
    own.addEventListener('error', () => {
      onStatus('reconnecting');
      // Refused (a 401 before the page's reads got the credentials): the
      // browser gives up on this source, so open another one later.
      if (own.readyState === EventSource.CLOSED && !stopped) setTimeout(() => stopped || open(), RETRY_REFUSED_MS);
    });
    own.addEventListener('trace', (event) => onEntry(JSON.parse(event.data)));
    own.addEventListener('replaced', () => {
      own.close();
      onReplaced();
      open();
    });
  };
  open();
  return () => {
    stopped = true;
    source.close();
  };
}
