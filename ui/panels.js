// The dashboard's tables, each a custom element with `update(model)`:
// agents, frameworks, roles and quota, outstanding offers, tasks. A table is
// described by its columns; rows are drawn again from the model on each
// update (the cluster is small enough, and nothing is kept that could go
// stale).
import { agentBadge, h, idCell, resources, seconds, clusterMs, stateBadge, usage, usageBar } from './format.js';

/** At most this many task rows are drawn (the most recent first). */
const MAX_TASK_ROWS = 300;

/**
 * @typedef {{title: string, empty: string, columns: [string, (row: any, model: any) => Node | string][], rows: (model: any) => any[], key: (row: any) => string}} TableSpec
 */

export class TablePanel extends HTMLElement {
  /** @type {TableSpec} */
  static spec;

  /** @returns {TableSpec} */
  get spec() {
    return /** @type {typeof TablePanel} */ (this.constructor).spec;
  }

  connectedCallback() {
    if (this.body !== undefined) return;
    const { title, columns } = this.spec;
    this.count = h('span', { class: 'count' });
    this.body = h('tbody');
    this.table = h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...columns.map(([label]) => h('th', {}, label)))),
      this.body,
    );
    this.empty = h('p', { class: 'empty' });
    this.append(h('section', {}, h('h2', {}, title, ' ', this.count), this.table, this.empty));
  }

  update(model) {
    const { columns, rows, key, empty } = this.spec;
    const list = rows(model);
    this.count.textContent = `(${list.length})`;
    this.body.replaceChildren(
      ...list.map((row) =>
        h(
          'tr',
          { 'data-key': key(row) },
          ...columns.map(([label, cell]) => h('td', { 'data-column': label }, cell(row, model))),
        ),
      ),
    );
    this.table.hidden = list.length === 0;
    this.empty.hidden = list.length > 0;
    this.empty.textContent = empty;
  }
}

/** @param {TableSpec} spec */
function panel(spec) {
  return class extends TablePanel {
    static spec = spec;
  };
}

const frameworkName = (model, id) => model.frameworks.get(id)?.name ?? id;
const agentName = (model, id) => {
  const agent = model.agents.get(id);
  return agent === undefined ? idCell(id) : h('span', { title: id }, `${agent.hostname}:${agent.port}`);
};

/**
 * Every agent the master books, in its order: the registered ones as
 * `/master/state` has them, the unreachable and gone ones as the control
 * API names them (no resources: the master books none for them).
 */
function agentRows(model) {
  const booked = model.allAgents.length > 0 ? model.allAgents : [...model.agents.values()];
  return booked.map((entry) => {
    const registered = model.agents.get(entry.id);
    return registered === undefined ? { ...entry, resources: undefined } : { ...registered, state: entry.state };
  });
}

/** An agent's state as the master books it, a drained or deactivated one said so. */
function agentState(agent) {
  if (agent.deactivated) return 'deactivated';
  return agent.state ?? (agent.active ? 'active' : 'disconnected');
}

export const AgentsPanel = panel({
  title: 'Agents',
  empty: 'No agent has registered.',
  key: (agent) => agent.id,
  rows: agentRows,
  columns: [
    ['Agent', (agent) => idCell(agent.id)],
    ['Address', (agent) => `${agent.hostname}:${agent.port}`],
    // disconnected: the agent's connection is down (the master waits for it to come back or be unreachable).
    ['Status', (agent) => agentBadge(agentState(agent))],
    [
      'Resources: used, offered, free',
      (agent) => (agent.resources === undefined ? '—' : h('div', { class: 'usages' }, ...usage(agent).map(usageBar))),
    ],
    ['Ports', (agent) => agent.resources?.ports ?? '—'],
  ],
});

export const FrameworksPanel = panel({
  title: 'Frameworks',
  empty: 'No framework has subscribed.',
  key: (fw) => fw.id,
  rows: (model) => [...model.frameworks.values()],
  columns: [
    ['Framework', (fw) => idCell(fw.id)],
    ['Name', (fw) => fw.name],
    ['Roles', (fw) => (fw.roles ?? [fw.role]).filter(Boolean).join(', ')],
    [
      'Status',
      (fw) => (fw.completed ? 'removed' : fw.connected ? (fw.active ? 'connected' : 'inactive') : 'disconnected'),
    ],
    ['Tasks', (fw) => `${(fw.tasks ?? []).length} active, ${(fw.completed_tasks ?? []).length} ended`],
    ['Used', (fw) => resources(fw.used_resources)],
    ['Offered', (fw) => resources(fw.offered_resources)],
  ],
});

const quotaPart = (role, part) => resources(role.quota?.[part]);

export const RolesPanel = panel({
  title: 'Roles and quota',
  empty: 'No role has frameworks, reservations or quota.',
  key: (role) => role.name,
  rows: (model) => model.roles,
  columns: [
    ['Role', (role) => role.name],
    ['Weight', (role) => String(role.weight ?? 1)],
    ['Allocated', (role) => resources(role.allocated)],
    ['Offered', (role) => resources(role.offered)],
    ['Reserved', (role) => resources(role.reserved)],
    ['Quota guarantee', (role) => quotaPart(role, 'guarantee')],
    ['Quota limit', (role) => quotaPart(role, 'limit')],
    ['Quota consumed', (role) => quotaPart(role, 'consumed')],
    ['Frameworks', (role) => String((role.frameworks ?? []).length)],
  ],
});

export const OffersPanel = panel({
  title: 'Outstanding offers',
  empty: 'No offer is outstanding.',
  key: (offer) => offer.id,
  rows: (model) => [...model.frameworks.values()].flatMap((fw) => fw.offers ?? []),
  columns: [
    ['Offer', (offer) => idCell(offer.id)],
    ['Framework', (offer, model) => frameworkName(model, offer.framework_id)],
    ['Agent', (offer, model) => agentName(model, offer.slave_id)],
    ['Role', (offer) => offer.allocation_info?.role ?? ''],
    ['Resources', (offer) => resources(offer.resources)],
  ],
});

/** A task's statuses, oldest first, each with its cluster time. */
function history(task, model) {
  return h(
    'ol',
    { class: 'history' },
    ...(task.statuses ?? []).map((status) =>
      h('li', {}, stateBadge(status.state), ' ', h('time', {}, seconds(clusterMs(status.timestamp, model.epochMs)))),
    ),
  );
}

/** Why a task is where it is: its latest status's message, reason and source (the operator API's). */
function why(task, model) {
  const status = model.lastStatus.get(`${task.framework_id}/${task.id}`);
  if (status === undefined) return '';
  return h(
    'div',
    { class: 'why' },
    status.message && h('span', { class: 'status-message' }, status.message),
    status.reason && h('span', { class: 'status-reason' }, status.reason),
    status.source && h('span', { class: 'status-source' }, status.source),
  );
}

const lastTimestamp = (task) => task.statuses?.at(-1)?.timestamp ?? 0;

export const TasksPanel = panel({
  title: 'Tasks',
  empty: 'No task has been launched.',
  key: (task) => `${task.framework_id}/${task.id}`,
  rows: (model) =>
    [...model.frameworks.values()]
      .flatMap((fw) => [...(fw.tasks ?? []), ...(fw.unreachable_tasks ?? []), ...(fw.completed_tasks ?? [])])
      .sort((a, b) => lastTimestamp(b) - lastTimestamp(a) || a.id.localeCompare(b.id))
      .slice(0, MAX_TASK_ROWS),
  columns: [
    ['Task', (task) => h('span', { class: 'task-id' }, task.id)],
    ['Name', (task) => task.name],
    ['Framework', (task, model) => frameworkName(model, task.framework_id)],
    ['Agent', (task, model) => agentName(model, task.slave_id)],
    ['State', (task) => stateBadge(task.state)],
    ['Last status', why],
    ['History', history],
    ['Resources', (task) => resources(task.resources)],
  ],
});
