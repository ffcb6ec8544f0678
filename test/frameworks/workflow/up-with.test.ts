/** `clustersim up --with workflow,orchestrator`: the services beside the cluster, ready to take work; an unknown service refused. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../e2e/cli-process.js';

describe('clustersim up --with', () => {
  it('starts the workflow service on the cluster it brings up', async () => {
    const up = runCli([
      'up',
      '--port',
      '0',
      '--agents',
      '1',
      '--log-level',
      'warn',
      '--with',
      'workflow',
      '--workflow-port',
      '0',
    ]);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        up.child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /workflow service at (http:\/\/\S+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        void up.output.then(({ code, stderr }) => reject(new Error(`up exited with ${code}: ${stderr}`)));
      });
      const run = await runCli([
        'workflow',
        'run',
        '--url',
        url,
        '--image',
        'alpine',
        '--poll-interval',
        '0.1',
        '--startup-timeout',
        '20',
        '--',
        'exit 0',
      ]).output;
      expect(run).toMatchObject({ code: 0, stdout: 'TASK_FINISHED\n' });
    } finally {
      up.child.kill('SIGTERM');
      expect((await up.output).code).toBe(0);
    }
  }, 40_000);

  it('starts the orchestration framework beside it, configured by the environment, with the workflow service', async () => {
    // The child takes its environment from this process at spawn.
    process.env['FRAMEWORK_PORT'] = '0';
    const up = runCli([
      'up',
      '--port',
      '0',
      '--agents',
      '2',
      '--log-level',
      'warn',
      '--with',
      'workflow,orchestrator',
      '--workflow-port',
      '0',
    ]);
    delete process.env['FRAMEWORK_PORT'];
    try {
      const api = await new Promise<string>((resolve, reject) => {
        let out = '';
        up.child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /workflow service at http:\/\/\S+[^]*orchestration framework m3s at (http:\/\/\S+)/.exec(out);
          if (m !== null) resolve(m[1]!);
        });
        void up.output.then(({ code, stderr }) => reject(new Error(`up exited with ${code}: ${stderr}`)));
      });
      expect(await (await fetch(`${api}/api/framework/v0/status/framework`)).json()).toMatchObject({ API: 'ok' });
    } finally {
      up.child.kill('SIGTERM');
      expect((await up.output).code).toBe(0);
    }
  }, 40_000);

  it('refuses a service it does not know', async () => {
    const out = await runCli(['up', '--port', '0', '--agents', '1', '--log-level', 'silent', '--with', 'nothing'])
      .output;
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('clustersim up: --with: unknown service "nothing" (one of workflow, orchestrator)\n');
  }, 30_000);
});
