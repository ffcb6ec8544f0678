/**
 * A run's report as one self-contained HTML page (`clustersim run
 * --report`): inline CSS, inline SVG, no script and no address outside the
 * file, so it opens offline and can be attached to a CI run. It shows the
 * timeline picture and the resources in use (report-picture.ts), the
 * expectations with PASS or FAIL and their time, the problems and notes,
 * the protocol misuses, and the output of an external process when the
 * run had one. Every text from the file or the frameworks is escaped.
 */
import type { MisuseReport } from '../core/master/misuse-report.js';
import { formatSpan } from './duration.js';
import { replayCommand } from './report.js';
import { agentNames, resourcesSvg, STATE_COLOURS, timelineSvg } from './report-picture.js';
import type { ReportTimeline } from './report-timeline.js';
import type { RunResult } from './runner.js';
import { el, text } from './svg.js';

export interface HtmlReportOptions {
  /** What an external process of the run wrote, shown in a section of its own when given. */
  readonly output?: { readonly label: string; readonly text: string };
}

const CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.summary { color: #555; } .verdict { font-weight: bold; padding: 1px 6px; border-radius: 3px; color: #fff; }
.verdict.passed, td.PASS { background: #31a354; color: #fff; } .verdict.failed, td.FAIL { background: #de2d26; color: #fff; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } code, pre { font: 12px/1.4 ui-monospace, monospace; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 8px; overflow: auto; max-height: 400px; }
svg { display: block; font: 11px system-ui, sans-serif; }
.lane-bg { fill: #fafafa; stroke: #e0e0e0; } .lane-label { font-weight: bold; fill: #333; }
.tick { stroke: #eee; } .tick-label { fill: #777; }
.fault rect { fill: #fc9272; fill-opacity: 0.25; stroke: #de2d26; stroke-opacity: 0.6; } .fault text { fill: #a50f15; }
.agent-mark line { stroke: #54278f; stroke-dasharray: 3 2; } .agent-mark text { fill: #54278f; font-size: 10px; }
.agent-down { fill: #bdbdbd; fill-opacity: 0.5; } .task rect { stroke: #fff; stroke-width: 0.5; }
circle.pass { fill: #31a354; } circle.fail { fill: #de2d26; }
.usage { fill: none; stroke-width: 2; } .usage.cpus { stroke: #3182bd; } .usage.mem { stroke: #e6550d; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; font-size: 12px; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin-right: 4px; border-radius: 2px; }
`;

/** The report page of one run, given the timeline recorded from its trace. */
export function htmlReport(result: RunResult, timeline: ReportTimeline, options: HtmlReportOptions = {}): string {
  const { scenario } = result;
  const failed = result.results.filter((r) => !r.ok).length;
  const heading = `clustersim run: ${scenario.name}`;
  const body = [
    el('h1', {}, text(heading)),
    el(
      'p',
      { class: 'summary' },
      el('span', { class: `verdict ${result.passed ? 'passed' : 'failed'}` }, result.passed ? 'PASSED' : 'FAILED'),
      text(
        ` ${scenario.file}, seed ${result.seed} · ${result.results.length} expectations, ${failed} failed` +
          ` · ${formatSpan(result.endMs)} of cluster time · trace ${result.traceLength} entries, hash ${result.traceHash}`,
      ),
      el('br'),
      text('replay: '),
      el('code', {}, text(replayCommand(result))),
    ),
    scenario.description === '' ? '' : el('p', {}, text(scenario.description)),
    el('h2', {}, 'Timeline'),
    legend(),
    timelineSvg(timeline, result.results, result.endMs),
    agentTable(timeline),
    el('h2', {}, 'Resources in use by tasks'),
    resourcesLegend(timeline),
    resourcesSvg(timeline, result.endMs),
    el('h2', {}, 'Expectations'),
    expectationTable(result),
    listSection('Problems', result.problems),
    listSection('Notes', result.notes),
    el('h2', {}, 'Protocol misuse'),
    misuseSection(result.misuse, timeline),
    ...(options.output === undefined ? processOutputs(result) : [options.output]).map(outputSection),
  ];
  return `<!DOCTYPE html>\n${el(
    'html',
    { lang: 'en' },
    el('head', {}, el('meta', { charset: 'utf-8' }), el('title', {}, text(heading)), el('style', {}, CSS)),
    el('body', {}, ...body),
  )}\n`;
}

function legend(): string {
  const states = Object.entries(STATE_COLOURS).filter(([s]) => s !== 'TASK_GONE_BY_OPERATOR');
  const items = states.map(([state, colour]) =>
    el('span', {}, el('span', { class: 'swatch', style: `background:${colour}` }), text(state.slice('TASK_'.length))),
  );
  const extra = [
    el('span', {}, el('span', { class: 'swatch', style: 'background:#fc9272;opacity:0.6' }), 'fault'),
    el('span', {}, el('span', { class: 'swatch', style: 'background:#bdbdbd' }), 'agent down'),
    el('span', {}, el('span', { class: 'swatch', style: 'background:#31a354' }), 'subscribed, PASS'),
    el('span', {}, el('span', { class: 'swatch', style: 'background:#de2d26' }), 'disconnected, FAIL'),
  ];
  return el('div', { class: 'legend' }, ...items, ...extra);
}

function agentTable(timeline: ReportTimeline): string {
  if (timeline.agents.length === 0) return '';
  const names = agentNames(timeline);
  const rows = timeline.agents.map((id) => {
    const tasks = timeline.tasks.filter((t) => t.agentId === id).length;
    return el(
      'tr',
      {},
      el('td', {}, text(names.get(id)!)),
      el('td', {}, el('code', {}, text(id))),
      el('td', {}, String(tasks)),
    );
  });
  return el(
    'details',
    {},
    el('summary', {}, 'Agents'),
    el(
      'table',
      {},
      el('tr', {}, el('th', {}, 'lane'), el('th', {}, 'agent id'), el('th', {}, 'tasks launched')),
      ...rows,
    ),
  );
}

function resourcesLegend(timeline: ReportTimeline): string {
  const { cpusMilli, memMib } = timeline.capacity;
  const peak = (pick: (s: { cpusMilli: number; memMib: number }) => number): number =>
    timeline.resources.reduce((m, s) => Math.max(m, pick(s)), 0);
  return el(
    'div',
    { class: 'legend' },
    el(
      'span',
      {},
      el('span', { class: 'swatch', style: 'background:#3182bd' }),
      text(`cpus, of ${cpusMilli / 1000} (peak ${peak((s) => s.cpusMilli) / 1000})`),
    ),
    el(
      'span',
      {},
      el('span', { class: 'swatch', style: 'background:#e6550d' }),
      text(`mem, of ${memMib} MiB (peak ${peak((s) => s.memMib)} MiB)`),
    ),
    el('span', {}, text('the resources of the launched tasks, from launch to their terminal state')),
  );
}

function expectationTable(result: RunResult): string {
  if (result.results.length === 0) return el('p', {}, 'The file has no expectations.');
  const rows = result.results.map((r) =>
    el(
      'tr',
      { class: r.ok ? 'pass' : 'fail' },
      el('td', { class: r.ok ? 'PASS' : 'FAIL' }, r.ok ? 'PASS' : 'FAIL'),
      el('td', {}, Number.isFinite(r.atMs) ? formatSpan(r.atMs) : 'the end'),
      el('td', {}, `line ${r.line}`),
      el('td', {}, text(r.what)),
      el('td', {}, text(r.found)),
    ),
  );
  const head = ['', 'at', 'where', 'expected', 'found'].map((h) => el('th', {}, h));
  return el('table', { class: 'expectations' }, el('tr', {}, ...head), ...rows);
}

function listSection(heading: string, items: readonly string[]): string {
  if (items.length === 0) return '';
  return el('h2', {}, heading) + el('ul', {}, ...items.map((i) => el('li', {}, text(i))));
}

function misuseSection(misuse: MisuseReport, timeline: ReportTimeline): string {
  if (misuse.frameworks.length === 0) return el('p', { class: 'misuse-none' }, 'None found.');
  const rows = misuse.frameworks.flatMap((f) =>
    f.misuses.map((m) =>
      el(
        'tr',
        {},
        el('td', {}, text(f.name ?? timeline.frameworkNames.get(f.frameworkId) ?? f.frameworkId)),
        el('td', {}, el('code', {}, text(m.kind))),
        el('td', {}, String(m.count)),
        el('td', {}, `${formatSpan(m.firstTimeMs)} to ${formatSpan(m.lastTimeMs)}`),
        el('td', {}, text(m.explanation), ...m.examples.map((e) => el('div', {}, el('code', {}, text(e.detail))))),
      ),
    ),
  );
  const head = ['framework', 'misuse', 'count', 'when', 'why, and the first instances'].map((h) => el('th', {}, h));
  return el('table', { class: 'misuse' }, el('tr', {}, ...head), ...rows);
}

/** What each external framework's process wrote, and how it ended. */
function processOutputs(result: RunResult): NonNullable<HtmlReportOptions['output']>[] {
  return (result.processes ?? []).map((p) => {
    const end = p.signal
      ? `stopped by ${p.signal}`
      : p.exitCode === undefined
        ? 'still running'
        : `exit code ${p.exitCode}`;
    return { label: `The process of ${p.framework} (${end})`, text: `stdout:\n${p.stdout}\nstderr:\n${p.stderr}` };
  });
}

function outputSection(output: NonNullable<HtmlReportOptions['output']>): string {
  return el('h2', {}, text(output.label)) + el('pre', { class: 'output' }, text(output.text));
}
