/**
 * Every mistake on the command line: one line on stderr naming the command,
 * the flag, the value and what is allowed; exit code 2; nothing on stdout
 * and no help text. Every case runs the entry point in this process (its
 * module evaluated afresh with the arguments); the first few run the
 * command as a process too.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../e2e/cli-process.js';

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The entry point run here with `argv`: what it wrote and the exit code it set. */
async function explain(argv: readonly string[]): Promise<Outcome> {
  vi.resetModules();
  const saved = process.argv;
  process.argv = [process.execPath, 'clustersim', ...argv];
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    await import('../../src/cli/main.js');
  } finally {
    vi.restoreAllMocks();
    process.argv = saved;
  }
  const code = process.exitCode;
  process.exitCode = undefined;
  return { code: code === undefined ? 0 : Number(code), stdout, stderr };
}

afterEach(() => {
  process.exitCode = undefined;
});

function expectOneLine(out: Outcome, line: string | RegExp): void {
  expect(out.code).toBe(2);
  expect(out.stdout).toBe('');
  expect(out.stderr.endsWith('\n')).toBe(true);
  const lines = out.stderr.slice(0, -1).split('\n');
  expect(lines).toHaveLength(1);
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(out.stderr).not.toMatch(/Options:|--help\s+Show help/);
}

const LEVELS = 'fatal, error, warn, info, debug, trace, silent';
const COMMANDS = 'up, run, check-determinism, chaos, chaos-merge, task, replay, serve, workflow, orch';

/** argv, and the one line expected (a string is the whole line, a RegExp matches it). */
const CASES: readonly (readonly [readonly string[], string | RegExp])[] = [
  [['up', '--port', 'abc'], 'clustersim up: --port: "abc" is not a port (0-65535)'],
  [['up', '--agents', '-1'], 'clustersim up: --agents: -1 is not allowed: at least 0'],
  [['up', '--log-level', 'verbose'], `clustersim up: --log-level: "verbose" is not one of ${LEVELS}`],
  [['up', '--agnets', '3'], 'clustersim up: unknown flag --agnets (did you mean --agents?); see --help'],
  [
    ['up', '--port', '0', '--authenticate-http-readonly'],
    "clustersim up: --authenticate-http-readonly: needs credentials: there are none for the realm 'mesos-master-readonly'",
  ],
  [
    ['up', '--port', '0', '--jwt-secret-key', 'key.bin'],
    'clustersim up: --jwt-secret-key: needs authenticateHttpExecutors',
  ],
  [['up', '--no-such-thing'], 'clustersim up: unknown flag --no-such-thing; see --help'],
  [['up', '-x', '--agnets=2'], 'clustersim up: unknown flags -x, --agnets; see --help'],
  [['fly'], `clustersim: unknown command "fly"; commands: ${COMMANDS}`],
  [
    ['up', '--agent-resources', ''],
    /^clustersim up: --agent-resources: "" names no resource; give at least one, e\.g\. cpus:4;/,
  ],
  [['up', '--port', '70000'], 'clustersim up: --port: 70000 is not a port (0-65535)'],
  [['up', '--port'], 'clustersim up: --port needs a value'],
  [['up', '--port', '1', '--port', '2'], 'clustersim up: --port: given 2 times (1, 2); give it once'],
  [['up', '--agents', 'many'], 'clustersim up: --agents: "many" is not a whole number'],
  [['up', '--masters', '0'], 'clustersim up: --masters: 0 is not allowed: at least 1'],
  [['up', '--heartbeat-interval', '0'], 'clustersim up: --heartbeat-interval: 0 is not allowed: more than 0 seconds'],
  [['up', '--stream-buffer-limit', '-2'], 'clustersim up: --stream-buffer-limit: -2 is not allowed: more than 0 MiB'],
  [['up', '--log-format', 'xml'], 'clustersim up: --log-format: "xml" is not one of json, pretty'],
  [['up', '--time', 'virtul'], 'clustersim up: --time: "virtul" is not one of realtime, virtual'],
  [
    ['up', '--agent-resorces', 'cpus:1'],
    'clustersim up: unknown flag --agent-resorces (did you mean --agent-resources?); see --help',
  ],
  [
    ['up', '--agent-resources', 'cpu:4;mem:1024'],
    /^clustersim up: --agent-resources: unknown resource 'cpu' \(did you mean 'cpus'\?\)/,
  ],
  [
    ['up', '--agent-resources', 'cpus:4;ports:5'],
    "clustersim up: --agent-resources: 'ports' takes ranges such as [31000-32000], not a number",
  ],
  [['up', '--agent-attributes', 'rack'], /^clustersim up: --agent-attributes: /],
  [
    ['up', '--isolation', 'cgroups/gpu'],
    /^clustersim up: --isolation: unknown isolator "cgroups\/gpu" \(known: cgroups\/cpu, /,
  ],
  [['upp'], `clustersim: unknown command "upp" (did you mean up?); commands: ${COMMANDS}`],
  [[], 'clustersim: Name a command; see --help'],
  [['run'], 'clustersim run: needs 1 argument, got 0; see --help'],
  [['run', 'x.yaml', '--reporter', 'xml'], 'clustersim run: --reporter: "xml" is not one of text, junit'],
  [['chaos', 'x.yaml', '--runs', '0'], 'clustersim chaos: --runs: 0 is not allowed: at least 1'],
  [['chaos', 'x.yaml', '--seed', '1.5'], 'clustersim chaos: --seed: 1.5 is not a whole number'],
  [['replay', 'trace.jsonl', '--quite'], 'clustersim replay: unknown flag --quite (did you mean --quiet?); see --help'],
  [['replay', 'a.jsonl', 'b.jsonl'], 'clustersim replay: unexpected argument "b.jsonl"'],
  [['serve', 'workflow', '--port', '-1'], 'clustersim serve workflow: --port: -1 is not a port (0-65535)'],
  [
    ['serve', 'workflow', '--encoding', 'xml'],
    'clustersim serve workflow: --encoding: "xml" is not one of json, protobuf',
  ],
  [['serve', 'nothing'], 'clustersim serve: unknown command "nothing"; commands: workflow, orchestrator'],
  [['workflow', 'run', '--', 'echo'], 'clustersim workflow run: --image is required'],
  [
    ['workflow', 'run', '--image', 'alpine', '--poll-interval', '0', '--', 'echo'],
    'clustersim workflow run: --poll-interval: 0 is not allowed: more than 0 seconds',
  ],
  [
    ['orch', 'lst'],
    'clustersim orch: unknown command "lst" (did you mean list?); commands: list, kubeconfig, scale, status, version',
  ],
  [['orch', 'list', '--nme', 'x'], 'clustersim orch list: unknown flag --nme (did you mean --name?); see --help'],
  [['orch', 'scale', 'fw-1', 'two'], 'clustersim orch scale: <count>: "two" is not a whole number of at least 0'],
  [
    ['workflow', 'run', '--image', 'alpine', '--env', 'NOVALUE', '--', 'echo'],
    'clustersim workflow run: --env: "NOVALUE" is not K=V',
  ],
  [['task', 'exex'], 'clustersim task: unknown command "exex" (did you mean exec?); commands: list, exec'],
  [
    ['task', 'list', '--master', 'nowhere'],
    'clustersim task list: --master: "nowhere" is not a URL, e.g. http://127.0.0.1:5050',
  ],
];

/** The errors the issue names, run as processes of the command. */
const AS_PROCESS = 6;

describe('a mistake on the command line', () => {
  it.each(
    CASES.map(([argv, line]) => ({ argv, line, name: argv.join(' ') || '(nothing)' })),
  )('clustersim $name: one line, exit code 2, no help', async ({ argv, line }) => {
    expectOneLine(await explain(argv), line);
  });

  it.concurrent.each(
    CASES.slice(0, AS_PROCESS).map(([argv, line]) => ({ argv, line, name: argv.join(' ') })),
  )('the same from the command itself: clustersim $name', async ({ argv, line }) => {
    expectOneLine(await runCli(argv).output, line);
  }, 60_000);

  it('--help still shows the help, and exits 0', async () => {
    const out = await runCli(['up', '--help']).output;
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Options:');
    expect(out.stdout).toContain('--log-format');
    expect(out.stderr).toBe('');
  }, 60_000);
});
