/**
 * The option rows of the simulated sandboxes' bounds (option-table.ts
 * groups them with the executors'): one sandbox's, and all of a cluster's
 * together, in MiB, as the event streams' buffers are given.
 */
import { DEFAULT_SANDBOX_BYTES, DEFAULT_SANDBOXES_BYTES } from '../core/process/sandbox.js';
import { MIB as MIB_RULE } from './number-rules.js';
import type { OptionRow } from './option-row.js';

const MIB = 1024 * 1024;

export const sandboxOptions = [
  {
    name: 'sandboxLimitMiB',
    flag: 'sandbox-limit',
    kind: 'number',
    rule: MIB_RULE,
    default: DEFAULT_SANDBOX_BYTES / MIB,
    describe: "MiB one simulated executor's sandbox holds; a write past it keeps what fits (ENOSPC)",
  },
  {
    name: 'sandboxBudgetMiB',
    flag: 'sandbox-budget',
    kind: 'number',
    rule: MIB_RULE,
    default: DEFAULT_SANDBOXES_BYTES / MIB,
    describe: 'MiB all simulated sandboxes of the cluster hold together; a write past it keeps what fits (ENOSPC)',
  },
] as const satisfies readonly OptionRow[];
