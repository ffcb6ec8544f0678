/**
 * `/frameworks` and the framework entries of `/state`.
 */
import { add } from '../../core/resources.js';
import type { Task } from '../../core/master/framework.js';
import type { AttributeConstraint, OfferConstraints } from '../../core/types.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { executorSpecOf } from './executors.js';
import { Double } from './legacy-json.js';
import { executorObject, offerObject, taskObject } from './objects.js';
import { labelsJson, resourcesSummary, secondsOf, type JsonObject } from './summary.js';

export interface FrameworksQuery {
  readonly framework_id?: string;
}

/** `framework_id` narrows both lists; an unknown id gives empty ones. */
export function renderFrameworks(view: ClusterView, query: FrameworksQuery): JsonObject {
  const wanted = (fw: FrameworkView) => query.framework_id === undefined || fw.id === query.framework_id;
  const render = (fw: FrameworkView) => frameworkObject(view, fw);
  return {
    frameworks: [...view.frameworks()].filter(wanted).map(render),
    completed_frameworks: view.completedFrameworks().filter(wanted).map(render),
    unregistered_frameworks: [],
  };
}

/**
 * One framework. Subscribed means active and connected; a disconnected
 * framework waiting out its failover timeout and a removed one are
 * neither. Nothing is ever recovered from a registry here.
 */
export function frameworkObject(view: ClusterView, fw: FrameworkView): JsonObject {
  const { info } = fw;
  const { used, offered } = view.frameworkBooks(fw.id);
  const subscribed = fw.state === 'subscribed';
  return {
    id: fw.id,
    name: info.name,
    used_resources: resourcesSummary(used),
    offered_resources: resourcesSummary(offered),
    capabilities: [...info.capabilities],
    hostname: info.hostname ?? '',
    webui_url: info.webuiUrl ?? '',
    active: subscribed,
    connected: subscribed,
    recovered: false,
    user: info.user,
    failover_timeout: secondsOf(info.failoverTimeoutMs),
    checkpoint: info.checkpoint,
    registered_time: secondsOf(fw.registeredTimeMs),
    unregistered_time: fw.unregisteredTimeMs === undefined ? new Double(0) : secondsOf(fw.unregisteredTimeMs),
    ...(info.principal === undefined ? {} : { principal: info.principal }),
    resources: resourcesSummary(add(used, offered)),
    ...(fw.reregisteredTimeMs === undefined ? {} : { reregistered_time: secondsOf(fw.reregisteredTimeMs) }),
    ...(fw.has('MULTI_ROLE') ? { roles: [...info.roles] } : { role: info.role ?? '*' }),
    ...taskLists(fw),
    offers: [...fw.offers.values()].map(offerObject),
    executors: [...fw.executors.values()].map((e) => executorObject(fw, e, executorSpecOf(fw, e))),
    ...(info.labels.length === 0 ? {} : { labels: labelsJson(info.labels) }),
    offer_constraints: offerConstraintsJson(fw.constraints),
  };
}

/** Unreachable tasks stay among the master's live tasks but are listed apart. */
function taskLists(fw: FrameworkView): JsonObject {
  const live = [...fw.tasks.values()];
  const render = (task: Task) => taskObject(task, fw.info.user);
  return {
    tasks: live.filter((t) => t.state !== 'TASK_UNREACHABLE').map(render),
    unreachable_tasks: live.filter((t) => t.state === 'TASK_UNREACHABLE').map(render),
    completed_tasks: fw.completedTasks.map(render),
  };
}

/** The OfferConstraints message in protobuf JSON; `{}` when the framework set none. */
export function offerConstraintsJson(constraints: OfferConstraints | undefined): JsonObject {
  const roles = Object.entries(constraints ?? {});
  if (roles.length === 0) return {};
  const roleConstraints: JsonObject = {};
  for (const [role, groups] of roles) {
    const rendered = groups.map(
      (group): JsonObject => (group.length === 0 ? {} : { attribute_constraints: group.map(attributeConstraintJson) }),
    );
    roleConstraints[role] = rendered.length === 0 ? {} : { groups: rendered };
  }
  return { role_constraints: roleConstraints };
}

function attributeConstraintJson(c: AttributeConstraint): JsonObject {
  const selector: JsonObject =
    'attributeName' in c.selector ? { attribute_name: c.selector.attributeName } : { pseudoattribute_type: c.selector.pseudo };
  const p = c.predicate;
  let predicate: JsonObject;
  switch (p.kind) {
    case 'exists':
    case 'not_exists':
      predicate = { [p.kind]: {} };
      break;
    case 'text_equals':
    case 'text_not_equals':
      predicate = { [p.kind]: { value: p.value } };
      break;
    case 'text_matches':
    case 'text_not_matches':
      predicate = { [p.kind]: { regex: p.regex } };
      break;
  }
  return { selector, predicate };
}
