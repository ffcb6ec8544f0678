// Small helpers of the dashboard: building DOM nodes (text only, never
// HTML, so no value from the cluster is ever parsed as markup) and
// formatting times, ids and resources.

/**
 * An element with attributes and children; strings become text nodes,
 * null and false are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | boolean | undefined>} [attrs]
 * @param {...(Node | string | number | null | false | undefined)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'object' ? child : String(child));
  }
  return el;
}

/** `1 agent`, `3 agents`. */
export function counted(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Cluster time in seconds with milliseconds: `12.345 s`. */
export function seconds(ms) {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** The cluster time of a status timestamp (Unix seconds), given the cluster's epoch. */
export function clusterMs(timestampSeconds, epochMs) {
  return Math.round(timestampSeconds * 1000 - epochMs);
}

/** The last part of an id (`…-S0`, `…-0000`, `…-O3`): what tells a cluster's ids apart. */
export function shortId(id) {
  const dash = id.lastIndexOf('-');
  return dash > 0 && dash < id.length - 1 ? `…${id.slice(dash)}` : id;
}

/** An element showing a short id, the whole one as its tooltip. */
export function idCell(id) {
  return h('span', { class: 'id', title: id }, shortId(id));
}

const SCALARS = ['cpus', 'gpus', 'mem', 'disk'];
const UNITS = { mem: ' MiB', disk: ' MiB' };

/** A scalar amount with its unit and at most three decimals. */
export function amount(name, value) {
  const rounded = Math.round((value ?? 0) * 1000) / 1000;
  return `${rounded}${UNITS[name] ?? ''}`;
}

/**
 * Resources as `/state` writes them (`{"cpus":1,"mem":128,"ports":"[...]"}`)
 * in one line, zero scalars left out.
 */
export function resources(res) {
  if (res === undefined || res === null) return '';
  const parts = [];
  for (const [name, value] of Object.entries(res)) {
    if (typeof value === 'number') {
      if (value !== 0) parts.push(`${name} ${amount(name, value)}`);
    } else if (typeof value === 'string' && value !== '') {
      parts.push(`${name} ${value}`);
    }
  }
  return parts.length === 0 ? '—' : parts.join(', ');
}

/** The scalar resources of an agent, each split into used, offered and free. */
export function usage(agent) {
  return SCALARS.filter((name) => (agent.resources?.[name] ?? 0) > 0).map((name) => {
    const total = agent.resources[name];
    const used = agent.used_resources?.[name] ?? 0;
    const offered = agent.offered_resources?.[name] ?? 0;
    return { name, total, used, offered, free: Math.max(0, total - used - offered) };
  });
}

/** A bar of used, offered and free with the figures beside it. */
export function usageBar({ name, total, used, offered, free }) {
  const pct = (v) => `${Math.min(100, (v / total) * 100).toFixed(1)}%`;
  return h(
    'div',
    { class: 'usage', 'data-resource': name },
    h('span', { class: 'usage-name' }, name),
    h(
      'span',
      {
        class: 'bar',
        title: `${amount(name, used)} used, ${amount(name, offered)} offered, ${amount(name, free)} free of ${amount(name, total)}`,
      },
      sized(h('span', { class: 'bar-used' }), pct(used)),
      sized(h('span', { class: 'bar-offered' }), pct(offered)),
    ),
    h(
      'span',
      { class: 'usage-figures' },
      `${amount(name, used)} used · ${amount(name, offered)} offered · `,
      h('b', { class: 'free' }, amount(name, free)),
      ` free / ${amount(name, total)}`,
    ),
  );
}

/** Sets a width through the CSSOM: the page's policy forbids style attributes. */
function sized(el, width) {
  el.style.width = width;
  return el;
}

/** A task state as a badge (`TASK_FINISHED` → finished, coloured by outcome). */
export function stateBadge(state) {
  return h('span', { class: `state ${stateClass(state)}`, 'data-state': state }, state);
}

const GOOD = new Set(['TASK_RUNNING', 'TASK_FINISHED']);
const PENDING = new Set(['TASK_STAGING', 'TASK_STARTING', 'TASK_KILLING']);

function stateClass(state) {
  if (GOOD.has(state)) return state === 'TASK_RUNNING' ? 'running' : 'finished';
  return PENDING.has(state) ? 'pending' : 'bad';
}

/** An agent's state as the master books it (`active`, `disconnected`, `unreachable`, `gone`, `deactivated`), coloured. */
export function agentBadge(state) {
  return h('span', { class: `agent-state ${state}`, 'data-state': state }, state);
}
