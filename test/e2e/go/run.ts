/**
 * `npm run test:go`: third-party clients against `clustersim up`. Builds the
 * Go scheduler in ./scheduler and the Go executor in ./executor (written on
 * mesos-go's v1 HTTP client and executor library, the Debian package
 * golang-github-mesos-mesos-go-dev) in GOPATH mode and offline,
 * starts a cluster of 2 agents from the sources, runs the scheduler against
 * it once per codec (protobuf, then JSON), then starts a second cluster with
 * `--credentials` and `--acls` and runs it there: once authenticated (HTTP
 * Basic through mesos-go) through the whole scenario, and as its refused
 * twins (a wrong secret and no credentials: 401 with the realm; a role the
 * ACLs do not allow: ERROR event first, then the stream ends). Then a
 * cluster with `--custom-executors spawn --http-executor-domain-sockets
 * --authenticate-http-executors`, where the scheduler launches its tasks on
 * the Go executor of ./executor (mesos-go's executor library), which the
 * agents run as child processes: once per codec, the executor speaking the
 * same codec and calling over the agent's Unix domain socket with its
 * bearer token (its log must show both). Then the same in a cluster of `startCluster()`
 * in this process, where the scheduler has the executor's agent restarted
 * (`restart agent <id>` on its stdout, answered `restarted` on its stdin)
 * while it holds back an acknowledgement; the executor's log must then show
 * it subscribed again with its unacknowledged task and update. Last, a
 * cluster of `startCluster()` whose agents await their executors: the
 * scheduler asks for each (`start executor <id> of framework <id> on agent
 * <id>: <command>`) and the runner starts the command as an agent would,
 * then requires each such executor to have exited 0 by itself. On a failed
 * run it shows the executors' stderr files from the cluster's work
 * directory. It relays the output and prints
 *
 *   go client suite: 12 passed, 0 failed (122 steps)
 *
 * Exit code 0 only if every run passed and each cluster stopped cleanly on
 * SIGTERM; 2 if Go or mesos-go is missing (with how to install them).
 *
 *   GO_E2E_GOPATH   GOPATH holding github.com/mesos/mesos-go (default /usr/share/gocode)
 *   GO_E2E_TIMEOUT  overall time limit of one scheduler run, Go duration (default 60s)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUp } from '../cli-process.js';
import { inProcess, type Running } from './in-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The Go programs, by name: each is built from the directory of that name. */
const PROGRAMS = ['scheduler', 'executor'] as const;
type Program = (typeof PROGRAMS)[number];
type Binaries = Record<Program, string>;
const GOCODE = process.env.GO_E2E_GOPATH ?? '/usr/share/gocode';
const MESOS_GO = path.join(GOCODE, 'src/github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched');
const RUN_TIMEOUT = process.env.GO_E2E_TIMEOUT ?? '60s';
/** Hard stop for one run of the binary, well past its own -timeout. */
const KILL_AFTER_MS = 120_000;
const CODECS = ['protobuf', 'json'] as const;

/** The principal of the authenticated runs, and the only role the ACLs allow it. */
const PRINCIPAL = 'go-e2e';
const SECRET = 'go-e2e-secret';
const ROLE = 'go-e2e';

interface Run {
  readonly label: string;
  readonly args: readonly string[];
  /** Runs the custom executor scenario, with the executor binary. */
  readonly executor?: true;
  /** A check after a passed run, given the cluster's work directory: the reason it fails, if it does. */
  readonly after?: (workDir: string) => string | undefined;
}

interface Cluster {
  readonly name: string;
  /** Starts it, given the suite's temporary directory. */
  readonly start: (tmp: string) => Promise<Running>;
  readonly runs: readonly Run[];
  /** Its agents' work directory, where the sandboxes of spawned executors are. */
  readonly workDir?: (tmp: string) => string;
}

/** `clustersim up --agents 2` with more arguments. */
const up =
  (args: (tmp: string) => string[] = () => []) =>
  (tmp: string): Promise<Running> =>
    startUp(['--agents', '2', '--log-level', 'warn', ...args(tmp)]);

const as = (secret: string) => ['-principal', PRINCIPAL, '-secret', secret];

const CLUSTERS: readonly Cluster[] = [
  { name: 'clustersim up', start: up(), runs: CODECS.map((codec) => ({ label: codec, args: ['-codec', codec] })) },
  {
    name: 'clustersim up with --credentials and --acls',
    start: up((tmp) => [
      '--credentials',
      authFile(tmp, 'credentials.json', CREDENTIALS),
      '--acls',
      authFile(tmp, 'acls.json', ACLS),
    ]),
    runs: [
      { label: 'protobuf, authenticated', args: ['-codec', 'protobuf', ...as(SECRET), '-role', ROLE] },
      { label: 'json, wrong secret', args: ['-codec', 'json', ...as('not-the-secret'), '-expect', 'unauthenticated'] },
      { label: 'protobuf, no credentials', args: ['-codec', 'protobuf', '-expect', 'unauthenticated'] },
      // Protobuf: mesos-go's JSON decoder fails on the top-level `message`
      // string that clustersim's JSON ERROR events carry beside
      // `error.message` (upstream's Event has an object `message`, of the
      // MESSAGE event), so in JSON it would see a decode error, not the ERROR.
      {
        label: 'protobuf, role not allowed',
        args: ['-codec', 'protobuf', ...as(SECRET), '-role', 'go-denied', '-expect', 'unauthorized'],
      },
    ],
  },
  {
    name: 'clustersim up with --custom-executors spawn --http-executor-domain-sockets --authenticate-http-executors',
    start: up((tmp) => [
      '--custom-executors',
      'spawn',
      '--http-executor-domain-sockets',
      '--authenticate-http-executors',
      '--work-dir',
      upWorkDir(tmp),
    ]),
    workDir: (tmp) => upWorkDir(tmp),
    runs: CODECS.map((codec) => ({
      label: `${codec}, custom executor`,
      args: ['-codec', codec],
      executor: true,
      after: overDomainSocketWithToken,
    })),
  },
  {
    name: 'startCluster() with customExecutors spawn',
    start: (tmp) => inProcess(inProcessWorkDir(tmp), 'spawn', log),
    workDir: (tmp) => inProcessWorkDir(tmp),
    runs: CODECS.map((codec) => ({
      label: `${codec}, custom executor, agent restart`,
      args: ['-codec', codec, '-agent-restart'],
      executor: true,
      after: resubscribed,
    })),
  },
  {
    name: 'startCluster() with customExecutors await',
    start: (tmp) => inProcess(awaitWorkDir(tmp), 'await', log),
    workDir: (tmp) => awaitWorkDir(tmp),
    runs: CODECS.map((codec) => ({
      label: `${codec}, awaited executor`,
      args: ['-codec', codec, '-external'],
      executor: true,
    })),
  },
];

/** The agents' work directories (sandboxes) of the spawning clusters. */
const upWorkDir = (tmp: string) => path.join(tmp, 'work');
const inProcessWorkDir = (tmp: string) => path.join(tmp, 'work-in-process');
const awaitWorkDir = (tmp: string) => path.join(tmp, 'work-await');

const CREDENTIALS = { credentials: [{ principal: PRINCIPAL, secret: SECRET }] };
/** Only the role ROLE, for PRINCIPAL; nothing else is allowed. */
const ACLS = {
  permissive: false,
  register_frameworks: [{ principals: { values: [PRINCIPAL] }, roles: { values: [ROLE] } }],
  run_tasks: [{ principals: { values: [PRINCIPAL] }, users: { type: 'ANY' } }],
};

function authFile(tmp: string, name: string, content: object): string {
  const file = path.join(tmp, name);
  writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
  return file;
}

const INSTALL = `Install them (Debian 12 / Ubuntu: Go 1.19 and mesos-go 0.0.6):

  sudo apt-get update
  sudo apt-get install -y --no-install-recommends golang-go golang-github-mesos-mesos-go-dev

or set GO_E2E_GOPATH to a GOPATH that holds github.com/mesos/mesos-go (0.0.6, GOPATH layout).`;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function checkPrerequisites(): string | undefined {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0) return `go client suite: cannot run: no 'go' on PATH.\n${INSTALL}`;
  if (!existsSync(MESOS_GO)) return `go client suite: cannot run: mesos-go not found (${MESOS_GO}).\n${INSTALL}`;
  log(`go client suite: ${go.stdout.trim()}, mesos-go from ${GOCODE}`);
  return undefined;
}

/** GOPATH mode, offline, no cgo: only the sources on disk are used. */
function goEnv(tmp: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GO111MODULE: 'off',
    GOPATH: [path.join(tmp, 'gopath'), GOCODE].join(path.delimiter),
    GOPROXY: 'off',
    GOFLAGS: '',
    GONOSUMDB: '',
    GOSUMDB: 'off',
    CGO_ENABLED: '0',
  };
  // Go needs a build cache; keep the user's unless there is nowhere to put it.
  if (env.GOCACHE === undefined && env.HOME === undefined && env.XDG_CACHE_HOME === undefined)
    env.GOCACHE = path.join(tmp, 'cache');
  return env;
}

function build(tmp: string, program: Program): string | undefined {
  const binary = path.join(tmp, program);
  const started = Date.now();
  const result = spawnSync('go', ['build', '-o', binary, '.'], {
    cwd: path.join(HERE, program),
    env: goEnv(tmp),
    encoding: 'utf8',
  });
  if (result.error !== undefined || result.status !== 0) {
    process.stdout.write(result.stdout ?? '');
    process.stdout.write(result.stderr ?? '');
    log(
      `go client suite: the ${program} does not build: ${result.error?.message ?? `go build exited with ${result.status}`}`,
    );
    return undefined;
  }
  log(`go client suite: built the ${program} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return binary;
}

function buildAll(tmp: string): Binaries | undefined {
  const binaries: Partial<Binaries> = {};
  for (const program of PROGRAMS) {
    const binary = build(tmp, program);
    if (binary === undefined) return undefined;
    binaries[program] = binary;
  }
  return binaries as Binaries;
}

/**
 * The stderr files of the executors run under the work directory, as paths
 * relative to it; each run once (not again through its `runs/latest` link).
 */
function executorLogs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => path.basename(file) === 'stderr' && !file.split(path.sep).includes('latest'))
    .sort();
}

function showExecutorLogs(dir: string): void {
  for (const file of executorLogs(dir)) {
    log(`go client suite: executor stderr ${file}:`);
    for (const line of readFileSync(path.join(dir, file), 'utf8').trimEnd().split('\n')) log(`  | ${line}`);
  }
}

/** Executor logs already checked by an `executorLogsShow` check. */
const checkedLogs = new Set<string>();

/**
 * A check after a run: the log of each executor, the one of this run (not
 * checked before), has a line that matches the pattern.
 */
const executorLogsShow =
  (executorIds: readonly string[], patterns: readonly RegExp[], what: string) =>
  (dir: string): string | undefined => {
    for (const id of executorIds) {
      const fresh = executorLogs(dir).filter((file) => file.includes(`/executors/${id}/`) && !checkedLogs.has(file));
      fresh.forEach((file) => {
        checkedLogs.add(file);
      });
      if (fresh.length !== 1) return `${fresh.length} new logs of executor ${id}, want 1`;
      const text = readFileSync(path.join(dir, fresh[0]!), 'utf8');
      if (!patterns.every((pattern) => pattern.test(text))) return `executor ${id} ${what}: not in its log`;
    }
    log(`go client suite: executor ${executorIds.join(', ')} ${what} (from the log)`);
    return undefined;
  };

/** The executor of an agent restart run subscribed again with the update whose acknowledgement the scheduler held, and its task. */
function resubscribed(dir: string): string | undefined {
  const pattern = /SUBSCRIBE with 1 unacknowledged tasks and 1 unacknowledged updates/;
  return executorLogsShow(
    ['go-executor-recover'],
    [pattern],
    'subscribed again with its unacknowledged task and update',
  )(dir);
}
/**
 * The executors of a run on a cluster with --http-executor-domain-sockets
 * and --authenticate-http-executors called over the socket with their token.
 */
function overDomainSocketWithToken(dir: string): string | undefined {
  const patterns = [/calls go over the agent's Unix domain socket /, /calls carry the executor authentication token/];
  return executorLogsShow(
    ['go-executor', 'go-executor-shutdown'],
    patterns,
    "called over the agent's Unix domain socket with its token",
  )(dir);
}

interface RunResult {
  readonly passed: boolean;
  readonly steps: number;
  readonly reason: string;
}

/** Runs the binary once, relaying its output line by line with a prefix. */
function runScheduler(binaries: Binaries, cluster: Running, run: Run): Promise<RunResult> {
  const codec = run.label;
  const args = ['-master', cluster.masterUrl, ...run.args, '-timeout', RUN_TIMEOUT];
  if (run.executor === true) args.push('-executor', binaries.executor);
  return new Promise((resolve) => {
    const child = spawn(binaries.scheduler, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    // `restart agent <id>` asks for an agent restart, answered on stdin.
    const restart = (agentId: string) => {
      if (cluster.restartAgent === undefined) return child.stdin!.write('this cluster cannot restart agents\n');
      cluster.restartAgent(agentId);
      return child.stdin!.write('restarted\n');
    };
    let steps = 0;
    let verdict = '';
    const relay = (stream: NodeJS.ReadableStream) => {
      let pending = '';
      stream.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          log(`  [${codec}] ${line}`);
          if (/^step\s+\d+:/.test(line)) steps++;
          if (/^(PASS|FAIL):/.test(line)) verdict = line;
          const asked = /^restart agent (\S+)$/.exec(line);
          if (asked !== null) restart(asked[1]!);
          const start = /^start executor (\S+) of framework (\S+) on agent (\S+): (.+)$/.exec(line);
          if (start !== null)
            cluster.startExecutor?.({
              executorId: start[1]!,
              frameworkId: start[2]!,
              agentId: start[3]!,
              command: start[4]!,
            });
        }
      });
      stream.on('end', () => pending !== '' && log(`  [${codec}] ${pending}`));
    };
    relay(child.stdout!);
    relay(child.stderr!);
    const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.on('error', (error) => {
      clearTimeout(killer);
      resolve({ passed: false, steps, reason: `cannot start the scheduler: ${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      const passed = code === 0 && verdict.startsWith('PASS:');
      const reason = passed
        ? ''
        : verdict !== ''
          ? verdict
          : `the scheduler exited with ${signal ?? code} and no verdict`;
      resolve({ passed, steps, reason });
    });
  });
}

/** Runs every run of the cluster against it, then stops it; a dirty stop counts as a failure. */
async function runCluster(
  binaries: Binaries,
  running: Running,
  cluster: Cluster,
  tmp: string,
): Promise<{ passed: number; failed: number; steps: number }> {
  log(`go client suite: ${cluster.name} at ${running.masterUrl}`);
  const workDir = cluster.workDir?.(tmp);
  let passed = 0;
  let failed = 0;
  let steps = 0;
  for (const run of cluster.runs) {
    log(`go client suite: scheduler, ${run.label}`);
    const result = await runScheduler(binaries, running, run);
    const reason = result.passed ? run.after?.(workDir ?? tmp) : result.reason;
    steps += result.steps;
    if (result.passed && reason === undefined) passed++;
    else {
      failed++;
      log(`go client suite: ${run.label} run failed: ${reason}`);
    }
  }
  const code = await running.stop();
  if (code !== 0) {
    failed++;
    log(`go client suite: ${cluster.name} exited with ${code} on SIGTERM`);
  }
  if (failed > 0 && running.stderr().trim() !== '')
    log(`go client suite: clustersim stderr:\n${running.stderr().trimEnd()}`);
  if (failed > 0 && workDir !== undefined) showExecutorLogs(workDir);
  return { passed, failed, steps };
}

async function main(): Promise<number> {
  const missing = checkPrerequisites();
  if (missing !== undefined) {
    log(missing);
    return 2;
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'clustersim-go-'));
  let running: Running | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    void running?.stop();
    rmSync(tmp, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const binaries = buildAll(tmp);
    if (binaries === undefined) {
      log('go client suite: 0 passed, 1 failed (0 steps)');
      return 1;
    }
    const total = { passed: 0, failed: 0, steps: 0 };
    for (const cluster of CLUSTERS) {
      running = await cluster.start(tmp);
      const result = await runCluster(binaries, running, cluster, tmp);
      running = undefined;
      total.passed += result.passed;
      total.failed += result.failed;
      total.steps += result.steps;
    }
    const { passed, failed, steps } = total;
    log(`go client suite: ${passed} passed, ${failed} failed (${steps} steps)`);
    return failed === 0 ? 0 : 1;
  } catch (error) {
    if (running !== undefined) await running.stop();
    log(`go client suite: ${error instanceof Error ? error.message : String(error)}`);
    log('go client suite: 0 passed, 1 failed (0 steps)');
    return 1;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main();
