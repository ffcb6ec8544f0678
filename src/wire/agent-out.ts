/**
 * Agent operator responses from the agent's own state in the read model,
 * and their encodings. The flags are those this agent honours, under their
 * upstream names and in their upstream text form, sorted by name.
 */
import type { AgentNodeView, ClusterView } from '../core/view.js';
import type { AgentReadCall } from './agent-in.js';
import { containerViewer } from './container-acls.js';
import { viewerOf } from './view-filter.js';
import {
  agentGetAgent,
  agentGetContainers,
  agentGetExecutors,
  agentGetFrameworks,
  agentGetState,
  agentGetTasks,
} from './agent-state.js';
import type { mesos } from './generated/types.js';
import { encodeJson } from './json-encode.js';
import { agentFlags } from './v0/agent-state.js';
import { LOGGING_LEVEL, metricsToWire } from './operator-out.js';
import { renderAgentMetrics } from './v0/agent-metrics.js';
import { encodeProto } from './proto-codec.js';
import { BUILD_INFO, VERSION } from './version.js';

type Response = mesos.v1.agent.Response;

/** The answer to a read call of the agent operator API. */
export function agentReadResponse(
  view: ClusterView,
  node: AgentNodeView,
  type: AgentReadCall,
  principal?: string,
): Response {
  const viewer = viewerOf(view.authorizer, principal);
  switch (type) {
    case 'GET_HEALTH':
      return { type, get_health: { healthy: true } };
    case 'GET_FLAGS':
      return {
        type,
        get_flags: { flags: Object.entries(agentFlags(view, node)).map(([name, value]) => ({ name, value })) },
      };
    case 'GET_VERSION':
      return {
        type,
        get_version: {
          version_info: {
            version: VERSION,
            build_date: BUILD_INFO.buildDate,
            build_time: BUILD_INFO.buildTimeSeconds,
            build_user: BUILD_INFO.buildUser,
          },
        },
      };
    case 'GET_LOGGING_LEVEL':
      return { type, get_logging_level: { level: LOGGING_LEVEL } };
    case 'GET_STATE':
      return { type, get_state: agentGetState(node, viewer) };
    case 'GET_CONTAINERS': {
      const visible = containerViewer(view, node, principal);
      const { containers = [] } = agentGetContainers(node, view.wallTimeMs() / 1000);
      return { type, get_containers: { containers: containers.filter((c) => visible(c.container_id.value)) } };
    }
    case 'GET_FRAMEWORKS':
      return { type, get_frameworks: agentGetFrameworks(node, viewer) };
    case 'GET_EXECUTORS':
      return { type, get_executors: agentGetExecutors(node, viewer) };
    case 'GET_TASKS':
      return { type, get_tasks: agentGetTasks(node, viewer) };
    case 'GET_AGENT':
      return { type, get_agent: agentGetAgent(node) };
    // Its snapshot at once: the call's timeout bounds a wait this agent never has.
    case 'GET_METRICS':
      return { type, get_metrics: metricsToWire(renderAgentMetrics(view, node)) };
    case 'GET_RESOURCE_PROVIDERS':
      // This agent has no resource providers.
      return { type, get_resource_providers: {} };
  }
}

export const encodeAgentResponseJson = (response: Response): string => encodeJson('mesos.v1.agent.Response', response);
export const encodeAgentResponseProto = (response: Response): Uint8Array =>
  encodeProto('mesos.v1.agent.Response', response);
