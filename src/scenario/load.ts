/**
 * Reading a scenario file: YAML parsed with positions, checked against the
 * JSON Schema (ajv), then against what the schema cannot say (a framework
 * named by a fault exists, an agent index is in range, each fault reads as
 * the control API would read it). Every error names the file, the line and
 * the field: `scenarios/x.yaml:12:7: timeline[0].fault.type: must be one of ...`.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { isMap, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { MASTER_NODE } from '../core/model/messages.js';
import { CONDITION_KINDS, parseCondition } from '../wire/sim/conditions.js';
import { parseFault } from '../wire/sim/faults.js';
import { ordinalError, strayFaultField } from './fault-fields.js';
import { parseAttributes } from '../wire/convert-common.js';
import { parseDuration } from './duration.js';
import { DURATION_FORMAT, SCENARIO_SCHEMA } from './schema.js';
import { fieldName, schemaErrors, type Path } from './schema-errors.js';
import { isSelector, resolveFault, type AgentTarget } from './targets.js';
import type {
  AgentFlagsSpec,
  AgentGroup,
  Condition,
  Expectation,
  FrameworkSpec,
  Scenario,
  ServiceRequest,
  ServiceSpec,
  TaskPlan,
  TimelineEntry,
} from './scenario.js';
import { agentCount } from './scenario.js';
import { ScenarioError } from './load-error.js';
import { checkFrameworkFields, externalOf, isExternal, timeOf } from './external-load.js';
import { MAX_AGENTS, MAX_ALIAS_COUNT, MAX_SCENARIO_BYTES } from './limits.js';

export { ScenarioError };

/** The schema's validator, compiled on the first file read: a process that reads none (`clustersim up`) starts without it. */
let compiled: ValidateFunction | undefined;

function schemaValidator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addFormat(DURATION_FORMAT, { type: 'string', validate: (text: string) => parseDuration(text) !== undefined });
  compiled = ajv.compile(SCENARIO_SCHEMA);
  return compiled;
}

type Raw = Record<string, any>;

export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = readBounded(file);
  } catch (error) {
    if (error instanceof ScenarioError) throw error;
    throw new ScenarioError(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  return parseScenario(file, text);
}

/** The file's text, refused unread when its size says it is too large, and never more than the limit read. */
function readBounded(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_SCENARIO_BYTES) throw tooLarge(file, size);
    // A pipe or a device has no size: read one byte more than the limit, to know it is over.
    const buffer = Buffer.alloc(MAX_SCENARIO_BYTES + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_SCENARIO_BYTES) throw tooLarge(file);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(file: string, bytes?: number): ScenarioError {
  const size = bytes === undefined ? 'more bytes' : `${bytes} bytes, more`;
  return new ScenarioError(
    `${file}: the file has ${size} than a scenario file may have (${MAX_SCENARIO_BYTES} bytes, 1 MiB)`,
  );
}

export function parseScenario(file: string, text: string): Scenario {
  // A string longer than the limit in UTF-16 units is longer in bytes too: no need to count them.
  if (text.length > MAX_SCENARIO_BYTES) throw tooLarge(file);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_SCENARIO_BYTES) throw tooLarge(file, bytes);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const where = (path: Path, key?: string): string => position(file, doc, lines, path, key);
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const { line, col } = lines.linePos(syntax.pos[0]);
    const message = syntax.code === 'RESOURCE_EXHAUSTION' ? 'nested too deeply to read' : syntax.message.split('\n')[0];
    throw new ScenarioError(`${file}:${line}:${col}: ${message}`);
  }
  const raw = plainOf(file, doc);
  const validate = schemaValidator();
  if (!validate(raw)) throw new ScenarioError(schemaErrors(validate.errors ?? [], where));
  return build(
    file,
    withConditions(raw as Raw, where),
    where,
    (path) => lines.linePos(nodeAt(doc, path)?.range?.[0] ?? 0).line,
  );
}

/** The document as plain data; aliases that expand past the limit (an alias bomb) are the file's error. */
function plainOf(file: string, doc: Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      throw new ScenarioError(
        `${file}: its aliases (*name) expand too far (at most ${MAX_ALIAS_COUNT}: the uses of an anchor times the aliases inside it)`,
      );
    }
    throw error;
  }
}

/**
 * The file with its conditions (`when`, and expectations of a kind of
 * the vocabulary) read by the parser the control API uses: the core's form
 * (`task_id` becomes `taskId`), each framework still named as in the file.
 */
function withConditions(raw: Raw, where: (path: Path) => string): Raw {
  const read = (value: Raw, path: Path): Raw => {
    const parsed = parseCondition(value, fieldName(path));
    if (typeof parsed === 'string') throw new ScenarioError(`${where(path)}: ${parsed}`);
    return parsed;
  };
  const timeline = (raw['timeline'] ?? []).map((entry: Raw, i: number) =>
    entry['when'] === undefined ? entry : { ...entry, when: read(entry['when'], ['timeline', i, 'when']) },
  );
  const expect = raw['expect'].map((e: Raw, i: number) => {
    const { at, ...rest } = e;
    const counted = Object.keys(rest).some((k) => (CONDITION_KINDS as readonly string[]).includes(k));
    return counted ? { ...read(rest, ['expect', i]), ...(at === undefined ? {} : { at }) } : e;
  });
  return { ...raw, ...(raw['timeline'] === undefined ? {} : { timeline }), expect };
}

function build(
  file: string,
  raw: Raw,
  where: (path: Path, key?: string) => string,
  lineOf: (path: Path) => number,
): Scenario {
  const entries: Raw[] = raw['frameworks'] ?? [];
  for (const [i, entry] of entries.entries()) checkFrameworkFields(entry, i, where);
  const frameworks = entries.filter((f) => !isExternal(f)).map(frameworkOf);
  const externals = entries.flatMap((f, i) => (isExternal(f) ? [externalOf(file, f, lineOf(['frameworks', i]))] : []));
  const names = new Set<string>();
  const unique = (list: readonly { name: string }[], key: string): void =>
    list.forEach((f, i) => {
      if (names.has(f.name))
        throw new ScenarioError(`${where([key, i, 'name'])}: ${key}[${i}].name: '${f.name}' is named twice`);
      names.add(f.name);
    });
  unique(entries as { name: string }[], 'frameworks');
  unique(raw['services'] ?? [], 'services');
  const cluster = raw['cluster'];
  const scenario: Scenario = {
    file,
    name: raw['name'],
    description: raw['description'] ?? '',
    seed: raw['seed'] ?? 0,
    durationMs: parseDuration(raw['duration'])!,
    time: timeOf(raw, where),
    cluster: {
      masters: cluster['masters'] ?? 1,
      agents: cluster['agents'] as AgentGroup[],
      ...(cluster['agent_flags'] === undefined ? {} : { agentFlags: agentFlagsOf(cluster['agent_flags']) }),
      ...optionalMs('heartbeatIntervalMs', cluster['heartbeat_interval']),
      ...optionalMs('allocationIntervalMs', cluster['allocation_interval']),
      ...(cluster['weights'] === undefined ? {} : { weights: cluster['weights'] }),
      ...(cluster['containerizers'] === undefined ? {} : { containerizers: cluster['containerizers'] }),
      ...(cluster['custom_executors'] === undefined ? {} : { customExecutors: cluster['custom_executors'] }),
      quota: cluster['quota'] ?? [],
    },
    frameworks,
    externals,
    services: (raw['services'] ?? []).map(serviceOf),
    timeline: (raw['timeline'] ?? []).map(
      (entry: Raw, i: number): TimelineEntry => ({
        ...optionalMs('at', entry['at']),
        ...(entry['when'] === undefined ? {} : { when: entry['when'] }),
        ...(entry['fault'] === undefined ? {} : { fault: entry['fault'] }),
        ...(entry['request'] === undefined ? {} : { request: requestOf(entry['request']) }),
        line: lineOf(['timeline', i]),
      }),
    ),
    expect: raw['expect'].map((e: Raw, i: number) => expectationOf(e, lineOf(['expect', i]))),
  };
  checkReferences(scenario, where);
  return scenario;
}

function optionalMs<K extends string>(key: K, value: unknown): { [P in K]?: number } {
  return (value === undefined ? {} : { [key]: parseDuration(value) }) as { [P in K]?: number };
}

function agentFlagsOf(raw: Raw): AgentFlagsSpec {
  return {
    ...(raw['isolation'] === undefined ? {} : { isolation: raw['isolation'] }),
    ...(raw['cgroups'] === undefined ? {} : { cgroups: raw['cgroups'] }),
    ...optionalMs('executorRegistrationTimeoutMs', raw['executor_registration_timeout']),
    ...optionalMs('executorShutdownGracePeriodMs', raw['executor_shutdown_grace_period']),
  };
}

function frameworkOf(raw: Raw): FrameworkSpec {
  const tasks = raw['tasks'] as Raw | undefined;
  const plan: TaskPlan | undefined =
    tasks === undefined
      ? undefined
      : {
          ...(tasks['keep_running'] === undefined ? {} : { keepRunning: tasks['keep_running'] }),
          ...(tasks['total'] === undefined ? {} : { total: tasks['total'] }),
          command: tasks['command'] ?? 'sleep 3600',
          cpus: tasks['cpus'] ?? 0.1,
          mem: tasks['mem'] ?? 32,
          disk: tasks['disk'] ?? 0,
        };
  return {
    name: raw['name'],
    role: raw['role'] ?? '*',
    encoding: raw['encoding'] ?? 'json',
    checkpoint: raw['checkpoint'] ?? false,
    failoverTimeoutMs: parseDuration(raw['failover_timeout']),
    partitionAware: raw['partition_aware'] ?? false,
    startAtMs: parseDuration(raw['start_at']) ?? 0,
    tasks: plan,
    failoverEveryMs: parseDuration(raw['failover_every']),
    stopAtMs: parseDuration(raw['stop_at']),
    reconnectAfterMs: parseDuration(raw['reconnect_after']) ?? 1_000,
    acknowledge: raw['acknowledge'] ?? true,
    reconcile: raw['reconcile'] ?? true,
    drainOnInverseOffers: raw['drain_on_inverse_offers'] ?? false,
  };
}

function serviceOf(raw: Raw): ServiceSpec {
  const config = Object.fromEntries(Object.entries((raw['config'] ?? {}) as Raw).map(([k, v]) => [k, String(v)]));
  return { name: raw['name'], kind: raw['kind'], config };
}

function requestOf(raw: Raw): ServiceRequest {
  return {
    service: raw['service'],
    method: raw['method'] ?? (raw['body'] === undefined ? 'GET' : 'POST'),
    path: raw['path'],
    ...(raw['body'] === undefined ? {} : { body: raw['body'] }),
  };
}

function expectationOf(raw: Raw, line: number): Expectation {
  const { at, ...rest } = raw;
  const durations =
    rest['resubscribed'] === undefined
      ? {}
      : { resubscribed: { ...rest['resubscribed'], within: parseDuration(rest['resubscribed'].within) } };
  return { ...rest, ...durations, ...optionalMs('at', at), line } as Expectation;
}

/** What the schema cannot check: names and indexes that must exist, faults that must read. */
function checkReferences(scenario: Scenario, where: (path: Path, key?: string) => string): void {
  // A service is a framework too: conditions and faults may name it.
  const names = new Set([...scenario.frameworks, ...scenario.externals, ...scenario.services].map((f) => f.name));
  const services = new Set(scenario.services.map((s) => s.name));
  const service = (value: string, path: Path, field: string): void => {
    if (!services.has(value))
      throw new ScenarioError(`${where(path)}: ${field}: no service named '${value}' in this file`);
  };
  const agents = agentCount(scenario);
  // An agent a fault adds takes the next index.
  const indexes = agents + scenario.timeline.filter((e) => e.fault?.['type'] === 'add_agent').length;
  if (agents > MAX_AGENTS) {
    throw new ScenarioError(
      `${where(['cluster', 'agents'])}: cluster.agents: ${agents} agents in all, more than a scenario may have (${MAX_AGENTS})`,
    );
  }
  const named = (value: unknown, path: Path, field: string): void => {
    if (value !== undefined && !names.has(value as string)) {
      throw new ScenarioError(`${where(path)}: ${field}: no framework named '${String(value)}' in this file`);
    }
  };
  const chosen = chosenNames(scenario, where);
  const checkFault = (fault: Readonly<Raw>, i: number): void => {
    named(fault['framework'], ['timeline', i, 'fault', 'framework'], `timeline[${i}].fault.framework`);
    for (const [target, path] of agentTargets(fault, ['timeline', i, 'fault'])) {
      const wrong = targetError(target, indexes, chosen, names);
      const at = [...path, ...(wrong?.at ?? [])];
      if (wrong !== undefined) throw new ScenarioError(`${where(at)}: ${fieldName(at)}: ${wrong.text}`);
    }
    const ordinal = ordinalError(fault);
    if (ordinal !== undefined)
      throw new ScenarioError(
        `${where(['timeline', i, 'fault', 'ordinal'])}: timeline[${i}].fault.ordinal: ${ordinal}`,
      );
    const stray = strayFaultField(fault);
    if (stray !== undefined)
      throw new ScenarioError(
        `${where(['timeline', i, 'fault'], stray.key)}: timeline[${i}].fault.${stray.key}: ${stray.text}`,
      );
    const placeholder = (target: AgentTarget): string => `agent-${JSON.stringify(target)}`;
    const parsed = parseFault(
      resolveFault(
        fault,
        placeholder,
        (name) => `framework-${name}`,
        (name, n) => `task-${name}-${n}`,
      ),
    );
    if (typeof parsed === 'string')
      throw new ScenarioError(`${where(['timeline', i, 'fault'])}: timeline[${i}].fault: ${parsed}`);
  };
  scenario.timeline.forEach((entry, i) => {
    if (entry.request !== undefined)
      service(entry.request.service, ['timeline', i, 'request', 'service'], `timeline[${i}].request.service`);
    if (entry.fault !== undefined) checkFault(entry.fault, i);
    for (const [name, path] of frameworksNamed(entry.when, ['timeline', i, 'when'])) named(name, path, fieldName(path));
  });
  scenario.expect.forEach((e, i) => {
    const ref = (e as Raw)[Object.keys(e).find((k) => k !== 'at' && k !== 'line')!] as Raw | undefined;
    named(ref?.['framework'], ['expect', i], `expect[${i}].framework`);
    if ('all' in e || 'any' in e)
      for (const [name, path] of frameworksNamed(e, ['expect', i])) named(name, path, fieldName(path));
    if ('service' in e) service(e.service.name, ['expect', i, 'service', 'name'], `expect[${i}].service.name`);
    if ('process' in e) {
      const wrong = processError(scenario, e.process.framework);
      const at = ['expect', i, 'process', 'framework'];
      if (wrong !== undefined) throw new ScenarioError(`${where(at)}: ${fieldName(at)}: ${wrong}`);
    }
  });
}

/** Why a `process` expectation cannot hold for a framework: only one the runner starts with a command has a process. */
function processError(scenario: Scenario, name: string): string | undefined {
  const external = scenario.externals.find((f) => f.name === name);
  if (external?.attach === true) return `'${name}' is attached: the runner owns no process for an attached framework`;
  if (external === undefined) return `'${name}' has no command: only a framework the runner starts has a process`;
  return undefined;
}

/** The frameworks a condition names (`tasks.framework`, in `all` and `any` too), with their paths in the file. */
function frameworksNamed(condition: Condition | undefined, path: Path): [string, Path][] {
  if (condition === undefined) return [];
  if ('all' in condition) return condition.all.flatMap((c, i) => frameworksNamed(c, [...path, 'all', i]));
  if ('any' in condition) return condition.any.flatMap((c, i) => frameworksNamed(c, [...path, 'any', i]));
  return 'tasks' in condition && condition.tasks.framework !== undefined
    ? [[condition.tasks.framework, [...path, 'tasks', 'framework']]]
    : [];
}

/** The agents a fault names (`agent`, and `nodes` but 'master'), with their paths in the file. */
function agentTargets(fault: Readonly<Raw>, path: Path): [AgentTarget, Path][] {
  const nodes: unknown[] = Array.isArray(fault['nodes']) ? fault['nodes'] : [];
  return [
    ...(fault['agent'] === undefined ? [] : [[fault['agent'], [...path, 'agent']] as [AgentTarget, Path]]),
    ...nodes.flatMap((n, j) => (n === MASTER_NODE ? [] : [[n, [...path, 'nodes', j]] as [AgentTarget, Path]])),
  ];
}

/**
 * What is wrong with an agent a fault names, and where in it: an index out
 * of range, a name no fault chooses, a selector's framework or attributes.
 */
function targetError(
  target: AgentTarget,
  agents: number,
  chosen: ReadonlySet<string>,
  frameworks: ReadonlySet<string>,
): { at: Path; text: string } | undefined {
  if (typeof target === 'number') {
    return target < agents ? undefined : { at: [], text: `the cluster has ${agents} agents (0 to ${agents - 1})` };
  }
  if (typeof target === 'string') {
    return chosen.has(target) ? undefined : { at: [], text: `no fault of this file chooses an agent as '${target}'` };
  }
  const framework = target.running?.framework;
  if (framework !== undefined && !frameworks.has(framework)) {
    return { at: ['running', 'framework'], text: `no framework named '${framework}' in this file` };
  }
  const attributes = target.attributes === undefined ? [] : parseAttributes(target.attributes);
  return typeof attributes === 'string' ? { at: ['attributes'], text: attributes } : undefined;
}

/** The names faults choose agents `as`: each once, and none 'master' (a node of `nodes`). */
function chosenNames(scenario: Scenario, where: (path: Path) => string): Set<string> {
  const names = new Set<string>();
  scenario.timeline.forEach((entry, i) => {
    for (const [target, path] of agentTargets(entry.fault ?? {}, ['timeline', i, 'fault'])) {
      const name = isSelector(target) ? target.as : undefined;
      if (name === undefined) continue;
      const at = `${where([...path, 'as'])}: ${fieldName(path)}.as`;
      if (name === MASTER_NODE) throw new ScenarioError(`${at}: '${name}' names the master; choose another name`);
      if (names.has(name)) throw new ScenarioError(`${at}: '${name}' is chosen twice`);
      names.add(name);
    }
  });
  return names;
}

// ---- positions and messages ----

function nodeAt(doc: Document, path: Path): Node | undefined {
  return (path.length === 0 ? doc.contents : doc.getIn(path, true)) as Node | undefined;
}

function position(file: string, doc: Document, lines: LineCounter, path: Path, key?: string): string {
  let node = nodeAt(doc, path);
  if (key !== undefined && isMap(node)) {
    const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
    node = (pair?.key as Node | undefined) ?? node;
  }
  const { line, col } = lines.linePos(node?.range?.[0] ?? 0);
  return `${file}:${line}:${col}`;
}
