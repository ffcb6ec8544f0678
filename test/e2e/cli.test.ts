import { describe, expect, it } from 'vitest';
import { runCli, startUp } from './cli-process.js';

describe('clustersim command line', () => {
  it('--help names every command, and every command has its own --help', async () => {
    const top = await runCli(['--help']).output;
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('clustersim up');
    const up = await runCli(['up', '--help']).output;
    expect(up.code).toBe(0);
    for (const flag of [
      '--host',
      '--port',
      '--agents',
      '--agent-resources',
      '--agent-attributes',
      '--agent-port',
      '--seed',
      '--heartbeat-interval',
      '--allocation-interval',
      '--log-level',
      '--idle-timeout',
      '--headers-timeout',
      '--request-timeout',
      '--max-connections',
      '--agent-max-connections',
      '--max-subscriptions',
      '--max-frameworks',
      '--stream-buffer-limit',
      '--stream-buffer-budget',
    ]) {
      expect(up.stdout).toContain(flag);
    }
  });

  it('rejects bad options with a one-line reason and a non-zero exit', async () => {
    const bad = await runCli(['up', '--port', '0', '--agent-resources', 'cpus:lots']).output;
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("Invalid scalar for 'cpus'");
    const limit = await runCli(['up', '--port', '0', '--max-subscriptions', '0']).output;
    expect(limit.code).not.toBe(0);
    expect(limit.stderr).toBe('clustersim up: --max-subscriptions: 0 is not allowed: at least 1\n');
    const unknown = await runCli(['fly']).output;
    expect(unknown.code).not.toBe(0);
  });

  it('prints only the ready line on stdout (logs go to stderr)', async () => {
    const { child, output } = runCli(['up', '--port', '0', '--agents', '1', '--log-level', 'info']);
    let stdout = '';
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('\n')) setTimeout(() => child.kill('SIGTERM'), 200);
    });
    const result = await output;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^clustersim: master at http:\/\/127\.0\.0\.1:\d+ with 1 agent\n$/);
    expect(result.stderr).toContain('"event":"agent:add"');
  });

  it('prints the master URL when ready and exits cleanly on SIGINT', async () => {
    const up = await startUp(['--agents', '1', '--log-level', 'silent']);
    expect(up.masterUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const slaves = (await (await fetch(new URL('/slaves', up.masterUrl))).json()) as any;
    expect(slaves.slaves).toHaveLength(1);
    const agentUrl = `http://${slaves.slaves[0].pid.split('@')[1]}`;
    expect((await fetch(new URL('/health', agentUrl))).status).toBe(200);
    expect(await up.stop('SIGINT')).toBe(0);
  });

  it("warns of a CLUSTERSIM_* variable one slip from a flag, naming the one meant; another command's is left alone", async () => {
    const up = await startUp(['--log-level', 'silent'], { CLUSTERSIM_AGNETS: '1', CLUSTERSIM_CONFIG: 'orch.ini' });
    // Ignored: the default three agents start.
    const slaves = (await (await fetch(new URL('/slaves', up.masterUrl))).json()) as { slaves: unknown[] };
    expect(slaves.slaves).toHaveLength(3);
    expect(await up.stop('SIGINT')).toBe(0);
    expect(up.stderr()).toBe(
      'clustersim: CLUSTERSIM_AGNETS names no flag, and is ignored (did you mean CLUSTERSIM_AGENTS?)\n',
    );
  });

  it('prints the advertised address in the ready line, where clients go, not the bind address', async () => {
    // Bound to loopback, advertised as localhost: the line names localhost, and that address serves.
    const up = await startUp(['--agents', '0', '--log-level', 'silent', '--advertise-host', 'localhost']);
    expect(up.masterUrl).toMatch(/^http:\/\/localhost:\d+$/);
    expect((await fetch(new URL('/health', up.masterUrl.replace('localhost', '127.0.0.1')))).status).toBe(200);
    expect(await up.stop('SIGINT')).toBe(0);
  });
});

describe('the installed command', () => {
  it('npx clustersim --help works from the built package (npm ci builds it)', async () => {
    const { execFile } = await import('node:child_process');
    const { existsSync } = await import('node:fs');
    const { fileURLToPath } = await import('node:url');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    // `npm ci` runs the build; without a build there is no command to check.
    if (!existsSync(`${root}/dist/cli/main.js`)) return;
    const out = await new Promise<string>((resolve, reject) =>
      execFile('npx', ['--no-install', 'clustersim', '--help'], { cwd: root }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    expect(out).toContain('clustersim up');
    // npx resolving the package takes seconds, many on a loaded machine.
  }, 60_000);
});
