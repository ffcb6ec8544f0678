/**
 * The protocol-misuse report as the control API's JSON (`GET /sim/v1/misuse`):
 * frameworks by id, kinds in the report's fixed order; cluster times in ms
 * since the cluster started; an example names only the ids that apply.
 */
import type { MisuseIds, MisuseReport } from '../../core/master/misuse-report.js';

export function misuseToJson(report: MisuseReport): object {
  return {
    time_ms: report.timeMs,
    frameworks: report.frameworks.map((fw) => ({
      framework_id: fw.frameworkId,
      ...(fw.name === undefined ? {} : { name: fw.name }),
      misuses: fw.misuses.map((m) => ({
        kind: m.kind,
        count: m.count,
        first_time_ms: m.firstTimeMs,
        last_time_ms: m.lastTimeMs,
        explanation: m.explanation,
        examples: m.examples.map((e) => ({ time_ms: e.timeMs, ids: idsToJson(e.ids), detail: e.detail })),
      })),
    })),
  };
}

function idsToJson(ids: MisuseIds): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.taskId !== undefined) out['task_id'] = ids.taskId;
  if (ids.agentId !== undefined) out['agent_id'] = ids.agentId;
  if (ids.offerId !== undefined) out['offer_id'] = ids.offerId;
  if (ids.uuid !== undefined) out['uuid'] = ids.uuid;
  if (ids.streamId !== undefined) out['stream_id'] = ids.streamId;
  return out;
}
