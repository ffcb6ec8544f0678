/**
 * The agent operator API and the container engine's socket under generated
 * requests: sessions, nested containers, input streams, waits, kills,
 * memory limits and reads in both encodings, mutated, with every header and
 * framing the fuzzer knows; the engine's exec calls right and wrong, exec
 * streams written to and half-closed; while agents crash and restart, time
 * moves and tasks end. `npm run fuzz` with FUZZ_API=agent or FUZZ_API=engine
 * sends a hundred thousand; this is a small slice of each, of fixed seeds.
 *
 * A failure prints fast-check's seed, path and counterexample, the cluster
 * seed among them. Replay with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_AGENT_RUNS and FUZZ_ENGINE_RUNS change the number of runs.
 */
import { describe, expect, it } from 'vitest';
import { agentVerdict, type AgentOperatorState } from './agent-judge.js';
import { agentRunInput, runAgentsOnce } from './agent-session.js';
import { engineVerdict } from './engine-judge.js';
import { engineRunInput, runEngineOnce } from './engine-session.js';
import { assertRuns } from './session.js';
import { StreamCheck } from './stream-check.js';
import type { WireRequest, WireResponse } from './transport.js';

const AGENT_RUNS = Number(process.env['FUZZ_AGENT_RUNS'] ?? 25);
const ENGINE_RUNS = Number(process.env['FUZZ_ENGINE_RUNS'] ?? 15);
const MAX_STEPS = 30;

describe('fuzzing the agent operator API', () => {
  it(`answers ${AGENT_RUNS} runs of up to ${MAX_STEPS} generated steps without a 5xx but the documented ones, a hang or a crash`, async () => {
    const stats = await assertRuns(agentRunInput(MAX_STEPS), runAgentsOnce, AGENT_RUNS, 1_000);
    const statuses = [...stats.byStatus].sort().map(([s, n]) => `${s}: ${n}`);
    console.log(
      `fuzz: ${stats.cases} agent operator API cases in ${stats.runs} runs (${statuses.join(', ')}); ${stats.streams.session} session streams; ${stats.exact} answers held to the one right answer`,
    );
    expect(stats.cases).toBeGreaterThan(AGENT_RUNS);
    // The runs reach the deep paths: sessions streamed, calls carried out.
    expect(stats.byStatus.get('200 (stream)') ?? 0).toBeGreaterThan(0);
    expect(stats.byStatus.get('200') ?? 0).toBeGreaterThan(0);
  }, 600_000);
});

describe('fuzzing the container engine socket', () => {
  it(`answers ${ENGINE_RUNS} runs of up to ${MAX_STEPS} generated steps with the engine table's statuses, without a hang or a crash`, async () => {
    const stats = await assertRuns(engineRunInput(MAX_STEPS), runEngineOnce, ENGINE_RUNS, 2_000);
    const statuses = [...stats.byStatus].sort().map(([s, n]) => `${s}: ${n}`);
    console.log(`fuzz: ${stats.cases} engine cases in ${stats.runs} runs (${statuses.join(', ')})`);
    expect(stats.cases).toBeGreaterThan(ENGINE_RUNS);
    expect(stats.byStatus.get('201') ?? 0).toBeGreaterThan(0);
  }, 600_000);
});

// The judges must see what they are there to see, or a quiet run proves nothing.
const wire = (
  target: string,
  body: object,
  headers: [string, string][] = [['Content-Type', 'application/json']],
): WireRequest => ({
  port: 1,
  method: 'POST',
  target,
  version: 'HTTP/1.1',
  headers: [['Host', '127.0.0.1:1'], ...headers],
  body: Buffer.from(JSON.stringify(body)),
  framing: 'length',
  followUp: false,
  hold: false,
  abort: 'no',
  operator: false,
  session: true,
});
const answer = (
  status: number,
  body: string,
  contentType = status === 200 ? 'application/json' : 'text/plain; charset=utf-8',
  check?: StreamCheck,
): WireResponse => ({
  outcome: 'response',
  status,
  headers: { 'content-type': contentType },
  body: Buffer.from(body),
  stream: check !== undefined,
  ...(check === undefined ? {} : { check }),
  followUp: undefined,
  ms: 1,
});

describe('the agent operator API verdict', () => {
  const up: AgentOperatorState = { up: true, memoryLimits: true, running: new Set(['c1']) };
  const limit = {
    type: 'UPDATE_CONTAINER_MEMORY_LIMIT',
    update_container_memory_limit: { container_id: { value: 'c1' }, memory_limit: { value: 64 } },
  };
  const judged = (body: object, res: WireResponse, state: AgentOperatorState | undefined = up, target = '/api/v1') =>
    agentVerdict(wire(target, body), res, state);

  it('allows a 5xx only as documented', () => {
    expect(judged(limit, answer(500, '500 Internal Server Error.'), { ...up, memoryLimits: false })).toEqual({
      exact: true,
    });
    expect(judged(limit, answer(500, '500 Internal Server Error.')).problem).toMatch(/expected 200/);
    expect(judged({ type: 'GET_STATE' }, answer(500, '500 Internal Server Error.')).problem).toMatch(
      /answered 500 .* to GET_STATE/,
    );
    expect(judged({ type: 'GET_STATE' }, answer(503, 'x')).problem).toMatch(/not while the agent is down/);
    expect(judged({ type: 'GET_STATE' }, answer(503, 'Agent has not finished recovery'), { ...up, up: false })).toEqual(
      { exact: true },
    );
    expect(judged({ type: 'GET_STATE' }, answer(502, 'x')).problem).toMatch(/answered 502/);
  });

  it('wants the body each call has', () => {
    expect(judged({ type: 'GET_HEALTH' }, answer(200, '{"type":"GET_HEALTH","get_health":{"healthy":true}}'))).toEqual({
      exact: true,
    });
    expect(judged({ type: 'GET_HEALTH' }, answer(200, '{"type":"GET_STATE"}')).problem).toMatch(
      /Response of type GET_STATE/,
    );
    expect(
      judged({ type: 'KILL_CONTAINER', kill_container: { container_id: { value: 'n' } } }, answer(200, 'x')).problem,
    ).toMatch(/with a body/);
    expect(judged({ type: 'GET_STATE' }, answer(400, 'a\nb')).problem).toMatch(/more than one line/);
    // Only a session answers with an output stream.
    const stream = new StreamCheck('session', 'application/json');
    expect(judged({ type: 'GET_STATE' }, answer(200, '', 'application/recordio', stream), undefined).problem).toMatch(
      /session's output stream/,
    );
    // An odd path is not held to the answer of /api/v1.
    expect(judged({ type: 'GET_STATE' }, answer(404, '404 Not Found.'), up, '/API/V1')).toEqual({ exact: false });
  });
});

describe('the engine verdict', () => {
  const req = (headers: [string, string][] = []): WireRequest => ({
    ...wire('/_ping', {}, headers),
    socketPath: '/x',
    session: false,
  });
  it('allows the statuses of the engine table only, JSON with a one-line message', () => {
    expect(engineVerdict(req(), answer(404, '{"message":"page not found"}', 'application/json'))).toBeUndefined();
    expect(engineVerdict(req(), answer(500, '{"message":"x"}', 'application/json'))).toMatch(/answered 500/);
    expect(engineVerdict(req(), answer(400, '{"message":"a\\nb"}', 'application/json'))).toMatch(/one-line message/);
    expect(engineVerdict(req(), answer(201, '{"Id":"abc"}', 'application/json'))).toMatch(/the id "abc"/);
    expect(engineVerdict(req(), answer(200, '{"Running":"yes"}', 'application/json'))).toMatch(/Running "yes"/);
    expect(engineVerdict(req(), { ...answer(200, ''), outcome: 'timeout', status: undefined })).toMatch(/a hang/);
    // A body declared and never sent may be waited for.
    expect(
      engineVerdict(req([['Content-Length', '5']]), { ...answer(200, ''), outcome: 'timeout', status: undefined }),
    ).toBeUndefined();
  });
});
