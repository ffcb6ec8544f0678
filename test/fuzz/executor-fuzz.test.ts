/**
 * The agents' executor API under generated requests: executor calls right
 * and wrong, mutated, in both encodings, with every header and framing the
 * fuzzer knows, sent to agents that await their custom executors while
 * they crash and restart, time moves and the framework kills, shuts down
 * and messages its executors. `npm run fuzz` with FUZZ_API=executor sends
 * a hundred thousand.
 *
 * A failure prints fast-check's seed, path and counterexample, the cluster
 * seed among them. Replay with FUZZ_SEED=<seed> FUZZ_PATH=<path>;
 * FUZZ_EXECUTOR_RUNS changes the number of runs.
 */
import { describe, expect, it } from 'vitest';
import { executorVerdict, expectedAnswer, type AgentState } from './executor-judge.js';
import { runExecutorsOnce, executorRunInput } from './executor-session.js';
import { assertRuns } from './session.js';
import { StreamCheck } from './stream-check.js';
import type { WireRequest, WireResponse } from './transport.js';

const RUNS = Number(process.env['FUZZ_EXECUTOR_RUNS'] ?? 60);
const MAX_STEPS = 40;

describe('fuzzing the executor API', () => {
  it(`answers ${RUNS} runs of up to ${MAX_STEPS} generated steps as upstream's agent does, without a 5xx, a hang or a crash`, async () => {
    const stats = await assertRuns(executorRunInput(MAX_STEPS), runExecutorsOnce, RUNS);
    const statuses = [...stats.byStatus].sort().map(([s, n]) => `${s}: ${n}`);
    console.log(
      `fuzz: ${stats.cases} executor API cases in ${stats.runs} runs (${statuses.join(', ')}); ${stats.streams.executor} executor streams, ${stats.events.executor} events; ${stats.exact} answers held to the one right answer`,
    );
    expect(stats.cases).toBeGreaterThan(RUNS);
    // The runs reach the deep paths: streams opened, updates taken.
    expect(stats.byStatus.get('200 (stream)') ?? 0).toBeGreaterThan(0);
    expect(stats.byStatus.get('202') ?? 0).toBeGreaterThan(0);
    expect(stats.exact).toBeGreaterThan(RUNS);
  }, 600_000);
});

// The judge must see what it is there to see, or a quiet run proves nothing.
describe('the executor API verdict', () => {
  const ids = { framework_id: { value: 'fw' }, executor_id: { value: 'ex' } };
  const request = (call: object, headers: [string, string][] = []): WireRequest => ({
    port: 1,
    method: 'POST',
    target: '/api/v1/executor',
    version: 'HTTP/1.1',
    headers: [['Host', '127.0.0.1:1'], ['Content-Type', 'application/json'], ...headers],
    body: Buffer.from(JSON.stringify({ ...ids, ...call })),
    framing: 'length',
    followUp: false,
    hold: false,
    abort: 'no',
    operator: false,
    executor: true,
  });
  const answer = (status: number, body: string, check?: StreamCheck): WireResponse => ({
    outcome: 'response',
    status,
    headers: { 'content-type': status === 200 ? 'application/json' : 'text/plain; charset=utf-8' },
    body: Buffer.from(body),
    stream: check !== undefined,
    ...(check === undefined ? {} : { check }),
    followUp: undefined,
    ms: 1,
  });
  const agent = (state: string, up = true): AgentState => ({
    up,
    frameworks: new Set(['fw']),
    executors: new Map([['fw\u0000ex', { custom: true, alive: true, state, tasks: new Set(['t1']) }]]),
  });
  const uuid = Buffer.alloc(16, 1).toString('base64');
  const update = (status: object) => ({
    type: 'UPDATE',
    update: { status: { task_id: { value: 't1' }, state: 'TASK_RUNNING', source: 'SOURCE_EXECUTOR', uuid, ...status } },
  });
  const judged = (call: object, state: AgentState, res: WireResponse, headers: [string, string][] = []) =>
    executorVerdict(request(call, headers), res, expectedAnswer(request(call, headers), state));

  it('tells the one right answer from the agent state and the call', () => {
    const message = { type: 'MESSAGE', message: { data: '' } };
    expect(judged(message, agent('launched'), answer(403, 'Executor is not subscribed'))).toBeUndefined();
    expect(judged(message, agent('launched'), answer(202, ''))).toMatch(/expected 403/);
    expect(judged(message, agent('subscribed'), answer(202, ''))).toBeUndefined();
    expect(judged(message, agent('disconnected'), answer(403, 'Executor is not subscribed'))).toMatch(/expected 202/);
    expect(judged(message, agent('subscribed', false), answer(503, 'Agent has not finished recovery'))).toBeUndefined();
    expect(
      judged(
        { ...message, framework_id: { value: 'other' } },
        agent('subscribed'),
        answer(400, 'Executor cannot be found'),
      ),
    ).toMatch(/Framework cannot be found/);
    expect(
      judged(
        { ...message, executor_id: { value: 'other' } },
        agent('subscribed'),
        answer(400, 'Executor cannot be found'),
      ),
    ).toBeUndefined();
    expect(judged(update({}), agent('subscribed'), answer(202, ''))).toBeUndefined();
    expect(judged(update({ task_id: { value: 't2' } }), agent('subscribed'), answer(202, ''))).toMatch(
      /Task 't2' is not a task of executor 'ex'/,
    );
    expect(judged(update({ state: 'TASK_STAGING' }), agent('subscribed'), answer(202, ''))).toMatch(
      /expected 400 Failed to validate executor::Call: Received TASK_STAGING from executor ex of framework fw which is not allowed/,
    );
    expect(
      judged(
        update({ uuid: 'AAAA' }),
        agent('subscribed'),
        answer(400, "Failed to validate executor::Call: 'uuid' must be a 16-byte UUID"),
      ),
    ).toBeUndefined();
    expect(judged({ type: 'HEARTBEAT' }, agent('subscribed', false), answer(202, ''))).toBeUndefined();
    expect(judged({ type: 'UNKNOWN' }, agent('subscribed'), answer(400, 'x'))).toMatch(/expected 501/);
  });

  it('wants a SUBSCRIBE answered with a stream that begins as the executor state says, in the encoding asked for', () => {
    const stream = (...events: object[]) => {
      const check = new StreamCheck('executor', 'application/json');
      for (const event of events) {
        const text = JSON.stringify(event);
        const record = `${Buffer.byteLength(text)}\n${text}`;
        check.push(Buffer.from(`${Buffer.byteLength(record).toString(16)}\r\n${record}\r\n`));
      }
      return check;
    };
    const subscribed = {
      type: 'SUBSCRIBED',
      subscribed: {
        executor_info: { executor_id: { value: 'ex' } },
        framework_info: { user: 'u', name: 'n' },
        agent_info: { hostname: 'h' },
      },
    };
    const subscribe = { type: 'SUBSCRIBE', subscribe: {} };
    expect(judged(subscribe, agent('launched'), answer(200, '', stream(subscribed)))).toBeUndefined();
    expect(judged(subscribe, agent('terminating'), answer(200, '', stream(subscribed)))).toMatch(/with SHUTDOWN first/);
    expect(judged(subscribe, agent('terminating'), answer(200, '', stream({ type: 'SHUTDOWN' })))).toBeUndefined();
    expect(
      judged(subscribe, agent('launched'), answer(200, '', stream(subscribed)), [['Accept', 'application/x-protobuf']]),
    ).toMatch(/in application\/x-protobuf/);
    expect(judged(subscribe, agent('launched'), answer(200, ''), [['Accept', 'text/html']])).toMatch(/expected 406/);
    // A stream's records are checked as they come: one SUBSCRIBED only, and first.
    expect(stream(subscribed, subscribed).problem).toMatch(/SUBSCRIBED again/);
    expect(stream({ type: 'HEARTBEAT' }).problem).toMatch(/the first event is HEARTBEAT/);
    // And they tell one story: the tasks launched are this executor's, once each, and none after SHUTDOWN.
    const launch = (taskId: string, executorId: string) => ({
      type: 'LAUNCH',
      launch: {
        task: {
          name: 't',
          task_id: { value: taskId },
          agent_id: { value: 'a' },
          executor: { executor_id: { value: executorId } },
        },
      },
    });
    expect(stream(subscribed, launch('t1', 'ex'), launch('t2', 'ex')).problem).toBeUndefined();
    expect(stream(subscribed, launch('t1', 'other')).problem).toMatch(
      /task t1 of executor other launched on the stream of ex/,
    );
    expect(stream(subscribed, launch('t1', 'ex'), launch('t1', 'ex')).problem).toMatch(/launched twice/);
    expect(stream(subscribed, { type: 'SHUTDOWN' }, launch('t1', 'ex')).problem).toMatch(/launched after SHUTDOWN/);
  });

  it('holds a request it cannot tell the answer to to the rules every answer keeps', () => {
    const odd = (call: object) => ({ ...request(call), method: 'PUT' });
    const message = { type: 'MESSAGE', message: { data: '' } };
    expect(executorVerdict(odd(message), answer(503, 'Service Unavailable'), undefined)).toMatch(
      /not while the agent is down/,
    );
    expect(executorVerdict(odd(message), answer(403, 'Forbidden'), undefined)).toMatch(/answered 403/);
    expect(executorVerdict(odd(message), answer(202, 'x'), undefined)).toMatch(/a 202 with a body/);
    expect(executorVerdict(odd(message), answer(200, '{}'), undefined)).toMatch(/without an event stream/);
    expect(executorVerdict(odd(message), answer(400, 'a\nb'), undefined)).toMatch(/more than one line/);
    expect(executorVerdict(odd(message), answer(409, 'x'), undefined)).toMatch(/answered 409/);
    expect(
      executorVerdict(
        odd(message),
        answer(405, "405 Method Not Allowed. Expecting one of { 'POST' }, but received 'PUT'."),
        undefined,
      ),
    ).toBeUndefined();
  });
});
