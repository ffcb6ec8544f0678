/** The library API of clustersim. */
export { startCluster, DEFAULT_AGENT_RESOURCES } from './start/cluster.js';
export { StartError } from './start/errors.js';
export type { StartClusterOptions, RunningCluster, AgentEndpoint, AddAgentOptions } from './start/cluster.js';
export type { TimeMode, ClusterDriver } from './runtime/driver.js';
export { ClusterFailure } from './runtime/driver.js';
export { Cluster } from './core/cluster.js';
export type { ClusterOptions } from './core/cluster.js';
export type {
  MisuseReport,
  MisuseKind,
  MisuseEntry,
  MisuseExample,
  FrameworkMisuse,
} from './core/master/misuse-report.js';
export { formatMisuse } from './core/master/misuse-report.js';
export type { AuthFileSource, CredentialsJson } from './runtime/auth-files.js';
export type { CgroupsVersion } from './core/agent/flags.js';
export type { ContainerMemoryView } from './core/agent/cgroups.js';
export { replay, parseTraceLine, ReplayError } from './scenario/replay.js';
export type { ReplayResult, Divergence, TraceLine } from './scenario/replay.js';
export { parseCondition } from './wire/sim/conditions.js';
export type { ConditionJson } from './wire/sim/conditions.js';
export type { Condition } from './core/conditions.js';
export { SimControlError } from './runtime/sim-control.js';
export type { Snapshot } from './runtime/sim-control.js';
export { runScenarioFile } from './start/scenario.js';
export { shippedScenariosDir, scenarioSchemaPath } from './scenario/shipped.js';
export { loadScenario, parseScenario, ScenarioError } from './scenario/load.js';
export { RunError } from './scenario/runner.js';
export type { RunResult, RunOptions } from './scenario/runner.js';
export type { Scenario } from './scenario/scenario.js';
export { htmlReport } from './scenario/html-report.js';
export type { HtmlReportOptions } from './scenario/html-report.js';
export { TimelineRecorder } from './scenario/report-timeline.js';
export type { ReportTimeline } from './scenario/report-timeline.js';
export { startWorkflowService } from './frameworks/workflow/service.js';
export type { WorkflowService, WorkflowServiceOptions } from './frameworks/workflow/service.js';
export { parseWorkflowConfig, loadWorkflowConfig } from './frameworks/workflow/config.js';
export { startOrchestrator } from './frameworks/orchestrator/service.js';
export type { OrchestratorService } from './frameworks/orchestrator/service.js';
export { loadConfig as loadOrchestratorConfig } from './frameworks/orchestrator/config.js';
export type { ControlMethods, RunUntilTest, RunUntilOptions } from './start/control.js';
export type { ClusterView, FrameworkView, AgentView } from './core/view.js';
export type { OptionName } from './start/options.js';
// The typed clients and protocol types, also at `clustersim/client`.
export {
  SchedulerClient,
  ExecutorClient,
  OperatorClient,
  CallError,
  StreamClosedError,
  taskInfoFrom,
} from './client/index.js';
export type {
  ClientOptions,
  Encoding,
  TaskSpec,
  SchedulerEvent,
  SchedulerEventOf,
  SchedulerEventType,
  SchedulerCall,
  ExecutorEvent,
  ExecutorEventOf,
  OperatorEvent,
  OperatorEventOf,
  OperatorResponse,
  OperatorResponseOf,
  Offer,
  TaskInfo,
  TaskStatus,
  TaskState,
  FrameworkInfo,
  Resource,
} from './client/index.js';
