/** The library API of clustersim. */
export { startCluster, StartError, DEFAULT_AGENT_RESOURCES } from './start.js';
export type { StartClusterOptions, RunningCluster, AgentEndpoint } from './start.js';
export type { TimeMode, ClusterDriver } from './runtime/driver.js';
export { ClusterFailure } from './runtime/driver.js';
export { Cluster } from './core/cluster.js';
export type { ClusterOptions } from './core/cluster.js';
export type { MisuseReport, MisuseKind, MisuseEntry, MisuseExample, FrameworkMisuse } from './core/master/misuse-report.js';
export { formatMisuse } from './core/master/misuse-report.js';
export type { AuthFileSource, CredentialsJson } from './runtime/auth-files.js';
export type { CgroupsVersion } from './core/agent/flags.js';
export type { ContainerMemoryView } from './core/agent/cgroups.js';
export { replay, parseTraceLine, ReplayError } from './scenario/replay.js';
export type { ReplayResult, Divergence, TraceLine } from './scenario/replay.js';
export { parseCondition } from './core/conditions.js';
export type { Condition } from './core/conditions.js';
export { SimControlError } from './runtime/sim-control.js';
export type { Snapshot } from './runtime/sim-control.js';
