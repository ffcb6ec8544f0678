/**
 * The control API, the workflow service and the orchestration framework's
 * API under generated requests: a small slice of each target, on fixed
 * seeds; `npm run fuzz` with FUZZ_API=control, workflow or orchestrator
 * sends a hundred thousand. The judges must see what they are there to see.
 *
 * A failure prints fast-check's seed, path and counterexample, the cluster
 * seed among them. Replay with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_SERVICE_RUNS changes the number of runs of each target.
 */
import { describe, expect, it } from 'vitest';
import { controlRunInput, controlVerdict, runControlOnce } from './control-session.js';
import { orchestratorRunInput, orchestratorVerdict, runOrchestratorOnce } from './orchestrator-session.js';
import { assertRuns } from './session.js';
import { serviceVerdict } from './service-session.js';
import { plainWire, type WireRequest, type WireResponse } from './transport.js';
import { runWorkflowOnce, workflowRunInput, workflowVerdict } from './workflow-session.js';

const RUNS = Number(process.env['FUZZ_SERVICE_RUNS'] ?? 12);
const MAX_STEPS = 30;
/** Fixed, so that the slice runs the same every time; FUZZ_SEED replays another. */
const SEED = process.env['FUZZ_SEED'] === undefined ? 20_261_128 : undefined;

const summary = (what: string, stats: Awaited<ReturnType<typeof assertRuns>>) =>
  `fuzz: ${stats.cases} ${what} cases in ${stats.runs} runs (${[...stats.byStatus]
    .sort()
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')})`;

describe('fuzzing the bundled APIs', () => {
  it(`answers ${RUNS} runs of the control API without a 5xx, a hang or a crash; a new scheduler gets offers after`, async () => {
    const stats = await assertRuns(controlRunInput(MAX_STEPS), runControlOnce, RUNS, SEED);
    console.log(summary('control API', stats));
    expect(stats.byStatus.get('200') ?? 0).toBeGreaterThan(RUNS);
  }, 600_000);

  it(`answers ${RUNS} runs of the workflow service's API; a new request still runs after`, async () => {
    const stats = await assertRuns(workflowRunInput(MAX_STEPS), runWorkflowOnce, RUNS, SEED);
    console.log(summary('workflow API', stats));
    expect(stats.byStatus.get('200') ?? 0).toBeGreaterThan(0);
  }, 600_000);

  it(`answers ${Math.ceil(RUNS / 3)} runs of the orchestration framework's API; its server runs again after`, async () => {
    const stats = await assertRuns(orchestratorRunInput(MAX_STEPS), runOrchestratorOnce, Math.ceil(RUNS / 3), SEED);
    console.log(summary('orchestrator API', stats));
    expect(stats.byStatus.get('200') ?? 0).toBeGreaterThan(0);
  }, 600_000);
});

describe('the judges of the bundled APIs', () => {
  const request = (method: string, target: string): WireRequest => plainWire(1, method, target, [['Host', 'x']]);
  const answer = (status: number, body: string, type = 'text/plain; charset=utf-8', stream = false): WireResponse => ({
    outcome: 'response',
    status,
    headers: { 'content-type': type },
    body: Buffer.from(body),
    stream,
    followUp: undefined,
    ms: 1,
  });
  const none = () => false;

  it('flags a hang, a close, an undocumented 5xx and a refusal without a one-line reason', () => {
    const get = request('GET', '/v0/task/x');
    expect(serviceVerdict(get, { ...answer(200, ''), outcome: 'timeout', status: undefined }, none)).toMatch(/a hang/);
    expect(serviceVerdict(get, { ...answer(200, ''), outcome: 'closed', status: undefined }, none)).toMatch(
      /closed without an answer/,
    );
    expect(serviceVerdict(get, answer(500, 'URI malformed'), none)).toBe('answered 500');
    expect(
      serviceVerdict(
        get,
        answer(503, 'No leader elected'),
        (status, body) => status === 503 && body === 'No leader elected',
      ),
    ).toBeUndefined();
    expect(serviceVerdict(get, answer(400, 'a\nb'), none)).toMatch(/more than one line/);
    expect(serviceVerdict(get, answer(404, 'Not Found\n'), none)).toBeUndefined();
    expect(serviceVerdict(get, answer(404, ''), none)).toMatch(/no reason/);
    expect(serviceVerdict(get, { ...answer(200, 'Ok'), followUp: 'timeout' }, none)).toMatch(
      /kept-alive connection got no answer/,
    );
  });

  it('wants JSON objects from the control API, streams from its trace, and no 200 off its paths', () => {
    const json = 'application/json';
    expect(controlVerdict(request('GET', '/sim/v1/clock'), answer(200, '{"time_ms":0}', json))).toBeUndefined();
    expect(controlVerdict(request('GET', '/sim/v1//clock/x'), answer(200, '{"time_ms":0}', json))).toBeUndefined();
    expect(controlVerdict(request('GET', '/sim/v1/clock'), answer(200, '[1]', json))).toMatch(/not a JSON object/);
    expect(controlVerdict(request('GET', '/sim/v1/clock'), answer(200, '{}'))).toMatch(/not application\/json/);
    expect(controlVerdict(request('GET', '/sim/v1/trace'), answer(200, '{}', 'application/x-ndjson'))).toMatch(
      /without a stream/,
    );
    expect(
      controlVerdict(request('GET', '/sim/v1/trace'), answer(200, '{}', 'application/x-ndjson', true)),
    ).toBeUndefined();
    expect(controlVerdict(request('GET', '/sim/v1/nothing'), answer(200, '{}', json))).toMatch(/does not serve/);
    expect(controlVerdict(request('POST', '/sim/v1/reset'), answer(204, ''))).toBe('answered 204');
  });

  it("wants Ok for a queued request and JSON for a lookup from the workflow service, JSON from the framework's JSON paths", () => {
    expect(workflowVerdict('POST', '/v0/queue_command', 200, 'Ok')).toBeUndefined();
    expect(workflowVerdict('POST', '/v0/queue_command', 200, '{}')).toMatch(/not Ok/);
    expect(workflowVerdict('GET', '/v0/task/a', 200, 'null')).toBeUndefined();
    expect(workflowVerdict('GET', '/v0/task/a', 200, 'nul')).toMatch(/not JSON/);
    expect(orchestratorVerdict('GET', 200, 'application/json', '{"Scale":1}\n')).toBeUndefined();
    expect(orchestratorVerdict('GET', 200, 'application/json', 'Scale: 1')).toMatch(/not JSON/);
    expect(orchestratorVerdict('GET', 200, 'application/yaml', 'a: b')).toBeUndefined();
  });
});
