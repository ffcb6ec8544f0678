/** What a run's expectations read of the cluster, its frameworks and their processes (expect.ts's Evidence). */
import type { ClusterDriver } from '../runtime/driver.js';
import { Double } from '../wire/v0/json.js';
import { renderMetrics } from '../wire/v0/metrics.js';
import type { Evidence, ProcessState } from './expect.js';
import type { ScriptedFramework } from './framework.js';
import { observed, type RunRecord } from './observe.js';

/** The parts of a run the evidence reads. */
export interface EvidenceSources {
  readonly driver: ClusterDriver;
  readonly record: RunRecord;
  idOf(name: string): string | undefined;
  /** A scripted or external framework's losses and subscriptions, in cluster time. */
  subscriptions(name: string): Pick<ScriptedFramework, 'lostAt' | 'subscribedAt'> | undefined;
  process(name: string): ProcessState | undefined;
}

export function evidenceOf(run: EvidenceSources): Evidence {
  const base = observed(run.driver, run.record, (name) => run.idOf(name));
  const misuses = (name: string | undefined, kind: string | undefined): { kind: string; count: number }[] => {
    const id = name === undefined ? undefined : run.idOf(name);
    if (name !== undefined && id === undefined) return [];
    const report = run.driver.read((view) => view.misuse());
    return report.frameworks
      .filter((f) => id === undefined || f.frameworkId === id)
      .flatMap((f) => f.misuses)
      .filter((m) => kind === undefined || m.kind === kind);
  };
  return {
    ...base,
    sequence: (name, expected) => run.record.sequence(run.idOf(name), expected),
    subscriptions: (name) => ({
      lost: run.subscriptions(name)?.lostAt ?? [],
      subscribed: run.subscriptions(name)?.subscribedAt ?? [],
    }),
    metric: (name) => {
      const value = run.driver.read((view) => renderMetrics(view))[name];
      return value instanceof Double ? value.value : typeof value === 'number' ? value : undefined;
    },
    misuses: (name, kind) => misuses(name, kind).reduce((n, m) => n + m.count, 0),
    misuseKinds: (name, kind) => misuses(name, kind).map((m) => `${m.kind} ×${m.count}`),
    process: (name) => run.process(name),
    invariants: () => {
      try {
        run.driver.cluster.checkAllInvariants();
        return undefined;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
  };
}
