/**
 * Agent operator calls (`mesos.v1.agent.Call`) as upstream JSON values,
 * the two ways `calls.ts` builds scheduler calls:
 *
 *   templates   task exec sessions and nested containers under the running
 *               tasks (`@@parent:1`, a DOCKER task's `@@engine-parent:0`),
 *               with commands of the small shell, short and moderately long;
 *               waits, kills and removals of the same few nested ids
 *               (`n0`..`n7`) and of the tasks' own containers;
 *               UPDATE_CONTAINER_MEMORY_LIMIT with odd limits; every GET_*.
 *   schema      any call of the schema by reflection, the type matching its
 *               payload, a container id made live half the time.
 *
 * The records of an ATTACH_CONTAINER_INPUT stream are built here too
 * (`inputRecords`): the CONTAINER_ID record first, mostly, then standard
 * input, heartbeats and the empty record that ends the input.
 */
import fc from 'fast-check';
import { idx, oddString, schemaCallOf, some, w, type J } from './calls.js';
import type { Json } from './mutate.js';

export const AGENT_CALL_TYPE = 'mesos.v1.agent.Call';
export const AGENT_RESPONSE_TYPE = 'mesos.v1.agent.Response';

export const agentToken = {
  parent: (i: number) => `@@parent:${i}`,
  engineParent: (i: number) => `@@engine-parent:${i}`,
} as const;

/** The nested containers' own ids: few, three mostly, so that later calls find what earlier ones launched. */
export const nestedId = fc.oneof(w(3, fc.nat({ max: 2 })), w(1, idx)).map((i) => `n${i}`);
const parentId = fc.oneof(w(6, idx.map(agentToken.parent)), w(3, idx.map(agentToken.engineParent)), w(1, oddString));

/** Where a nested container goes: under a task's container, now and then under a nested one, or nowhere. */
const nestedContainerId: fc.Arbitrary<J> = fc.oneof(
  w(
    10,
    fc.tuple(parentId, nestedId).map(([p, n]): J => ({ parent: { value: p }, value: n })),
  ),
  w(
    1,
    fc
      .tuple(parentId, nestedId, nestedId)
      .map(([p, a, b]): J => ({ parent: { parent: { value: p }, value: a }, value: b })),
  ),
  w(
    1,
    nestedId.map((n): J => ({ value: n })),
  ),
  w(
    1,
    fc.tuple(oddString, oddString).map(([p, n]): J => ({ parent: { value: p }, value: n })),
  ),
);
/** What a wait, kill or removal names: a nested container mostly, a task's own container sometimes. */
const anyContainerId: fc.Arbitrary<J> = fc.oneof(
  w(6, nestedContainerId),
  w(
    2,
    idx.map((i): J => ({ value: agentToken.parent(i) })),
  ),
);

/** A pipeline of `n` stages: long, but within what an exec session is given in practice. */
const pipeline = (n: number) => `echo a${' | cat'.repeat(n)}`;
const script = fc.oneof(
  w(
    12,
    fc.constantFrom(
      'echo hi',
      'cat',
      'sleep 5',
      'sleep 100',
      'exit 3',
      'true',
      'false',
      'read x; echo $x',
      'echo out; echo err >&2',
      'yes | head -n 3',
      'kill -9 $$',
      'sleep 1 && exit 2',
      'cat; exit 4',
      'nothing-here',
      'echo $HOME $PATH',
      'sleep 0.5; echo late',
      'while true; do sleep 1; done',
    ),
  ),
  w(2, fc.integer({ min: 2, max: 200 }).map(pipeline)),
  w(
    1,
    fc.integer({ min: 100, max: 2_000 }).map((n) => `echo ${'x'.repeat(n)}`),
  ),
  w(1, oddString),
);
const argv = fc.oneof(
  w(
    6,
    fc.constantFrom<string[]>(
      ['echo', 'hello'],
      ['cat'],
      ['sleep', '3'],
      ['sh', '-c', 'exit 5'],
      ['frobnicate'],
      ['true'],
    ),
  ),
  w(1, fc.array(oddString, { maxLength: 4 })),
);
const command: fc.Arbitrary<J> = fc.oneof(
  w(
    6,
    script.map((value): J => ({ shell: true, value })),
  ),
  w(
    3,
    argv.map((args): J => ({ shell: false, value: args[0] ?? '', arguments: args })),
  ),
  w(
    1,
    some({
      shell: fc.boolean(),
      value: oddString,
      arguments: fc.array(oddString, { maxLength: 3 }),
      user: fc.constantFrom('root', 'nobody', ''),
    }),
  ),
);
/** A terminal now and then: one merged output stream. */
const container = fc.oneof(
  w(4, fc.constant(undefined)),
  w(1, fc.constant<J>({ type: 'MESOS', tty_info: {} })),
  w(1, fc.constant<J>({ type: 'DOCKER', docker: { image: 'x' } })),
);

const launch = fc.tuple(nestedContainerId, fc.option(command, { freq: 12 }), container).map(
  ([id, cmd, c]): J => ({
    container_id: id,
    ...(cmd === null ? {} : { command: cmd }),
    ...(c === undefined ? {} : { container: c }),
  }),
);
const signal = fc.oneof(w(4, fc.constantFrom(9, 15, 2)), w(1, fc.constantFrom(0, -1, 64, 2 ** 31 - 1)));
const kill = fc
  .tuple(anyContainerId, fc.option(signal, { freq: 2 }))
  .map(([id, s]): J => ({ container_id: id, ...(s === null ? {} : { signal: s }) }));
const byId = anyContainerId.map((id): J => ({ container_id: id }));

const mib = fc.oneof(
  w(6, fc.constantFrom(1, 16, 32, 64, 128, 1024, 0.5)),
  w(2, fc.constantFrom(0, -1, 1e300, 5e-324, 2 ** 53)),
  w(1, fc.double()),
);
const memoryLimit = fc
  .tuple(
    fc.oneof(
      w(
        6,
        idx.map((i): J => ({ value: agentToken.parent(i) })),
      ),
      w(2, nestedContainerId),
    ),
    mib,
  )
  .map(([id, m]): J => ({ container_id: id, memory_limit: { value: m } }));

/** The payload of each call a template writes, under the call's field. */
const PAYLOADS: Record<string, fc.Arbitrary<J | undefined>> = {
  LAUNCH_NESTED_CONTAINER_SESSION: launch,
  LAUNCH_NESTED_CONTAINER: launch,
  LAUNCH_CONTAINER: launch,
  WAIT_CONTAINER: byId,
  WAIT_NESTED_CONTAINER: byId,
  KILL_CONTAINER: kill,
  KILL_NESTED_CONTAINER: kill,
  REMOVE_CONTAINER: byId,
  REMOVE_NESTED_CONTAINER: byId,
  ATTACH_CONTAINER_OUTPUT: byId,
  ATTACH_CONTAINER_INPUT: nestedContainerId.map((id): J => ({ type: 'CONTAINER_ID', container_id: id })),
  UPDATE_CONTAINER_MEMORY_LIMIT: memoryLimit,
  GET_CONTAINERS: some({ show_nested: fc.boolean(), show_standalone: fc.boolean() }),
  GET_METRICS: some({ timeout: some({ nanoseconds: fc.constantFrom(0, 1_000_000_000, -1) }) }),
  SET_LOGGING_LEVEL: fc.record({
    level: fc.constantFrom(0, 1, 3),
    duration: fc.record({ nanoseconds: fc.constantFrom(0, 1_000_000_000) }),
  }),
  LIST_FILES: fc.record({ path: fc.constantFrom('/slave/log', '/', '') }),
  READ_FILE: fc.record({ path: fc.constantFrom('/slave/log', ''), offset: fc.constantFrom(0, 10) }),
};

/** How often each type is drawn; the rest weigh 1. */
const WEIGHTS: Record<string, number> = {
  LAUNCH_NESTED_CONTAINER_SESSION: 14,
  LAUNCH_NESTED_CONTAINER: 5,
  WAIT_CONTAINER: 6,
  WAIT_NESTED_CONTAINER: 3,
  KILL_CONTAINER: 5,
  KILL_NESTED_CONTAINER: 2,
  REMOVE_CONTAINER: 3,
  REMOVE_NESTED_CONTAINER: 1,
  UPDATE_CONTAINER_MEMORY_LIMIT: 6,
  GET_STATE: 2,
  GET_CONTAINERS: 3,
  GET_TASKS: 2,
  GET_EXECUTORS: 2,
  GET_FRAMEWORKS: 2,
  GET_AGENT: 2,
  ATTACH_CONTAINER_OUTPUT: 2,
};

/** The calls whose answer may wait for a container's end: the request is judged when the answer comes. */
export const WAIT_CALLS: readonly string[] = ['WAIT_CONTAINER', 'WAIT_NESTED_CONTAINER'];

export const agentTemplateCall: fc.Arbitrary<Json> = fc.oneof(
  ...Object.keys(WEIGHTS)
    .concat([
      'GET_HEALTH',
      'GET_FLAGS',
      'GET_VERSION',
      'GET_LOGGING_LEVEL',
      'GET_RESOURCE_PROVIDERS',
      'GET_OPERATIONS',
      'GET_METRICS',
      'SET_LOGGING_LEVEL',
    ])
    .concat(['LIST_FILES', 'READ_FILE', 'LAUNCH_CONTAINER', 'ATTACH_CONTAINER_INPUT', 'PRUNE_IMAGES', 'UNKNOWN'])
    .map((type) =>
      w(
        WEIGHTS[type] ?? 1,
        (PAYLOADS[type] ?? fc.constant(undefined)).map(
          (p): Json => (p === undefined ? { type } : { type, [type.toLowerCase()]: p }),
        ),
      ),
    ),
);

export const agentSchemaCall: fc.Arbitrary<Json> = schemaCallOf(AGENT_CALL_TYPE, (payload, i) => {
  if ('container_id' in payload) payload['container_id'] = { parent: { value: agentToken.parent(i) }, value: `n${i}` };
});

// ---- the records of an ATTACH_CONTAINER_INPUT stream ----

const io = (processIo: J): J => ({
  type: 'ATTACH_CONTAINER_INPUT',
  attach_container_input: { type: 'PROCESS_IO', process_io: processIo },
});
const stdin = (text: string): J =>
  io({ type: 'DATA', data: { type: 'STDIN', data: Buffer.from(text).toString('base64') } });
const heartbeat: J = io({
  type: 'CONTROL',
  control: { type: 'HEARTBEAT', heartbeat: { interval: { nanoseconds: 30_000_000_000 } } },
});
const oddRecord: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    io({ type: 'DATA', data: { type: 'STDOUT', data: 'eA==' } }),
    io({ type: 'CONTROL', control: { type: 'TTY_INFO', tty_info: { window_size: { rows: 24, columns: 80 } } } }),
    io({}),
    { type: 'ATTACH_CONTAINER_INPUT', attach_container_input: { type: 'UNKNOWN' } },
    { type: 'ATTACH_CONTAINER_INPUT' },
    { type: 'GET_HEALTH' },
    {},
  ),
  agentSchemaCall,
);
const stdinText = fc.oneof(
  w(6, fc.constantFrom('hello\n', 'x', 'line one\nline two\n', '\u0000', 'é\n')),
  w(
    1,
    fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'y'.repeat(n)),
  ),
);

/** One record of an input stream: the container, standard input, a heartbeat, the end, or something else. */
const inputRecord: fc.Arbitrary<Json> = fc.oneof(
  w(8, stdinText.map(stdin)),
  w(2, fc.constant(heartbeat)),
  w(2, fc.constant(stdin(''))),
  w(
    1,
    nestedContainerId.map(
      (id): Json => ({
        type: 'ATTACH_CONTAINER_INPUT',
        attach_container_input: { type: 'CONTAINER_ID', container_id: id },
      }),
    ),
  ),
  w(1, oddRecord),
);

/** The records of an input stream: the CONTAINER_ID record first (mostly), then input, ending with the empty record (mostly). */
export const inputRecords: fc.Arbitrary<Json[]> = fc
  .tuple(
    fc.oneof(
      w(
        12,
        nestedContainerId.map(
          (id): Json => ({
            type: 'ATTACH_CONTAINER_INPUT',
            attach_container_input: { type: 'CONTAINER_ID', container_id: id },
          }),
        ),
      ),
      w(1, inputRecord),
    ),
    fc.array(inputRecord, { maxLength: 6 }),
    fc.oneof(w(3, fc.constant(true)), w(1, fc.constant(false))),
  )
  .map(([first, rest, end]) => [first, ...rest, ...(end ? [stdin('')] : [])]);
