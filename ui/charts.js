// The dashboard's two charts over cluster time: the agents' resources
// (allocated, offered and free, stacked to the total) and the tasks the
// master knows by state. Each read of the cluster adds a sample to a ring
// kept in the page (no history is kept by the server); the charts are
// inline SVG drawn here, with no library and nothing loaded from elsewhere.
// Values hold from one sample to the next, so the lines are steps: between
// two reads the page knows nothing, and a step claims no more than that.
import { amount, h, seconds } from './format.js';

/** Samples kept: the oldest drops off when a new one comes (about 20 minutes of polling every 2 s). */
export const MAX_SAMPLES = 600;

const SCALARS = ['cpus', 'mem', 'disk', 'gpus'];
const RESOURCE_SERIES = ['allocated', 'offered', 'free'];
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 180;
const PAD = { left: 56, right: 8, top: 8, bottom: 22 };

/**
 * One sample of a read: at its cluster time, per scalar the registered
 * agents' allocated (used by tasks and executors), offered and free
 * amounts, and the count of tasks in each state.
 */
export function sampleOf(model) {
  const res = {};
  for (const name of SCALARS) res[name] = { allocated: 0, offered: 0, free: 0 };
  for (const agent of model.agents.values()) {
    for (const name of SCALARS) {
      const total = agent.resources?.[name] ?? 0;
      const allocated = agent.used_resources?.[name] ?? 0;
      const offered = agent.offered_resources?.[name] ?? 0;
      res[name].allocated += allocated;
      res[name].offered += offered;
      res[name].free += Math.max(0, total - allocated - offered);
    }
  }
  const tasks = {};
  for (const fw of model.frameworks.values()) {
    for (const task of [...(fw.tasks ?? []), ...(fw.unreachable_tasks ?? []), ...(fw.completed_tasks ?? [])]) {
      tasks[task.state] = (tasks[task.state] ?? 0) + 1;
    }
  }
  return { timeMs: model.clock.time_ms, res, tasks };
}

/** The bounded ring of samples; a read at the same cluster time as the last one replaces it. */
export class History {
  /** @type {any[]} */
  samples = [];

  add(sample) {
    const last = this.samples.at(-1);
    if (last !== undefined && sample.timeMs < last.timeMs) this.samples = [];
    if (last !== undefined && last.timeMs === sample.timeMs) this.samples[this.samples.length - 1] = sample;
    else this.samples.push(sample);
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
  }
}

/** An SVG element with attributes (presentation attributes only: the page's policy forbids style attributes). */
function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  el.append(...children);
  return el;
}

/** The scales of a chart: cluster time across, 0 to `top` up. */
function scales(samples, top) {
  const t0 = samples[0].timeMs;
  const span = Math.max(1, samples.at(-1).timeMs - t0);
  const w = WIDTH - PAD.left - PAD.right;
  const hgt = HEIGHT - PAD.top - PAD.bottom;
  return {
    x: (t) => PAD.left + ((t - t0) / span) * w,
    y: (v) => PAD.top + hgt - (top > 0 ? (v / top) * hgt : 0),
  };
}

/** A step line through `values` (one per sample), held to the chart's right edge. */
function stepPoints(samples, values, { x, y }) {
  const points = [];
  samples.forEach((s, i) => {
    if (i > 0) points.push([x(s.timeMs), y(values[i - 1])]);
    points.push([x(s.timeMs), y(values[i])]);
  });
  if (samples.length === 1) points.push([WIDTH - PAD.right, y(values[0])]);
  return points;
}

const pathOf = (points) =>
  points.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`).join('');

/** The frame of a chart: its axes' labels (the top value, the first and last cluster times). */
function frame(samples, topLabel) {
  const bottom = HEIGHT - PAD.bottom;
  return [
    svg('line', { class: 'axis', x1: PAD.left, y1: bottom, x2: WIDTH - PAD.right, y2: bottom }),
    svg('line', { class: 'axis', x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: bottom }),
    svg('line', { class: 'grid', x1: PAD.left, y1: PAD.top, x2: WIDTH - PAD.right, y2: PAD.top }),
    svg('text', { class: 'tick', x: PAD.left - 4, y: PAD.top + 10, 'text-anchor': 'end' }, topLabel),
    svg('text', { class: 'tick', x: PAD.left - 4, y: bottom, 'text-anchor': 'end' }, '0'),
    svg('text', { class: 'tick', x: PAD.left, y: HEIGHT - 4 }, seconds(samples[0].timeMs)),
    svg(
      'text',
      { class: 'tick', x: (PAD.left + WIDTH - PAD.right) / 2, y: HEIGHT - 4, 'text-anchor': 'middle' },
      seconds(Math.round((samples[0].timeMs + samples.at(-1).timeMs) / 2)),
    ),
    svg(
      'text',
      { class: 'tick', x: WIDTH - PAD.right, y: HEIGHT - 4, 'text-anchor': 'end' },
      seconds(samples.at(-1).timeMs),
    ),
  ];
}

/** Allocated, offered and free of one scalar, stacked: each band an area between two step lines. */
export function resourceChart(samples, name) {
  const values = samples.map((s) => s.res[name]);
  const top = Math.max(0, ...values.map((v) => v.allocated + v.offered + v.free));
  const sc = scales(samples, top);
  const bands = [];
  let below = samples.map(() => 0);
  for (const series of RESOURCE_SERIES) {
    const above = below.map((b, i) => b + values[i][series]);
    const upper = stepPoints(samples, above, sc);
    const lower = stepPoints(samples, below, sc).reverse();
    const area = svg('path', { class: `area series-${series}`, d: `${pathOf(upper)}L${pathOf(lower).slice(1)}Z` });
    area.append(svg('title', {}, series));
    bands.push(area);
    below = above;
  }
  return chartSvg(samples, `${name} over cluster time`, frame(samples, amount(name, top)), bands);
}

/** The states any sample has a task in, in the order they first appear. */
const statesOf = (samples) => [...new Set(samples.flatMap((s) => Object.keys(s.tasks)))];

/** One step line per task state: how many tasks the master knows in it. */
export function tasksChart(samples) {
  const states = statesOf(samples);
  const top = Math.max(1, ...samples.flatMap((s) => Object.values(s.tasks)));
  const sc = scales(samples, top);
  const lines = states.map((state) => {
    const line = svg('path', {
      class: `line state-${state.replace(/^TASK_/, '').toLowerCase()}`,
      'data-state': state,
      d: pathOf(
        stepPoints(
          samples,
          samples.map((s) => s.tasks[state] ?? 0),
          sc,
        ),
      ),
    });
    line.append(svg('title', {}, state));
    return line;
  });
  return chartSvg(samples, 'tasks by state over cluster time', frame(samples, String(top)), lines);
}

function chartSvg(samples, label, axes, series) {
  return svg(
    'svg',
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': label, 'data-samples': samples.length },
    ...series,
    ...axes,
  );
}

/** A legend: a swatch of each series' class and its name. */
function legend(entries) {
  return h(
    'ul',
    { class: 'legend' },
    ...entries.map(([cls, text]) => h('li', {}, h('span', { class: `swatch ${cls}` }), text)),
  );
}

/**
 * The charts panel: the resources chart (of the scalar chosen) and the
 * tasks chart, drawn again from the history on each read.
 */
export class ChartsPanel extends HTMLElement {
  history = new History();

  connectedCallback() {
    if (this.resources !== undefined) return;
    this.scalar = h(
      'select',
      { name: 'resource', 'aria-label': 'Resource charted' },
      ...SCALARS.map((name) => h('option', { value: name }, name)),
    );
    this.scalar.addEventListener('change', () => this.#draw());
    this.resources = h('figure', { class: 'chart resources-chart' });
    this.tasks = h('figure', { class: 'chart tasks-chart' });
    this.append(
      h('section', {}, h('h2', {}, 'Resources over time ', this.scalar), this.resources),
      h('section', {}, h('h2', {}, 'Tasks by state over time'), this.tasks),
    );
  }

  update(model) {
    this.history.add(sampleOf(model));
    this.#draw();
  }

  /** A reset or a restore: the cluster's time starts again, and so do the charts. */
  clear() {
    this.history = new History();
  }

  #draw() {
    const { samples } = this.history;
    if (samples.length === 0) return;
    const name = this.scalar.value;
    this.resources.replaceChildren(
      resourceChart(samples, name),
      legend(RESOURCE_SERIES.map((series) => [`series-${series}`, series])),
    );
    const states = statesOf(samples);
    this.tasks.replaceChildren(
      tasksChart(samples),
      states.length === 0
        ? h('p', { class: 'empty' }, 'No task yet.')
        : legend(states.map((state) => [`state-${state.replace(/^TASK_/, '').toLowerCase()}`, state])),
    );
  }
}
