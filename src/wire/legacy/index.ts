/** Renderers of the legacy read-only master endpoints, as plain JSON-able objects. */
export { renderFrameworks, type FrameworksQuery } from './frameworks.js';
export { renderSlaves, type SlavesQuery } from './slaves.js';
export { renderState, type StateClock } from './state.js';
export { attributesObject, resourceJson, resourcesSummary, type Json, type JsonObject } from './summary.js';
export { renderTasks, type TasksQuery } from './tasks.js';
export { renderVersion } from './version.js';
export { renderRoles } from './roles.js';
