/**
 * `/frameworks` and the framework entries of `/state`.
 */
import { add } from '../../core/model/resources.js';
import type { Task } from '../../core/model/records.js';
import type { AttributeConstraint, OfferConstraints } from '../../core/model/types.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { executorSpecs } from './executors.js';
import { Double } from './json.js';
import { executorObject, offerObject, taskObject } from './objects.js';
import { labelsJson, resourcesSummary, secondsOf, type JsonObject } from './summary.js';

export interface FrameworksQuery {
  readonly framework_id?: string;
}

/**
 * `framework_id` narrows both lists; an unknown id gives empty ones. So do
 * the ACLs: a framework the reader may not view is left out.
 */
export function renderFrameworks(view: ClusterView, query: FrameworksQuery, viewer: Viewer = SHOW_ALL): JsonObject {
  const wanted = (fw: FrameworkView) =>
    (query.framework_id === undefined || fw.id === query.framework_id) && viewer.framework(fw.info.user);
  const render = (fw: FrameworkView) => frameworkObject(view, fw, viewer);
  return {
    frameworks: [...view.frameworks()].filter(wanted).map(render),
    completed_frameworks: view.completedFrameworks().filter(wanted).map(render),
    unregistered_frameworks: [],
  };
}

/**
 * One framework. Subscribed means active and connected; a disconnected
 * framework waiting out its failover timeout and a removed one are
 * neither, and so is one a new leader learnt from its agents after a
 * failover (`recovered`) until it subscribes again. Its tasks and
 * executors are those the reader may view; an executor it may not is an
 * empty object in the list, as upstream writes it.
 */
export function frameworkObject(
  view: ClusterView,
  fw: FrameworkView,
  viewer: Viewer = SHOW_ALL,
  tasks: JsonObject = taskLists(fw, viewer),
): JsonObject {
  const { info } = fw;
  const { used, offered } = view.frameworkBooks(fw.id);
  const subscribed = fw.state === 'subscribed';
  const specOf = executorSpecs(fw);
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
    recovered: fw.recovered,
    user: info.user,
    failover_timeout: secondsOf(info.failoverTimeoutMs),
    checkpoint: info.checkpoint,
    registered_time: secondsOf(fw.registeredTimeMs),
    unregistered_time: fw.unregisteredTimeMs === undefined ? new Double(0) : secondsOf(fw.unregisteredTimeMs),
    ...(info.principal === undefined ? {} : { principal: info.principal }),
    resources: resourcesSummary(add(used, offered)),
    ...(fw.reregisteredTimeMs === undefined ? {} : { reregistered_time: secondsOf(fw.reregisteredTimeMs) }),
    ...(fw.has('MULTI_ROLE') ? { roles: [...info.roles] } : { role: info.role ?? '*' }),
    ...tasks,
    offers: [...fw.offers.values()].map(offerObject),
    executors: [...fw.executors.values()].map((e) => {
      const spec = specOf(e);
      return viewer.executor(spec, info.user) ? executorObject(fw, e, spec) : {};
    }),
    ...(info.labels.length === 0 ? {} : { labels: labelsJson(info.labels) }),
    offer_constraints: offerConstraintsJson(fw.constraints),
  };
}

/** Unreachable tasks stay among the master's live tasks but are listed apart. */
export function taskLists(fw: FrameworkView, viewer: Viewer): JsonObject {
  const { user } = fw.info;
  const seen = (task: Task) => viewer.task(task.spec, user);
  const live = viewer.all ? [...fw.tasks.values()] : [...fw.tasks.values()].filter(seen);
  const completed = viewer.all ? fw.completedTasks : fw.completedTasks.filter(seen);
  const render = (task: Task) => taskObject(task, user);
  return {
    tasks: live.filter((t) => t.state !== 'TASK_UNREACHABLE').map(render),
    unreachable_tasks: live.filter((t) => t.state === 'TASK_UNREACHABLE').map(render),
    completed_tasks: completed.map(render),
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
    'attributeName' in c.selector
      ? { attribute_name: c.selector.attributeName }
      : { pseudoattribute_type: c.selector.pseudo };
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
