import type { OperationState } from '../model/types.js';
import type { OperationRecord } from '../model/records.js';

const TERMINAL: ReadonlySet<OperationState> = new Set([
  'OPERATION_FINISHED',
  'OPERATION_FAILED',
  'OPERATION_ERROR',
  'OPERATION_DROPPED',
  'OPERATION_GONE_BY_OPERATOR',
]);

export function isTerminalOperation(state: OperationState): boolean {
  return TERMINAL.has(state);
}

/** The master's operation records, by uuid, with each agent's resource version. */
export class OperationStore {
  readonly #byUuid = new Map<string, OperationRecord>();
  readonly #versions = new Map<string, number>();

  add(record: OperationRecord): void {
    this.#byUuid.set(record.uuid, record);
    this.#versions.set(record.agentId, record.version);
  }

  get(uuid: string): OperationRecord | undefined {
    return this.#byUuid.get(uuid);
  }

  /** A framework's operation by the id the framework gave it. */
  find(frameworkId: string, operationId: string): OperationRecord | undefined {
    for (const r of this.#byUuid.values()) if (r.frameworkId === frameworkId && r.info.id === operationId) return r;
    return undefined;
  }

  remove(uuid: string): void {
    this.#byUuid.delete(uuid);
  }

  all(): readonly OperationRecord[] {
    return [...this.#byUuid.values()];
  }

  nextVersion(agentId: string): number {
    return (this.#versions.get(agentId) ?? 0) + 1;
  }
}
