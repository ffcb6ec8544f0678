/**
 * Renderers of the legacy read-only master endpoints, as JSON-able objects
 * whose doubles are wrapped in `Double`; `toLegacyJson` writes their text.
 */
export { renderFrameworks, type FrameworksQuery } from './frameworks.js';
export { renderSlaves, type SlavesQuery } from './slaves.js';
export { renderFlags, renderState, type StateClock } from './state.js';
export { attributesObject, resourceJson, resourcesSummary, type Json, type JsonObject } from './summary.js';
export { renderTasks, type TasksQuery } from './tasks.js';
export { renderVersion } from './version.js';
export { renderRoles } from './roles.js';
export { Double, toLegacyJson } from './legacy-json.js';
export { renderMetrics } from './metrics.js';
export { renderStateSummary } from './state-summary.js';
export {
  containerQuery,
  decodeQuery,
  frameworksQuery,
  jsonpQuery,
  slavesQuery,
  tasksQuery,
  type JsonpQuery,
  type QueryParams,
  type QueryResult,
} from './query.js';
