/**
 * The JSON Schema of a scenario file (draft-07). `scenarios/scenario.schema.json`
 * is this object written out (a test keeps the two equal); editors that
 * understand `# yaml-language-server: $schema=...` check files as they are typed.
 */
import { AGENT_STATES, FRAMEWORK_STATES } from '../core/conditions.js';
import { TASK_STATES } from '../core/model/types.js';
import { CUSTOM_EXECUTOR_MODES } from '../core/model/executor-api.js';
import { FAULT_TYPES } from '../wire/sim/faults.js';
import { MISUSE_KINDS } from '../core/master/misuse-report.js';
import { DURATION_PATTERN } from './duration.js';
import * as max from './limits.js';
import { SERVICE_KINDS } from './scenario.js';

/** The format of a duration string at most MAX_DURATION_MS long (the loader's ajv knows it; editors check the pattern). */
export const DURATION_FORMAT = 'clustersim-duration';

const DURATION_FORMS = [
  { type: 'integer', minimum: 0, maximum: max.MAX_DURATION_MS },
  { type: 'string', pattern: DURATION_PATTERN, format: DURATION_FORMAT },
];

const duration = {
  description: 'Cluster time, at most 30d: whole milliseconds, or a number with a unit: 500ms, 30s, 10m, 2h, 1d',
  oneOf: DURATION_FORMS,
};

/** Whether a (sub)schema is a duration, for the loader's messages. */
export function isDurationSchema(schema: unknown): boolean {
  return (schema as { oneOf?: unknown } | undefined)?.oneOf === DURATION_FORMS;
}

const NAME = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' };

const bound = { type: 'integer', minimum: 0, maximum: max.MAX_BOUND };

const bounds = {
  count: { ...bound, description: 'exactly this many' },
  min: { ...bound, description: 'at least this many' },
  max: { ...bound, description: 'at most this many' },
};

/** A condition inside `all` or `any`: the schema's `definitions.condition`. */
const CONDITION_REF = { $ref: '#/definitions/condition' };

const conditions = (description: string) => ({ description, type: 'array', minItems: 1, items: CONDITION_REF });

/**
 * What holds at an instant, over the read model and the trace: the one
 * condition vocabulary (wire/sim/conditions.ts reads it, for the control
 * API too; this says the same to editors and places the loader's
 * messages; the parser holds `all` and `any` to 8 deep).
 */
const condition = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: {
    tasks: {
      description: "Tasks in a state (the master's latest), of one framework or all",
      type: 'object',
      additionalProperties: false,
      required: ['state'],
      properties: {
        framework: { type: 'string', description: 'A framework of this file (default all)' },
        state: { enum: [...TASK_STATES] },
        task_id: { type: 'string', minLength: 1, description: 'Only the task of this id' },
        ...bounds,
      },
    },
    agents: {
      description: 'Agents in a state as the master books them',
      type: 'object',
      additionalProperties: false,
      required: ['state'],
      properties: { state: { enum: [...AGENT_STATES] }, ...bounds },
    },
    frameworks: {
      description: 'Frameworks in a state as the master books them',
      type: 'object',
      additionalProperties: false,
      required: ['state'],
      properties: { state: { enum: [...FRAMEWORK_STATES] }, ...bounds },
    },
    trace: {
      description: 'Trace entries of a kind (optionally whose line contains a text), so far',
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { type: 'string', minLength: 1 }, contains: { type: 'string' }, ...bounds },
    },
    all: conditions('Every one of these conditions holds'),
    any: conditions('At least one of these conditions holds'),
  },
};

/** The states of a task the master still books on its agent (a finished one goes to its framework's history). */
const LIVE_TASK_STATES = ['TASK_STAGING', 'TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING', 'TASK_UNREACHABLE'];

/** An agent chosen when the fault fires, by what runs there or by its attributes (src/scenario/targets.ts). */
const agentSelector = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['running'] }, { required: ['attributes'] }, { required: ['task'] }],
  properties: {
    running: {
      description:
        'An agent where the master books tasks like these: the one with the most of them, ' +
        'the first by index among equals',
      type: 'object',
      additionalProperties: false,
      properties: {
        framework: { type: 'string', description: 'A framework of this file (default any)' },
        task_prefix: { type: 'string', description: "The tasks' ids start with this" },
        state: { enum: LIVE_TASK_STATES, description: "The tasks' latest state (default TASK_RUNNING)" },
      },
    },
    attributes: {
      type: 'string',
      description: "An agent with every one of these attributes, in upstream's --attributes form, e.g. rack:r1",
    },
    task: {
      type: 'string',
      minLength: 1,
      description: 'The agent where the master books a live task of this id (of any framework)',
    },
    as: { ...NAME, description: 'Keep the agent chosen under this name: a later fault names it so (agent: NAME)' },
  },
};

const AGENT_TARGET_FORMS = [
  { type: 'integer', minimum: 0, description: 'The N-th agent (from 0), in the order of cluster.agents' },
  { ...NAME, description: "The agent an earlier fault chose 'as' this name" },
  agentSelector,
];

/** The selector's place among the forms, for the loader's messages. */
export const AGENT_SELECTOR_FORM = AGENT_TARGET_FORMS.indexOf(agentSelector);

const agentTarget = {
  description:
    'An agent: its index, the name an earlier fault chose it as, or a selector resolved when the fault fires',
  oneOf: AGENT_TARGET_FORMS,
};

/** Whether a (sub)schema is an agent target, for the loader's messages. */
export function isAgentTargetSchema(schema: unknown): boolean {
  return (schema as { oneOf?: unknown } | undefined)?.oneOf === AGENT_TARGET_FORMS;
}

const fault = {
  description:
    "A fault as POST /sim/v1/faults takes it; 'agent' names an agent (an index, a selector, a name), " +
    "'framework: NAME' a framework of this file",
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: [...FAULT_TYPES] },
    agent: agentTarget,
    nodes: { type: 'array', description: "The two ends of a partition: 'master' or an agent", items: agentTarget },
    framework: { type: 'string' },
    resources: { type: 'string', description: "add_agent: the new agent's resources, e.g. cpus:4;mem:8192" },
    attributes: { type: 'string', description: "add_agent: the new agent's attributes, e.g. rack:r1;zone:a" },
    ordinal: {
      type: 'integer',
      minimum: 0,
      description:
        "With 'framework', instead of 'task_id' (fail_task, hang_task, memory_spike, crash_executor): the task of the " +
        'framework at this place (from 0) among its tasks in TASK_RUNNING when the fault fires, in the order the master booked them',
    },
  },
  dependencies: { ordinal: ['framework'] },
};

/** The fields of a framework that runs as a process of its own (src/scenario/external.ts); with them the run is in real time. */
const external = {
  command: {
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's placeholders, named for its author
      'Run this framework as a process: a string for sh -c, or an argument list; ${MASTER} and ${MASTER_URL} are the leading master',
    oneOf: [
      { type: 'string', minLength: 1 },
      { type: 'array', minItems: 1, items: { type: 'string' } },
    ],
  },
  attach: { type: 'boolean', description: 'Wait for a framework the user started (instead of a command)' },
  cwd: {
    type: 'string',
    description: "The command's working directory, relative to this file's directory (default that directory)",
  },
  env: {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's placeholders, named for its author
    description: "Added to the command's environment; ${MASTER} and ${MASTER_URL} are substituted",
    type: 'object',
    additionalProperties: { type: ['string', 'number', 'boolean'] },
  },
  match: {
    description: "How its subscription is known (default the entry's name)",
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1, description: 'The FrameworkInfo.name it subscribes with' } },
  },
  subscribe_timeout: {
    ...duration,
    description: 'How long (wall clock) to wait for it to subscribe (default 30s)',
  },
};

const framework = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: NAME,
    role: { type: 'string', description: "The framework's role (default '*')" },
    encoding: { enum: ['json', 'protobuf'], description: 'How it speaks to the master (default json)' },
    checkpoint: { type: 'boolean' },
    failover_timeout: duration,
    partition_aware: { type: 'boolean' },
    start_at: { ...duration, description: 'When it subscribes (default at once)' },
    tasks: {
      type: 'object',
      additionalProperties: false,
      properties: {
        keep_running: {
          type: 'integer',
          minimum: 0,
          maximum: max.MAX_KEEP_RUNNING,
          description: 'Keep this many tasks running: a task that ends is replaced',
        },
        total: {
          type: 'integer',
          minimum: 0,
          maximum: max.MAX_TASKS_TOTAL,
          description: 'Launch this many tasks in all, then no more',
        },
        command: { type: 'string', description: "The tasks' shell command (default 'sleep 3600')" },
        cpus: { type: 'number', exclusiveMinimum: 0, maximum: max.MAX_TASK_CPUS },
        mem: { type: 'number', exclusiveMinimum: 0, maximum: max.MAX_TASK_MIB },
        disk: { type: 'number', minimum: 0, maximum: max.MAX_TASK_MIB },
      },
    },
    failover_every: { ...duration, description: 'Drop its connection and subscribe again with its id this often' },
    stop_at: {
      ...duration,
      description: 'When its process exits for good: the connection breaks and it never subscribes again',
    },
    reconnect_after: {
      ...duration,
      description: 'How long it waits before subscribing again after losing its stream (default 1s)',
    },
    acknowledge: { type: 'boolean', description: 'Acknowledge status updates (default true)' },
    reconcile: { type: 'boolean', description: 'Reconcile its tasks after each subscription (default true)' },
    drain_on_inverse_offers: {
      type: 'boolean',
      description:
        'On an inverse offer, kill its tasks on that agent and accept it; decline offers of agents scheduled for maintenance (default false: inverse offers are ignored)',
    },
    ...external,
  },
};

const service = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'kind'],
  properties: {
    name: NAME,
    kind: {
      enum: [...SERVICE_KINDS],
      description: 'workflow: the workflow container-task service; orchestrator: the orchestration framework',
    },
    config: {
      description: "workflow: its configuration file's [cluster] settings; orchestrator: its environment variables",
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    },
  },
};

const request = {
  description: "A request to a bundled framework's API, as its users send it",
  type: 'object',
  additionalProperties: false,
  required: ['service', 'path'],
  properties: {
    service: { type: 'string', description: 'A service of this file' },
    method: { enum: ['GET', 'POST'], description: 'Default GET, or POST when there is a body' },
    path: { type: 'string', pattern: '^/' },
    body: { type: 'object', description: 'Sent as JSON' },
  },
};

const expectation = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ...condition.properties,
    at: { ...duration, description: 'When to check (default at the end of the run)' },
    events: {
      description:
        "Event types (or 'UPDATE TASK_STATE') that reach a framework in this order, others between them allowed",
      type: 'object',
      additionalProperties: false,
      required: ['framework', 'sequence'],
      properties: {
        framework: { type: 'string' },
        sequence: {
          type: 'array',
          minItems: 1,
          maxItems: max.MAX_SEQUENCE,
          items: { type: 'string', pattern: '^[A-Z_]+( TASK_[A-Z_]+)?$' },
        },
      },
    },
    resubscribed: {
      description: 'Every time the framework lost its subscription, it subscribed again within this time',
      type: 'object',
      additionalProperties: false,
      required: ['framework', 'within'],
      properties: {
        framework: { type: 'string' },
        within: duration,
        min: { ...bound, description: 'and at least this many times' },
      },
    },
    metric: {
      description: 'A figure of /metrics/snapshot at the end of the run',
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: { type: 'string' }, ...bounds },
    },
    invariants: { const: true, description: 'The full invariant check passes' },
    service: {
      description: "A GET of a bundled framework's API: its status, and a field of its JSON answer",
      type: 'object',
      additionalProperties: false,
      required: ['name', 'get'],
      properties: {
        name: { type: 'string' },
        get: { type: 'string', pattern: '^/' },
        status: { type: 'integer', minimum: 100, maximum: 599, description: 'default 200' },
        field: { type: 'string', description: 'A dotted path into the answer, e.g. status.state' },
        equals: { type: ['string', 'number', 'boolean'] },
      },
      dependencies: { equals: ['field'] },
    },
    process: {
      description:
        'The process of a framework with a command (not an attached one): still running at the end of the run, or ended with this exit code',
      type: 'object',
      additionalProperties: false,
      required: ['framework'],
      anyOf: [{ required: ['running'] }, { required: ['exit_code'] }],
      properties: {
        framework: { type: 'string' },
        running: { type: 'boolean' },
        exit_code: { type: 'integer', minimum: 0, maximum: 255 },
      },
    },
    misuse: {
      description: 'Protocol misuses the master saw (GET /sim/v1/misuse), of one framework or all, of one kind or all',
      type: 'object',
      additionalProperties: false,
      properties: { framework: { type: 'string' }, kind: { enum: [...MISUSE_KINDS] }, ...bounds },
    },
  },
};

export const SCENARIO_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://clustersim.dev/scenario.schema.json',
  title: 'clustersim scenario',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'duration', 'cluster', 'expect'],
  definitions: { condition },
  properties: {
    name: NAME,
    description: { type: 'string' },
    seed: {
      type: ['integer', 'string'],
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'The default seed (--seed overrides it)',
    },
    duration: { ...duration, description: 'How much cluster time the run covers' },
    time: {
      enum: ['virtual', 'realtime'],
      description:
        'virtual (the default): time jumps, a run replays from its seed; realtime: the wall clock, implied by a framework with command or attach',
    },
    cluster: {
      type: 'object',
      additionalProperties: false,
      required: ['agents'],
      properties: {
        masters: { type: 'integer', minimum: 1, maximum: 7 },
        agents: {
          type: 'array',
          minItems: 1,
          maxItems: max.MAX_AGENT_GROUPS,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['count'],
            properties: {
              count: { type: 'integer', minimum: 1, maximum: max.MAX_AGENTS },
              resources: { type: 'string', description: "Upstream's --resources form, e.g. cpus:4;mem:8192" },
              attributes: { type: 'string', description: "Upstream's --attributes form, e.g. rack:r1;zone:a" },
            },
          },
        },
        agent_flags: {
          description: "Flags of every agent, as upstream's agent takes them",
          type: 'object',
          additionalProperties: false,
          properties: {
            isolation: {
              type: 'string',
              description: 'e.g. cgroups/cpu,cgroups/mem (default); posix/mem does not enforce memory limits',
            },
            cgroups: { enum: ['v1', 'v2'] },
            executor_registration_timeout: duration,
            executor_shutdown_grace_period: duration,
          },
        },
        heartbeat_interval: duration,
        allocation_interval: duration,
        weights: { type: 'string', description: 'role=weight,...' },
        custom_executors: {
          enum: [...CUSTOM_EXECUTOR_MODES],
          description:
            "A task's own executor: simulate (default): the agent plays it; spawn: its command runs as a real process; " +
            'await: the agent waits for an outside process to subscribe as it',
        },
        containerizers: {
          type: 'string',
          description: "The agents' containerizers, e.g. docker,mesos for engine containers (default mesos)",
        },
        quota: {
          type: 'array',
          maxItems: max.MAX_QUOTA_ENTRIES,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['role', 'limits'],
            properties: {
              role: { type: 'string' },
              limits: { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: max.MAX_QUOTA } },
            },
          },
        },
      },
    },
    frameworks: { type: 'array', maxItems: max.MAX_FRAMEWORKS, items: framework },
    services: {
      type: 'array',
      maxItems: max.MAX_SERVICES,
      items: service,
      description: 'Bundled frameworks started beside the cluster and conducted like the scripted ones',
    },
    timeline: {
      type: 'array',
      maxItems: max.MAX_TIMELINE,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { at: duration, when: CONDITION_REF, fault, request },
        allOf: [
          { oneOf: [{ required: ['at'] }, { required: ['when'] }] },
          { oneOf: [{ required: ['fault'] }, { required: ['request'] }] },
        ],
      },
    },
    expect: { type: 'array', minItems: 1, maxItems: max.MAX_EXPECT, items: expectation },
  },
} as const;
