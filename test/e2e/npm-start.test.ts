/**
 * `npm start` as a CI script uses it: started in the background, stopped
 * by the pid the shell got, which is npm's. The cluster stops with it
 * (npm passes the signal on to the cluster's process, which is its child,
 * not a shell's), cleanly and with its one log line, and its port is free
 * again. Needs the build (`npm ci` makes it).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Whether a process is there (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The children of a process, as Linux lists them. */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

async function eventually(test: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return test();
}

describe.skipIf(!existsSync(`${ROOT}/dist/cli/main.js`) || process.platform !== 'linux')('npm start', () => {
  it.each([
    'SIGTERM',
    'SIGINT',
  ] as const)('stops the cluster when npm is sent %s, with one log line', async (signal) => {
    const npm = spawn('npm', ['start', '--', '--port', '0', '--agents', '1'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ended = new Promise<void>((resolve) => npm.once('close', () => resolve()));
    try {
      expect(await eventually(() => /clustersim: master at http:\/\/127\.0\.0\.1:\d+/.test(stdout)), stderr).toBe(true);
      const [cluster] = childrenOf(npm.pid!);
      expect(cluster).toBeDefined();
      expect(readFileSync(`/proc/${cluster}/cmdline`, 'utf8')).toContain('dist/cli/main.js');
      npm.kill(signal);
      await ended;
      expect(await eventually(() => !alive(cluster!))).toBe(true);
      expect(stderr.match(new RegExp(`"signal":"${signal}","msg":"stopping"`, 'g'))).toHaveLength(1);
    } finally {
      npm.kill('SIGKILL');
    }
  }, 60_000);
});
