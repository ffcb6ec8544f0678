/**
 * The HTML report as text: built from a timeline recorded from hand-made
 * trace entries, it has a lane per agent, the task bars by state, the
 * fault bands and marks, the expectations, the misuses and an external
 * process's output; every text of the user's is escaped, and nothing
 * refers outside the file.
 */
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../src/core/kernel/trace.js';
import { htmlReport } from '../../src/scenario/html-report.js';
import { parseScenario } from '../../src/scenario/load.js';
import { TimelineRecorder } from '../../src/scenario/report-timeline.js';
import type { RunResult } from '../../src/scenario/runner.js';

const EVIL = '<script>alert("x")</script>';

const SCENARIO = parseScenario(
  'scenarios/evil.yaml',
  `name: evil
description: "tasks named ${EVIL.replace(/"/g, '\\"')}"
duration: 1m
cluster:
  agents:
    - count: 2
frameworks:
  - name: web
    tasks: { keep_running: 1 }
expect:
  - tasks: { framework: web, state: TASK_RUNNING, count: 1 }
`,
);

let seq = 0;
const entry = (timeMs: number, kind: string, data: unknown): TraceEntry => ({
  seq: ++seq,
  timeMs,
  kind,
  line: `${timeMs} ${kind} ${JSON.stringify(data)}`,
});
const cpus = (milli: number) => [
  { name: 'cpus', type: 'SCALAR', milli },
  { name: 'mem', type: 'SCALAR', milli: 1024_000 },
];

/** Two agents, a framework named with markup, a task named with markup that runs and is lost, a partition healed. */
function recorded(): TimelineRecorder {
  const r = new TimelineRecorder();
  const fw = 'F-0000';
  const task = { frameworkId: fw, agentId: 'A-S0', taskId: EVIL };
  const launch = { type: 'LAUNCH', tasks: [{ taskId: EVIL, resources: cpus(500) }] };
  for (const e of [
    entry(0, 'input:addAgent', [{ resources: cpus(2000) }]),
    entry(0, 'agent:add', { agentId: 'A-S0' }),
    entry(0, 'input:addAgent', [{ resources: cpus(2000) }]),
    entry(0, 'agent:add', { agentId: 'A-S1' }),
    entry(0, 'input:subscribe', ['c1', { info: { name: `web ${EVIL}` } }]),
    entry(0, 'framework:subscribed', { frameworkId: fw, failover: false }),
    entry(1000, 'input:call', [fw, 's', { type: 'ACCEPT', operations: [launch] }]),
    entry(1000, 'task:launch', task),
    entry(2000, 'task:status', { ...task, state: 'TASK_RUNNING', latest: 'TASK_RUNNING' }),
    entry(10_000, 'fault:partition', { nodes: ['A-S0', 'master'] }),
    entry(20_000, 'agent:crash', { agentId: 'A-S0' }),
    entry(30_000, 'fault:heal', { nodes: ['A-S0', 'master'] }),
    entry(40_000, 'framework:disconnected', { frameworkId: fw }),
    entry(45_000, 'master:elected', { index: 1 }),
  ]) {
    r.add(e);
  }
  // The master's own update (its text is not JSON): the task lost with its agent.
  r.add({
    seq: ++seq,
    timeMs: 30_000,
    kind: 'event:update',
    line: `30000 event:update ${fw} ${EVIL} TASK_LOST SOURCE_MASTER -`,
  });
  return r;
}

function result(): RunResult {
  return {
    scenario: SCENARIO,
    seed: '1',
    processes: [],
    results: [
      { ok: true, what: `exactly 1 task ${EVIL}`, found: '1', line: 9, atMs: 30_000 },
      { ok: false, what: 'exactly 2 agents', found: '<1>', line: 10, atMs: Infinity },
    ],
    problems: [`a problem ${EVIL}`],
    notes: [],
    passed: false,
    misuse: {
      timeMs: 60_000,
      frameworks: [
        {
          frameworkId: 'F-0000',
          misuses: [
            {
              kind: 'decline_loop',
              count: 3,
              firstTimeMs: 1000,
              lastTimeMs: 3000,
              explanation: 'declining in a loop',
              examples: [{ timeMs: 1000, ids: {}, detail: `offer ${EVIL}` }],
            },
          ],
        },
      ],
    },
    traceHash: '0123456789abcdef',
    traceLength: seq,
    checkpoints: [],
    endMs: 60_000,
    wallMs: 5,
  };
}

describe('the HTML report', () => {
  const timeline = recorded().timeline();
  const html = htmlReport(result(), timeline, { output: { label: 'Output of the process', text: `out ${EVIL}` } });

  it('escapes every text of the user: no markup of theirs gets through', () => {
    expect(html).not.toContain('<script');
    expect(html).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
    expect(html).toContain(`data-framework="web &#60;script&#62;`);
  });

  it('refers to nothing outside the file: no address in a src or href, no script, no link', () => {
    expect(html).not.toMatch(/\b(src|href)\s*=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<link|<script|<img|<iframe/i);
  });

  it('draws a lane per agent, the task by state, the bands and the marks', () => {
    const lanes = [...html.matchAll(/data-lane="([^"]*)"/g)].map((m) => m[1]);
    expect(lanes).toEqual(['faults', 'masters', 'frameworks', 'agent 0', 'agent 1', 'expectations']);
    const states = [...html.matchAll(/data-state="([^"]*)"/g)].map((m) => m[1]);
    expect(states).toEqual(['TASK_STAGING', 'TASK_RUNNING', 'TASK_LOST']);
    expect(html).toContain('data-fault="partition"');
    expect(html).toContain('fault partition, 10s to 30s');
    expect(html).toMatch(/class="agent-down"[^>]*>.*agent down from 20s to 1m/);
    expect(html).toContain('data-kind="subscribed"');
    expect(html).toContain('data-kind="disconnected"');
    expect(html).toContain('master 1 elected at 45s');
    expect(html.match(/<circle class="pass"/g)).toHaveLength(1);
    expect(html.match(/<circle class="fail"/g)).toHaveLength(1);
  });

  it('counts the resources of the live tasks from launch to their terminal state', () => {
    expect(timeline.capacity).toEqual({ cpusMilli: 4000, memMib: 2048 });
    expect(timeline.resources).toEqual([
      { atMs: 1000, cpusMilli: 500, memMib: 1024 },
      { atMs: 30_000, cpusMilli: 0, memMib: 0 },
    ]);
    expect(html).toContain('cpus, of 4 (peak 0.5)');
  });

  it("shows what each external framework's process wrote, and how it ended", () => {
    const withProcess: RunResult = {
      ...result(),
      processes: [{ framework: 'mine', exitCode: 3, signal: null, stdout: `said ${EVIL}`, stderr: 'complained' }],
    };
    const html = htmlReport(withProcess, timeline);
    expect(html).toContain('The process of mine (exit code 3)');
    expect(html).toContain('said &#60;script');
    expect(html).toContain('complained');
  });

  it('lists the expectations with PASS or FAIL and their time, the problems, the misuses and the output', () => {
    expect(html).toMatch(/<td class="PASS">PASS<\/td><td>30s<\/td><td>line 9<\/td>/);
    expect(html).toMatch(/<td class="FAIL">FAIL<\/td><td>the end<\/td><td>line 10<\/td>.*&#60;1&#62;/);
    expect(html).toContain('<span class="verdict failed">FAILED</span>');
    expect(html).toContain('a problem &#60;script');
    expect(html).toMatch(/<code>decline_loop<\/code><\/td><td>3<\/td><td>1s to 3s<\/td>/);
    expect(html).toContain('<pre class="output">out &#60;script');
    expect(htmlReport(result(), timeline)).not.toContain('class="output"');
  });
});

describe('the report timeline', () => {
  it('ends a network rule at its removal, and brings unreachable tasks back in their state when their agent is', () => {
    const r = new TimelineRecorder();
    const task = { frameworkId: 'F', agentId: 'A', taskId: 't' };
    for (const e of [
      entry(0, 'agent:add', { agentId: 'A' }),
      entry(0, 'fault:network_rule', { rule: { action: 'drop' } }),
      entry(0, 'net:rule-add', { ruleId: 4 }),
      entry(0, 'task:launch', task),
      entry(1000, 'task:status', { ...task, state: 'TASK_RUNNING' }),
      entry(90_000, 'agent:unreachable', { agentId: 'A' }),
      {
        seq: ++seq,
        timeMs: 90_000,
        kind: 'event:update',
        line: '90000 event:update F t TASK_UNREACHABLE SOURCE_MASTER -',
      },
      entry(90_000, 'fault:remove_network_rule', { ruleId: 4 }),
      entry(120_000, 'agent:reregistered', { agentId: 'A' }),
      entry(120_000, 'agent:reachable', { agentId: 'A' }),
    ]) {
      r.add(e);
    }
    const timeline = r.timeline();
    expect(timeline.faults.map((f) => [f.type, f.atMs, f.endMs])).toEqual([
      ['network_rule', 0, 90_000],
      ['remove_network_rule', 90_000, undefined],
    ]);
    expect(timeline.tasks[0]!.segments.map((s) => [s.state, s.fromMs])).toEqual([
      ['TASK_STAGING', 0],
      ['TASK_RUNNING', 1000],
      ['TASK_UNREACHABLE', 90_000],
      ['TASK_RUNNING', 120_000],
    ]);
  });
});
