/** What a leader still expects back from the registry it was built from (recovery.ts). */
import type { AgentDescription } from '../model/messages.js';

export class MasterRecovery {
  /** Admitted agents not re-registered yet (upstream's `slaves.recovered`), in registry order. */
  readonly recovered = new Map<string, AgentDescription>();
  /** Unreachable agents whose tasks this master never learnt: their re-registration tells it. */
  readonly unlearnt = new Set<string>();
  /** Agents of the registry the operator had deactivated, until they are back. */
  readonly deactivated = new Set<string>();
}
