/**
 * Renderers of the v0 read-only master endpoints (`/state`, `/slaves`, `/metrics/snapshot`, …), as JSON-able objects
 * whose doubles are wrapped in `Double`; `toV0Json` writes their text.
 */
export { renderFrameworks, type FrameworksQuery } from './frameworks.js';
export { renderSlaves, type SlavesQuery } from './slaves.js';
export { renderFlags, renderState, renderVersion, type StateClock } from './state.js';
export { attributesObject, resourceJson, resourcesSummary, type Json, type JsonObject } from './summary.js';
export { renderTasks, type TasksQuery } from './tasks.js';
export { renderRoles } from './roles.js';
export { Double, toV0Json } from './json.js';
export { renderMetrics } from './metrics.js';
export { renderStateSummary } from './state-summary.js';
export {
  containerQuery,
  decodeQuery,
  frameworksQuery,
  jsonpQuery,
  metricsQuery,
  slavesQuery,
  tasksQuery,
  type JsonpQuery,
  type QueryParams,
  type QueryResult,
} from './query.js';
