/**
 * The most a scenario file may ask for. A file is input from anywhere (CI,
 * a colleague, a generator): these keep a run to a size the process can
 * hold, and docs/scenarios.md, "Scenario limits", lists each one. The schema
 * (schema.ts) carries them, so a file over a limit is refused with its
 * field before anything runs.
 */
import { MAX_CONDITION_BOUND } from '../wire/sim/conditions.js';

/** The size of a scenario file, checked before it is read or parsed. */
export const MAX_SCENARIO_BYTES = 1024 * 1024;

/** YAML aliases: the uses of an anchor times the aliases inside it (the `yaml` package's default). */
export const MAX_ALIAS_COUNT = 100;

/** Every duration (the run's, an entry's `at`, intervals and timeouts): 30 days of cluster time. */
export const MAX_DURATION_MS = 30 * 86_400_000;

/** Agents in all, over the groups of `cluster.agents` (a group's `count` too). */
export const MAX_AGENTS = 10_000;

/** Groups of agents in `cluster.agents`. */
export const MAX_AGENT_GROUPS = 100;

/** Scripted frameworks, and bundled ones (`services`). */
export const MAX_FRAMEWORKS = 100;
export const MAX_SERVICES = 10;

/** A framework's `tasks.keep_running`, and its `tasks.total`. */
export const MAX_KEEP_RUNNING = 10_000;
export const MAX_TASKS_TOTAL = 1_000_000;

/** A task's resources: cpus, and mem and disk in MiB. */
export const MAX_TASK_CPUS = 1024;
export const MAX_TASK_MIB = 1024 * 1024 * 1024;

/** A quota limit of a role, in its resource's unit. */
export const MAX_QUOTA = 1e12;

/** Timeline entries, expectations, quota entries, and the events of one `events` sequence. */
export const MAX_TIMELINE = 10_000;
export const MAX_EXPECT = 1_000;
export const MAX_QUOTA_ENTRIES = 100;
export const MAX_SEQUENCE = 1_000;

/** The bounds of a condition or an expectation (`count`, `min`, `max`): the control API's. */
export const MAX_BOUND = MAX_CONDITION_BOUND;
