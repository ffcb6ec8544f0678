/**
 * A run's outcome for people (text) and for CI (JUnit XML), and the trace
 * as JSON lines in the control API's form.
 */
import { formatMisuse } from '../core/master/misuse-report.js';
import { formatSpan } from './duration.js';
import { replayCommandOf } from './replay-command.js';
import type { RunResult } from './runner.js';
import { escapeXml } from './svg.js';

/** Notes printed per run; the rest are counted. */
const MAX_NOTES = 10;

/** The command that runs the same scenario with the same seed again. */
export function replayCommand(result: RunResult): string {
  return replayCommandOf(result.scenario.file, result.seed);
}

export function textReport(result: RunResult): string[] {
  const { scenario } = result;
  const lines = [`scenario ${scenario.name} (${scenario.file}), seed ${result.seed}`];
  for (const r of result.results) {
    const when = Number.isFinite(r.atMs) ? `at ${formatSpan(r.atMs)}` : 'at the end';
    lines.push(`  ${r.ok ? 'PASS' : 'FAIL'}  line ${r.line}, ${when}: ${r.what} (found ${r.found})`);
  }
  for (const problem of result.problems) lines.push(`  PROBLEM  ${problem}`);
  for (const note of result.notes.slice(0, MAX_NOTES)) lines.push(`  note  ${note}`);
  if (result.notes.length > MAX_NOTES) lines.push(`  note  ... and ${result.notes.length - MAX_NOTES} more`);
  for (const line of formatMisuse(result.misuse)) lines.push(`  ${line}`);
  const failed = result.results.filter((r) => !r.ok).length;
  lines.push(
    `  ${result.results.length} expectations: ${result.results.length - failed} passed, ${failed} failed` +
      `${result.problems.length === 0 ? '' : `, ${result.problems.length} problems`}` +
      ` · ${formatSpan(result.endMs)} of cluster time in ${(result.wallMs / 1000).toFixed(2)} s` +
      ` · trace ${result.traceLength} entries, hash ${result.traceHash}`,
  );
  for (const p of result.processes) {
    const ended =
      p.exitCode === null || p.exitCode === undefined ? `signal ${p.signal ?? '-'}` : `exit code ${p.exitCode}`;
    const last = p.stderr.trim().split('\n').slice(-3).join(' | ');
    lines.push(`  process ${p.framework}: ${ended}${last === '' ? '' : `; last stderr: ${last.slice(-300)}`}`);
  }
  // A run in real time depends on the wall clock and on processes of its own: its seed does not replay it.
  if (scenario.time === 'realtime') lines.push('  real time: the seed does not replay this run');
  else lines.push(`  replay: ${replayCommand(result)}`);
  return lines;
}

export function junitReport(results: readonly RunResult[]): string {
  const esc = escapeXml;
  const suites = results.map((result) => {
    const cases = result.results.map((r) => {
      const name = esc(`line ${r.line}: ${r.what}`);
      const body = r.ok ? '' : `<failure message="${esc(`found ${r.found}`)}"/>`;
      return `    <testcase classname="${esc(result.scenario.name)}" name="${name}" time="0">${body}</testcase>`;
    });
    const problems = result.problems.map(
      (p) =>
        `    <testcase classname="${esc(result.scenario.name)}" name="run problem"><error message="${esc(p)}"/></testcase>`,
    );
    const failures = result.results.filter((r) => !r.ok).length;
    return [
      `  <testsuite name="${esc(result.scenario.name)}" tests="${cases.length + problems.length}" failures="${failures}" errors="${problems.length}" time="${(result.wallMs / 1000).toFixed(3)}">`,
      `    <properties><property name="seed" value="${esc(result.seed)}"/><property name="trace_hash" value="${result.traceHash}"/><property name="replay" value="${esc(replayCommand(result))}"/></properties>`,
      ...cases,
      ...problems,
      '  </testsuite>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites name="clustersim scenarios">',
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
