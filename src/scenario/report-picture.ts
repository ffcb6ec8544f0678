/**
 * The HTML report's pictures, plain SVG: the run's timeline (a lane per
 * agent with its tasks as bars coloured by state, the faults as bands, the
 * frameworks' subscriptions and disconnections, the masters' changes, the
 * expectations at their time) and the resources in use over time. Time
 * runs left to right on one scale in both, from 0 to the run's end.
 */
import { formatSpan } from './duration.js';
import type { ExpectationResult } from './expect.js';
import type { FaultBand, Mark, ReportTimeline, TaskBar } from './report-timeline.js';
import { el, title } from './svg.js';

const LABEL_W = 190;
const PLOT_W = 880;
const WIDTH = LABEL_W + PLOT_W + 20;
const AXIS_H = 24;
const MARK_LANE_H = 26;
const ROW_H = 12;
const LANE_GAP = 10;

/** Fill colours of the task states (and of the legend). */
export const STATE_COLOURS: Readonly<Record<string, string>> = {
  TASK_STAGING: '#9ecae1',
  TASK_STARTING: '#6baed6',
  TASK_RUNNING: '#31a354',
  TASK_KILLING: '#fdae6b',
  TASK_UNREACHABLE: '#9e9ac8',
  TASK_FINISHED: '#3182bd',
  TASK_KILLED: '#e6550d',
  TASK_FAILED: '#de2d26',
  TASK_ERROR: '#a50f15',
  TASK_LOST: '#756bb1',
  TASK_DROPPED: '#636363',
  TASK_GONE: '#54278f',
  TASK_GONE_BY_OPERATOR: '#54278f',
  TASK_UNKNOWN: '#969696',
};

export interface Scale {
  readonly endMs: number;
  x(ms: number): number;
}

export function scaleOf(endMs: number): Scale {
  const span = Math.max(endMs, 1);
  return { endMs, x: (ms) => LABEL_W + (Math.min(Math.max(ms, 0), span) / span) * PLOT_W };
}

interface Lane {
  readonly label: string;
  readonly hint: string;
  readonly y: number;
  readonly h: number;
  readonly body: string;
}

/** Short names for the agents: `agent 0` ... in the order they joined. */
export function agentNames(timeline: ReportTimeline): Map<string, string> {
  return new Map(timeline.agents.map((id, i) => [id, `agent ${i}`]));
}

/** The timeline picture. */
export function timelineSvg(timeline: ReportTimeline, results: readonly ExpectationResult[], endMs: number): string {
  const scale = scaleOf(endMs);
  const names = agentNames(timeline);
  const lanes: Lane[] = [];
  let y = AXIS_H;
  const push = (label: string, hint: string, h: number, body: (top: number) => string): void => {
    lanes.push({ label, hint, y, h, body: body(y) });
    y += h + LANE_GAP;
  };
  push('faults', 'the faults of the timeline, as bands while they last', MARK_LANE_H, () => '');
  push('masters', 'master crashes and elections', MARK_LANE_H, (top) =>
    marks(timeline.masterMarks, scale, top, () => '#6a51a3'),
  );
  push('frameworks', 'subscriptions and disconnections', MARK_LANE_H, (top) =>
    marks(frameworkMarks(timeline), scale, top, frameworkColour),
  );
  for (const agentId of timeline.agents) {
    const rows = packRows(timeline.tasks.filter((t) => t.agentId === agentId));
    const h = Math.max(rows.length, 1) * ROW_H + 6;
    push(names.get(agentId)!, agentId, h, (top) => agentLane(timeline, agentId, rows, scale, top, h));
  }
  push('expectations', 'PASS and FAIL at the time each was checked', MARK_LANE_H, (top) =>
    expectationMarks(results, scale, top),
  );
  const height = y + 4;
  const faults = timeline.faults.map((f) => faultBand(f, scale, lanes, height, names)).join('');
  return el(
    'svg',
    { class: 'timeline', width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}` },
    axis(scale, height),
    ...lanes.map(laneFrame),
    faults,
    ...lanes.map((l) => el('g', { class: 'lane-body' }, l.body)),
  );
}

function laneFrame(lane: Lane): string {
  return el(
    'g',
    { class: 'lane', 'data-lane': lane.label },
    el('rect', { x: LABEL_W, y: lane.y, width: PLOT_W, height: lane.h, class: 'lane-bg' }),
    el(
      'text',
      { x: 6, y: lane.y + Math.min(lane.h, MARK_LANE_H) / 2 + 4, class: 'lane-label' },
      lane.label,
      title(lane.hint),
    ),
  );
}

/** Ticks at a round step, about eight over the run. */
function axis(scale: Scale, height: number): string {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400].map(
    (s) => s * 1000,
  );
  const step = steps.find((s) => scale.endMs / s <= 10) ?? Math.ceil(scale.endMs / 10 / 86_400_000) * 86_400_000;
  const ticks: string[] = [];
  for (let t = 0; t <= scale.endMs; t += step) {
    const x = scale.x(t);
    ticks.push(
      el('line', { x1: x, y1: AXIS_H - 4, x2: x, y2: height, class: 'tick' }),
      el('text', { x, y: AXIS_H - 8, class: 'tick-label', 'text-anchor': 'middle' }, t === 0 ? '0' : formatSpan(t)),
    );
  }
  return el('g', { class: 'axis' }, ...ticks);
}

/** Tasks into rows, each bar in the first row free at its start, so a lane is as high as its busiest moment. */
function packRows(bars: readonly TaskBar[]): TaskBar[][] {
  const rows: { endMs: number; bars: TaskBar[] }[] = [];
  for (const bar of bars) {
    const start = bar.segments[0]?.fromMs ?? 0;
    const end = bar.segments.at(-1)?.toMs ?? Infinity;
    const row = rows.find((r) => r.endMs < start);
    if (row === undefined) rows.push({ endMs: end, bars: [bar] });
    else {
      row.endMs = end;
      row.bars.push(bar);
    }
  }
  return rows.map((r) => r.bars);
}

function agentLane(
  timeline: ReportTimeline,
  agentId: string,
  rows: readonly TaskBar[][],
  scale: Scale,
  top: number,
  h: number,
): string {
  const bars = rows.flatMap((row, i) => row.map((bar) => taskBar(bar, timeline, scale, top + 3 + i * ROW_H)));
  const own = timeline.agentMarks.filter((m) => m.agentId === agentId);
  const down = downSpans(own, scale.endMs).map(([from, to]) =>
    el(
      'rect',
      { class: 'agent-down', x: scale.x(from), y: top, width: Math.max(scale.x(to) - scale.x(from), 2), height: h },
      title(`agent down from ${formatSpan(from)} to ${formatSpan(to)}`),
    ),
  );
  // Marks of one instant share a line and a label.
  const instants = new Map<number, string[]>();
  for (const m of own) instants.set(m.atMs, [...(instants.get(m.atMs) ?? []), m.kind]);
  const events = [...instants].map(([atMs, kinds]) => {
    const x = scale.x(atMs);
    return el(
      'g',
      { class: 'agent-mark', 'data-kind': kinds.join(' ') },
      el('line', { x1: x, y1: top, x2: x, y2: top + h }),
      el('text', { x: x + 2, y: top + h - 2 }, kinds.join(', ')),
      title(`${kinds.join(', ')} at ${formatSpan(atMs)}`),
    );
  });
  return [...down, ...bars, ...events].join('');
}

/** When an agent was down: from each crash to its restart or re-registration, or to the end. */
function downSpans(own: readonly Mark[], endMs: number): [number, number][] {
  const spans: [number, number][] = [];
  let from: number | undefined;
  for (const m of own) {
    if (m.kind === 'crash' && from === undefined) from = m.atMs;
    if ((m.kind === 'restart' || m.kind === 'reregistered') && from !== undefined) {
      spans.push([from, m.atMs]);
      from = undefined;
    }
  }
  if (from !== undefined) spans.push([from, endMs]);
  return spans;
}

function taskBar(bar: TaskBar, timeline: ReportTimeline, scale: Scale, y: number): string {
  const framework = timeline.frameworkNames.get(bar.frameworkId) ?? bar.frameworkId;
  const segments = bar.segments.map((s) => {
    const x = scale.x(s.fromMs);
    const width = Math.max(scale.x(s.toMs ?? scale.endMs) - x, 2);
    const until = s.toMs === undefined ? 'the end' : formatSpan(s.toMs);
    return el(
      'rect',
      { x, y, width, height: ROW_H - 2, fill: STATE_COLOURS[s.state] ?? '#bdbdbd', 'data-state': s.state },
      title(`${bar.taskId} (${framework}): ${s.state} from ${formatSpan(s.fromMs)} to ${until}`),
    );
  });
  return el('g', { class: 'task', 'data-task': bar.taskId, 'data-framework': framework }, ...segments);
}

/** A fault's band over the lanes it concerns (its agent's, or all), with its name on top. */
function faultBand(
  fault: FaultBand,
  scale: Scale,
  lanes: readonly Lane[],
  height: number,
  names: ReadonlyMap<string, string>,
): string {
  const x = scale.x(fault.atMs);
  const end = fault.endMs ?? (fault.lasting ? scale.endMs : undefined);
  const width = end === undefined ? 3 : Math.max(scale.x(end) - x, 3);
  const faultLane = lanes[0]!;
  const lane = fault.agentId === undefined ? undefined : lanes.find((l) => l.label === names.get(fault.agentId!));
  const span = end === undefined ? `at ${formatSpan(fault.atMs)}` : `${formatSpan(fault.atMs)} to ${formatSpan(end)}`;
  const band = (top: number, bottom: number): string => el('rect', { x, y: top, width, height: bottom - top });
  return el(
    'g',
    { class: 'fault', 'data-fault': fault.type },
    lane === undefined
      ? band(faultLane.y, height - 4)
      : band(faultLane.y, faultLane.y + faultLane.h) + band(lane.y, lane.y + lane.h),
    el('text', { x: x + 4, y: faultLane.y + MARK_LANE_H / 2 + 4 }, fault.type),
    title(`fault ${fault.type}, ${span}${fault.detail === '' ? '' : `: ${fault.detail}`}`),
  );
}

function frameworkMarks(timeline: ReportTimeline): Mark[] {
  return timeline.frameworkMarks.map((m) => ({
    ...m,
    text: `${timeline.frameworkNames.get(m.text) ?? m.text} ${m.kind}`,
  }));
}

function frameworkColour(kind: string): string {
  if (kind === 'subscribed' || kind === 'recovered') return '#31a354';
  return kind === 'disconnected' || kind === 'remove' || kind === 'failover-expired' ? '#de2d26' : '#636363';
}

/** Marks of one lane as small diamonds, each with its tooltip. */
function marks(list: readonly Mark[], scale: Scale, top: number, colour: (kind: string) => string): string {
  return list
    .map((m) => {
      const x = scale.x(m.atMs);
      const cy = top + MARK_LANE_H / 2;
      return el(
        'path',
        {
          class: 'mark',
          'data-kind': m.kind,
          d: `M${x} ${cy - 7}L${x + 6} ${cy}L${x} ${cy + 7}L${x - 6} ${cy}Z`,
          fill: colour(m.kind),
        },
        title(`${m.text} at ${formatSpan(m.atMs)}`),
      );
    })
    .join('');
}

function expectationMarks(results: readonly ExpectationResult[], scale: Scale, top: number): string {
  // The failures drawn last, on top of the passes of the same instant.
  return [...results.filter((r) => r.ok), ...results.filter((r) => !r.ok)]
    .map((r) => {
      const atMs = Number.isFinite(r.atMs) ? r.atMs : scale.endMs;
      return el(
        'circle',
        { class: r.ok ? 'pass' : 'fail', cx: scale.x(atMs), cy: top + MARK_LANE_H / 2, r: 6 },
        title(`${r.ok ? 'PASS' : 'FAIL'} line ${r.line} at ${formatSpan(atMs)}: ${r.what} (found ${r.found})`),
      );
    })
    .join('');
}

/** Cpus and mem in use by tasks, as shares of the agents' totals, stepping at each change. */
export function resourcesSvg(timeline: ReportTimeline, endMs: number): string {
  const scale = scaleOf(endMs);
  const h = 120;
  const top = 10;
  const y = (share: number): number => top + h - Math.min(Math.max(share, 0), 1) * h;
  const { capacity } = timeline;
  const line = (value: (s: { cpusMilli: number; memMib: number }) => number, total: number, cls: string): string => {
    let d = `M${scale.x(0)} ${y(0)}`;
    for (const s of timeline.resources) d += `H${scale.x(s.atMs)}V${y(total > 0 ? value(s) / total : 0)}`;
    return el('path', { class: `usage ${cls}`, d: `${d}H${scale.x(endMs)}` });
  };
  const grid = [0, 0.5, 1].map((share) =>
    el(
      'g',
      {},
      el('line', { x1: LABEL_W, y1: y(share), x2: LABEL_W + PLOT_W, y2: y(share), class: 'tick' }),
      el('text', { x: LABEL_W - 6, y: y(share) + 4, 'text-anchor': 'end', class: 'tick-label' }, `${share * 100}%`),
    ),
  );
  const height = top + h + 14;
  return el(
    'svg',
    { class: 'resources', width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}` },
    ...grid,
    line((s) => s.cpusMilli, capacity.cpusMilli, 'cpus'),
    line((s) => s.memMib, capacity.memMib, 'mem'),
  );
}
